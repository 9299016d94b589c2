//go:build unix

package config

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByUser reports whether the current user owns fi's file.
func ownedByUser(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// writableByAll reports whether every user may change fi's file (or, for
// a folder, add files to it; a sticky bit only stops them deleting
// others' files).
func writableByAll(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o002 != 0 }
