//go:build !unix

package ir

import (
	"fmt"
	"os"
)

// mapFile reads the whole file where memory mapping is not implemented.
func mapFile(path string) (data []byte, release func(), mapped bool, err error) {
	if _, err := statModel(path); err != nil {
		return nil, nil, false, err
	}
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, false, err
	}
	if len(data) == 0 {
		return nil, nil, false, fmt.Errorf("empty file: not an ONNX model")
	}
	return data, func() {}, false, nil
}

// dropPages does nothing: without memory mapping there are no file pages
// to drop (mapFile reports the file as not mapped).
func dropPages([]byte) {}
