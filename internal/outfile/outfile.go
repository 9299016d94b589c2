// Package outfile writes the files the command produces: whole files
// atomically, and additions to files that others also write.
//
// An output never destroys anything. A path that is a directory, a FIFO,
// a device or a socket, or that is the same file as an input of the run,
// is refused before anything is written: renaming over a FIFO or
// /dev/null would replace it with a regular file, and a trace written
// over the model it was made from loses the model. All the outputs of
// one run land together or not at all (Set), and files get the mode the
// umask allows, as files made with `>` do.
//
// "-" is an ordinary file name here: a command that writes to stdout
// for "-" must say so itself before it comes here.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Check says why path cannot be an output of a run that reads inputs
// (nil when it can). The error does not repeat path: the caller names
// the flag and the path. Inputs that do not exist (zoo:NAME, "") are
// skipped.
func Check(path string, inputs ...string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if lst, lerr := os.Lstat(path); lerr == nil && lst.Mode()&fs.ModeSymlink != 0 {
			// Renaming onto it would replace the link, not create what it
			// points to.
			return errors.New("is a symbolic link to a file that does not exist")
		}
		dir := filepath.Dir(path)
		if dst, err := os.Stat(dir); err != nil || !dst.IsDir() {
			return fmt.Errorf("folder %s does not exist", dir)
		}
		return nil
	case err != nil:
		return bare(err)
	case st.IsDir():
		return errors.New("is a directory; name a file to write")
	case !st.Mode().IsRegular():
		return fmt.Errorf("is a %s, not a regular file; it is left alone", kind(st.Mode()))
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
			return fmt.Errorf("is an input of this run (%s); it is not overwritten", in)
		}
	}
	return nil
}

// kind names a non-regular file's type for an error message.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO (named pipe)"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// bare drops the path an os error carries, since the caller adds it.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Set is the outputs of one run. Write puts each in a temporary file
// beside its destination; Commit renames them all into place; Abort (or
// any failure) removes every temporary file and leaves the destinations
// as they were. The zero Set is ready to use; defer Abort after making
// one, so that no failure path leaves a temporary file behind.
type Set struct {
	// Inputs are the files the run reads: none may be an output.
	Inputs []string
	files  []pending
}

type pending struct {
	path   string // as given, for messages
	target string // where it lands: path, or the file a link names
	tmp    string
}

// Write writes what write writes to a temporary file for path. On
// failure every temporary file of the set is removed, and the error
// names path.
func (s *Set) Write(path string, write func(io.Writer) error) error {
	if err := s.write(path, write); err != nil {
		s.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// WriteBytes is Write of data.
func (s *Set) WriteBytes(path string, data []byte) error {
	return s.Write(path, func(w io.Writer) error { _, err := w.Write(data); return err })
}

func (s *Set) write(path string, write func(io.Writer) error) error {
	if err := Check(path, s.Inputs...); err != nil {
		return err
	}
	target := path
	if lst, err := os.Lstat(path); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		// Write through the link, as `>` does: the link stays.
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return bare(err)
		}
	}
	for _, p := range s.files {
		if same(p.target, target) {
			return fmt.Errorf("is also the output %s of this run", p.path)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp*")
	if err != nil {
		return bare(err)
	}
	s.files = append(s.files, pending{path: path, target: target, tmp: tmp.Name()})
	bw := bufio.NewWriterSize(tmp, 1<<16)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	return err
}

// same reports whether two destinations are one file: by name, or, when
// both exist, by identity (a hard link, another spelling of the path).
func same(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == bb {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// Abort removes the temporary files not yet committed. It is safe to
// call after Commit, and more than once.
func (s *Set) Abort() {
	for _, p := range s.files {
		os.Remove(p.tmp)
	}
	s.files = nil
}

// Commit moves every output into place. Each destination is checked
// again first (a directory or FIFO may have appeared meanwhile). When a
// rename fails after others succeeded, those are undone: a file that
// existed is put back from a hard link made before the first rename (on
// a file system without hard links it cannot be, and the error says
// which files were replaced), one that did not is removed.
func (s *Set) Commit() error {
	defer s.Abort()
	mode := 0o666 &^ umask()
	for _, p := range s.files {
		if err := Check(p.target, s.Inputs...); err != nil {
			return fmt.Errorf("%s: %w", p.path, err)
		}
		if err := os.Chmod(p.tmp, mode); err != nil {
			return fmt.Errorf("%s: %w", p.path, bare(err))
		}
	}
	// One rename is atomic by itself; only several need a way back.
	backups := make([]string, len(s.files))
	existed := make([]bool, len(s.files))
	if len(s.files) > 1 {
		for i, p := range s.files {
			backups[i], existed[i] = backup(p.target)
		}
	}
	defer func() {
		for _, b := range backups {
			if b != "" {
				os.Remove(b)
			}
		}
	}()
	for i, p := range s.files {
		if err := rename(p.tmp, p.target); err != nil {
			lost := undo(s.files[:i], backups, existed)
			if lost != "" {
				return fmt.Errorf("%s: %v (and %s could not be restored)", p.path, bare(err), lost)
			}
			return fmt.Errorf("%s: %w", p.path, bare(err))
		}
	}
	s.files = nil
	return nil
}

// backup hard-links an existing target to a hidden name beside it and
// returns that name ("" when no link could be made) and whether the
// target existed.
func backup(target string) (string, bool) {
	if _, err := os.Lstat(target); err != nil {
		return "", false
	}
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".old*")
	if err != nil {
		return "", true
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	if err := os.Link(target, name); err != nil {
		return "", true
	}
	return name, true
}

// undo takes back the renames of done: each destination gets its old
// file back, or is removed when it had none. It returns the names of the
// destinations it could not restore.
func undo(done []pending, backups []string, existed []bool) string {
	var lost string
	for i, p := range done {
		var err error
		switch {
		case backups[i] != "":
			if err = os.Rename(backups[i], p.target); err == nil {
				backups[i] = ""
			}
		case existed[i]:
			err = errors.New("no copy of the old file")
		default:
			err = os.Remove(p.target)
		}
		if err != nil {
			if lost != "" {
				lost += ", "
			}
			lost += p.path
		}
	}
	return lost
}

// rename is os.Rename; tests make it fail part way through a Commit.
var rename = os.Rename

// umask is the process's file mode creation mask, read once: reading it
// means setting it, which must not race with files being created.
var umask = sync.OnceValue(readUmask)

// WriteAtomic writes data to path through a temporary file beside it, so
// a reader never sees half a file. It never creates folders: a typo in
// -o must be an error, not a new directory tree.
func WriteAtomic(path string, data []byte) error {
	var s Set
	defer s.Abort()
	if err := s.WriteBytes(path, data); err != nil {
		return err
	}
	return s.Commit()
}

// Append appends what write writes to path, creating it if need be: a
// file such as $GITHUB_STEP_SUMMARY gathers the output of several steps.
func Append(path string, write func(io.Writer) error) error {
	// 0666: the system applies the umask to a file it creates.
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
