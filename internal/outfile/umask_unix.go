//go:build unix

package outfile

import (
	"io/fs"
	"syscall"
)

// readUmask reads the mask the only way Unix offers, by setting it, and
// puts it straight back.
func readUmask() fs.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m) & fs.ModePerm
}
