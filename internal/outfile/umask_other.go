//go:build !unix

package outfile

import "io/fs"

// readUmask is the usual Unix default where there is no umask: Chmod
// there only sets or clears the read-only flag anyway.
func readUmask() fs.FileMode { return 0o022 }
