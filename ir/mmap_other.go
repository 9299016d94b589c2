//go:build !unix

package ir

import (
	"fmt"
	"io"
	"os"
)

// mapFile reads the whole file where memory mapping is not implemented.
func mapFile(path string) (data []byte, release func(), file *os.File, err error) {
	f, fi, err := openModel(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	if fi.Size() == 0 {
		return nil, nil, nil, fmt.Errorf("empty file: not an ONNX model")
	}
	if fi.Size() != int64(int(fi.Size())) {
		return nil, nil, nil, fmt.Errorf("file of %d bytes is too large to read", fi.Size())
	}
	data = make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, nil, err
	}
	return data, func() {}, nil, nil
}

// dropPages does nothing: without memory mapping there are no file pages
// to drop (mapFile returns no mapped file).
func dropPages([]byte) {}
