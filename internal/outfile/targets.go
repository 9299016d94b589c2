package outfile

import (
	"fmt"
	"io"
	"path/filepath"
)

// Target is an output file a run writes, with the flag that names it.
// An empty Path is an output not asked for.
type Target struct{ Flag, Path string }

// Refuse is called before a run does any work: an output that is a
// directory, a FIFO, a device or a socket, an input of the run, or
// another output of it is an error naming the flag and the file, so
// nothing is computed for a write that would destroy something.
func Refuse(inputs []string, outs ...Target) error {
	for i, o := range outs {
		if o.Path == "" {
			continue
		}
		if err := Check(o.Path, inputs...); err != nil {
			return fmt.Errorf("%s %s: %v", o.Flag, o.Path, err)
		}
		for _, p := range outs[:i] {
			if p.Path != "" && sameName(p.Path, o.Path) {
				return fmt.Errorf("%s %s: is also the file of %s", o.Flag, o.Path, p.Flag)
			}
		}
	}
	return nil
}

// sameName reports whether two paths name the same file (cleaned,
// absolute).
func sameName(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// File is one output of WriteAll: what Write writes lands at Path. A
// File with no Path or no Write is skipped.
type File struct {
	Path  string
	Write func(io.Writer) error
}

// Bytes is the File holding data.
func Bytes(path string, data []byte) File {
	return File{Path: path, Write: func(w io.Writer) error { _, err := w.Write(data); return err }}
}

// WriteAll writes files as one Set that reads inputs: all of them land,
// or, when one fails, none does.
func WriteAll(inputs []string, files ...File) error {
	s := Set{Inputs: inputs}
	defer s.Abort()
	for _, f := range files {
		if f.Path == "" || f.Write == nil {
			continue
		}
		if err := s.Write(f.Path, f.Write); err != nil {
			return err
		}
	}
	return s.Commit()
}
