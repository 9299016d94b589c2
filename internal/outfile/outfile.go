// Package outfile writes the files the command produces: whole files
// atomically, and additions to files that others also write.
package outfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteAtomic writes to a temporary file beside path and renames it, so
// a reader never sees half a file. It never creates folders: a typo in
// -o must be an error, not a new directory tree.
func WriteAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("folder %s does not exist", dir)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Chmod(name, 0o644); err != nil {
		os.Remove(name)
		return err
	}
	return os.Rename(name, path)
}

// Append appends what write writes to path, creating it if need be: a
// file such as $GITHUB_STEP_SUMMARY gathers the output of several steps.
func Append(path string, write func(io.Writer) error) error {
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
