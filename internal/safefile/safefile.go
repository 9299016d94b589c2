// Package safefile opens the files a user names for reading. A path may
// name anything: a named pipe would block the open (and the process) until
// some writer came, a device such as /dev/zero never ends, and a regular
// file may be far larger than its kind ever is. So a file is opened only
// when it is a regular file, checked before the open and again on the open
// descriptor (the path may be swapped in between), the open itself never
// blocks, and a whole-file read stops at a bound chosen for the file's
// kind. Only the standard library is imported: ir, a leaf package, uses
// it too.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Bounds for the kinds of file onnxcost reads whole. Each is far above
// what a real file of the kind holds, and low enough that a wrong file
// fails at once instead of filling memory.
const (
	// SideFileLimit bounds YAML, JSON and CSV side files: GPU and
	// runtime spec files, budget files, price lists (the built-in GPU
	// database, the largest such file, is under 200 KB).
	SideFileLimit = 16 << 20
	// ReportLimit bounds a saved JSON report (a 112k-node graph's is
	// about 100 MB).
	ReportLimit = 1 << 30
)

// ErrNotRegular is the error, inside an *fs.PathError, for a path that
// names something other than a regular file.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError says what a path that is not a regular file names. It
// matches ErrNotRegular with errors.Is.
type NotRegularError struct{ Mode fs.FileMode }

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("not a regular file (%s)", Kind(e.Mode))
}

func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// TooLargeError is the error, inside an *fs.PathError, for a file over
// the bound a read was given.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("larger than %s, the limit for this kind of file", sizeText(e.Limit))
}

// Kind names the type of file mode m in messages.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a file"
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// CheckRegular returns a *NotRegularError unless fi is a regular file.
func CheckRegular(fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return &NotRegularError{Mode: fi.Mode().Type()}
}

// Stat is os.Stat that also refuses anything but a regular file, with an
// *fs.PathError holding a *NotRegularError.
func Stat(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := CheckRegular(fi); err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return fi, nil
}

// Open opens the regular file at path for reading and returns it with
// its FileInfo taken from the open descriptor. Anything else is refused
// without blocking.
func Open(path string) (*os.File, fs.FileInfo, error) {
	if _, err := Stat(path); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	return checkOpened(f, path)
}

// OpenIn is Open for name inside root: the lookup cannot leave root's
// folder (see os.Root).
func OpenIn(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	fi, err := root.Stat(name)
	if err != nil {
		return nil, nil, err
	}
	if err := CheckRegular(fi); err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f, err := root.OpenFile(name, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	return checkOpened(f, name)
}

// checkOpened refuses an open file that is not a regular one (the path
// changed since it was checked) and makes reads of a regular one block
// as usual.
func checkOpened(f *os.File, path string) (*os.File, fs.FileInfo, error) {
	fi, err := f.Stat()
	if err == nil {
		if err = CheckRegular(fi); err != nil {
			err = &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
	if err == nil {
		err = clearNonBlock(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadFile reads the regular file at path whole, refusing one of more
// than limit bytes with an *fs.PathError holding a *TooLargeError.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, fi, path, limit)
}

// ReadAll reads the rest of f, opened by Open with fi, up to limit bytes.
// The size is checked before reading, and the read stops one byte past
// limit, so a file that grows meanwhile is refused too.
func ReadAll(f *os.File, fi fs.FileInfo, path string, limit int64) ([]byte, error) {
	tooLarge := &fs.PathError{Op: "read", Path: path, Err: &TooLargeError{Limit: limit}}
	if fi.Size() > limit {
		return nil, tooLarge
	}
	data := make([]byte, 0, fi.Size()+1)
	for {
		if int64(len(data)) > limit {
			return nil, tooLarge
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):min(cap(data), int(limit)+1)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(data)) > limit {
		return nil, tooLarge
	}
	return data, nil
}

// Reason is err without the operation and path of an *fs.PathError, for
// a message that names the file its own way ("--prices FILE: ...").
func Reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
