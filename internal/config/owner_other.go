//go:build !unix

package config

import "io/fs"

// ownedByUser is true where file ownership is not a Unix user id: the
// search there stops only at the repository and file system roots.
func ownedByUser(fs.FileInfo) bool { return true }

// writableByAll is false where permission bits do not say who may write.
func writableByAll(fs.FileInfo) bool { return false }
