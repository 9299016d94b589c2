//go:build unix

package safefile

import (
	"os"
	"syscall"
)

// nonBlock makes the open of a named pipe return at once instead of
// waiting for a writer; the type check on the descriptor then refuses it.
const nonBlock = syscall.O_NONBLOCK

// clearNonBlock puts a regular file back to blocking reads: some file
// systems (FUSE, network ones) may answer a non-blocking read with EAGAIN.
func clearNonBlock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
