//go:build unix

package ir

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps path read-only into memory. Pages are loaded only when
// touched, so decoding a model touches its structure and small constants
// but not its weights. release unmaps the file; the model must keep no
// slice of the mapping (the reader copies every string and value it keeps).
func mapFile(path string) (data []byte, release func(), err error) {
	fi, err := statModel(path)
	if err != nil {
		return nil, nil, err
	}
	if fi.Size() == 0 {
		return nil, nil, fmt.Errorf("empty file: not an ONNX model")
	}
	if fi.Size() != int64(int(fi.Size())) {
		return nil, nil, fmt.Errorf("file of %d bytes is too large to map", fi.Size())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err = syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		// Some file systems cannot map: read the file instead.
		data, err = os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		return data, func() {}, nil
	}
	return data, func() { syscall.Munmap(data) }, nil
}
