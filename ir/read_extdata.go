package ir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/onnxcost/onnxcost/internal/safefile"
)

// External data rules (the hostile-input cases of a model folder):
//   - a location is a relative path inside the model's folder: absolute
//     paths, ".." components, backslashes, NUL bytes and over-long names
//     are rejected before any file system access;
//   - a symlink may point within the folder but never out of it;
//   - files are opened through os.Root, which confines every lookup to the
//     folder at the kernel level, and must be regular files (checked
//     before the open, which never blocks, and again on the descriptor);
//   - offset and length are decimal, and offset+length must lie within the
//     file (checked without overflow); length must equal dims × dtype size;
//   - an absent file is not an error: the tensor is marked Missing
//     (graph-only models are normal);
//   - weight bytes are never read, except small tensors that shape
//     inference needs.
// Not enforced: the hardlink count (a hardlink cannot lead out of the
// folder's tree by path, and content deduplicating stores use them).

const (
	maxExternalFiles   = 4096 // distinct data files per model
	maxExternalPathLen = 1024 // bytes in one location
)

// extFiles opens each external data file at most once per Read.
type extFiles struct {
	mu      sync.Mutex // the reader's node workers share one set of files
	dir     string
	root    *os.Root
	rootErr error
	files   map[string]*extFile
}

type extFile struct {
	f       *os.File
	size    int64
	missing bool
}

func newExtFiles(dir string) *extFiles { return &extFiles{dir: dir, files: map[string]*extFile{}} }

func (e *extFiles) close() {
	for _, f := range e.files {
		if f.f != nil {
			f.f.Close()
		}
	}
	if e.root != nil {
		e.root.Close()
	}
}

func dirOf(path string) string { return filepath.Dir(path) }

