//go:build unix

package ir

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// mapFile maps path read-only into memory. Pages are loaded only when
// touched, so decoding a model touches its structure and small constants
// but not its weights. release unmaps the file, for when nothing points
// into the mapping. file is the mapped file, still open (the caller
// closes it), so that bytes read with pread are the mapping's; it is nil
// when the file was read into memory instead.
func mapFile(path string) (data []byte, release func(), file *os.File, err error) {
	f, fi, err := openModel(path)
	if err != nil {
		return nil, nil, nil, err
	}
	if fi.Size() == 0 {
		f.Close()
		return nil, nil, nil, fmt.Errorf("empty file: not an ONNX model")
	}
	if fi.Size() != int64(int(fi.Size())) {
		f.Close()
		return nil, nil, nil, fmt.Errorf("file of %d bytes is too large to map", fi.Size())
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		// Some file systems cannot map: read the file instead, from the
		// descriptor already checked (the path may name another file now).
		defer f.Close()
		data = make([]byte, fi.Size())
		if _, err := io.ReadFull(f, data); err != nil {
			return nil, nil, nil, err
		}
		return data, func() {}, nil, nil
	}
	forget := remember(path, data)
	return data, func() { forget(); syscall.Munmap(data) }, f, nil
}
