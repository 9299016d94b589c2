//go:build !unix

package safefile

import "os"

// nonBlock is zero where opens do not block on special files the way a
// Unix named pipe does; the type checks still refuse them.
const nonBlock = 0

func clearNonBlock(*os.File) error { return nil }