// checkLocation applies the lexical rules to an external data location.
func checkLocation(loc string) error {
	switch {
	case loc == "":
		return fmt.Errorf("external data has no location")
	case len(loc) > maxExternalPathLen:
		return fmt.Errorf("external data path of %d bytes is longer than %d", len(loc), maxExternalPathLen)
	case !utf8.ValidString(loc) || strings.ContainsRune(loc, 0):
		return fmt.Errorf("external data path %q is not valid UTF-8 text", loc)
	case filepath.IsAbs(loc) || strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, `\`) || (len(loc) >= 2 && loc[1] == ':'):
		return fmt.Errorf("external data path %q is absolute; it must be relative to the model folder", loc)
	case strings.ContainsRune(loc, '\\'):
		return fmt.Errorf("external data path %q contains a backslash", loc)
	}
	for _, part := range strings.Split(loc, "/") {
		if part == ".." {
			return fmt.Errorf("external data path %q escapes the model folder", loc)
		}
	}
	if !filepath.IsLocal(loc) {
		return fmt.Errorf("external data path %q is not a plain relative path", loc)
	}
	return nil
}

// open returns the data file at loc, opened once, or a Missing record.
func (e *extFiles) open(loc string) (*extFile, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f, ok := e.files[loc]; ok {
		return f, nil
	}
	if len(e.files) >= maxExternalFiles {
		return nil, fmt.Errorf("model names more than %d external data files (the limit)", maxExternalFiles)
	}
	f, err := e.openNew(loc)
	if err != nil {
		return nil, err
	}
	e.files[loc] = f
	return f, nil
}

func (e *extFiles) openNew(loc string) (*extFile, error) {
	if e.dir == "" {
		// Bytes without a folder: never resolve against the working dir.
		return &extFile{missing: true}, nil
	}
	if e.root == nil && e.rootErr == nil {
		e.root, e.rootErr = os.OpenRoot(e.dir)
	}
	if e.rootErr != nil {
		return nil, fmt.Errorf("model folder: %v", e.rootErr)
	}
	// Containment by path first, for a clear message on symlinks that
	// lead out; os.Root then enforces it race-free on open.
	if err := e.checkInside(loc); err != nil {
		return nil, err
	}
	// A named pipe here would block a plain open until a writer came,
	// and with it every command and every `serve` request: the type is
	// checked first and the open does not wait.
	f, fi, err := safefile.OpenIn(e.root, loc)
	if errors.Is(err, fs.ErrNotExist) {
		return &extFile{missing: true}, nil
	}
	if errors.Is(err, safefile.ErrNotRegular) {
		return nil, fmt.Errorf("external data %q is %v", loc, errors.Unwrap(err))
	}
	if err != nil {
		if strings.Contains(err.Error(), "escapes") {
			return nil, fmt.Errorf("external data path %q escapes the model folder", loc)
		}
		return nil, fmt.Errorf("external data %q: %w", loc, err)
	}
	return &extFile{f: f, size: fi.Size()}, nil
}

// checkInside resolves symlinks along dir/loc and rejects a path whose
// target lies outside dir. A path that does not exist passes (Missing).
func (e *extFiles) checkInside(loc string) error {
	base, err := filepath.EvalSymlinks(e.dir)
	if err != nil {
		return fmt.Errorf("model folder: %w", err)
	}
	full, err := filepath.EvalSymlinks(filepath.Join(e.dir, loc))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("external data %q: %w", loc, err)
	}
	rel, err := filepath.Rel(base, full)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return fmt.Errorf("external data path %q escapes the model folder (a symlink leads to %s)", loc, full)
	}
	return nil
}

// parseExtNumber parses an offset or length: decimal digits only.
func parseExtNumber(key, s string) (int64, error) {
	v, err := strconv.ParseUint(s, 10, 63)
	if err != nil || s == "" || s[0] == '+' {
		return 0, fmt.Errorf("external data %s %q is not a non-negative decimal integer", key, s)
	}
	return int64(v), nil
}

// external resolves a tensor stored in an external file.
func (r *reader) external(p *tensorParts, n, small int64) error {
	t := p.t
	var loc string
	var offset, length int64 = 0, -1
	seen := map[string]bool{}
	for _, kv := range p.external {
		if seen[kv.Key] && (kv.Key == "location" || kv.Key == "offset" || kv.Key == "length") {
			return fmt.Errorf("external data key %q given twice", kv.Key)
		}
		seen[kv.Key] = true
		var err error
		switch kv.Key {
		case "location":
			loc = kv.Value
		case "offset":
			offset, err = parseExtNumber("offset", kv.Value)
		case "length":
			length, err = parseExtNumber("length", kv.Value)
		}
		// checksum, basepath and unknown keys are ignored: the reader
		// never acts on them.
		if err != nil {
			return err
		}
	}
	if err := checkLocation(loc); err != nil {
		return err
	}
	want := t.DType.ByteSize(n)
	fixed := t.DType.Bits() > 0
	if length >= 0 && fixed && length != want {
		return fmt.Errorf("external data length %d, dims %v of %s need %d bytes", length, t.Dims, t.DType, want)
	}
	f, err := r.ext.open(loc)
	if err != nil {
		return err
	}
	if f.missing {
		if length < 0 {
			length = want
		}
		t.Loc = DataLocation{File: loc, Offset: offset, Length: length, Missing: true}
		return nil
	}
	if offset > f.size {
		return fmt.Errorf("external data offset %d is past the end of %q (%d bytes)", offset, loc, f.size)
	}
	if length < 0 {
		length = f.size - offset
		if fixed && length < want {
			return fmt.Errorf("external data %q holds %d bytes from offset %d, dims %v of %s need %d", loc, length, offset, t.Dims, t.DType, want)
		}
		if fixed {
			length = want
		}
	}
	if length > f.size-offset {
		return fmt.Errorf("external data range [%d, %d+%d) is past the end of %q (%d bytes)", offset, offset, length, loc, f.size)
	}
	t.Loc = DataLocation{File: loc, Offset: offset, Length: length}
	if n > small || !fixed {
		return nil
	}
	buf := make([]byte, length) // length == want ≤ small × 16 bytes
	if _, err := f.f.ReadAt(buf, offset); err != nil {
		return fmt.Errorf("external data %q: %w", loc, err)
	}
	return decodeRaw(t, buf, n)
}
