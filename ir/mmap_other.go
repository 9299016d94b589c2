//go:build !unix

package ir

import (
	"fmt"
	"os"
)

// mapFile reads the whole file where memory mapping is not implemented.
func mapFile(path string) (data []byte, release func(), file *os.File, err error) {
	if _, err := statModel(path); err != nil {
		return nil, nil, nil, err
	}
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(data) == 0 {
		return nil, nil, nil, fmt.Errorf("empty file: not an ONNX model")
	}
	return data, func() {}, nil, nil
}

// dropPages does nothing: without memory mapping there are no file pages
// to drop (mapFile returns no mapped file).
func dropPages([]byte) {}
