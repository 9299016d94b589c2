package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteAtomic: the file holds the new bytes with no temporary file
// left beside it, and a missing folder is an error, not created.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	for _, data := range []string{"first", "second"} {
		if err := WriteAtomic(p, []byte(data)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != data {
			t.Errorf("read %q, want %q", got, data)
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("%d entries in the folder, want only the file", len(es))
	}
	missing := filepath.Join(dir, "no", "out.json")
	if err := WriteAtomic(missing, nil); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); err == nil {
		t.Error("the missing folder was created")
	}
	for range 2 {
		if err := Append(p, func(w io.Writer) error { _, err := io.WriteString(w, "+"); return err }); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(p); string(got) != "second++" {
		t.Errorf("after Append: %q", got)
	}
}

// onlyFiles fails unless dir holds exactly the named entries: no
// temporary or backup file is left.
func onlyFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("folder holds %v, want %v", got, want)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheck: a directory, an input (by another name too) and a dangling
// link are refused; a new file in an existing folder and an ordinary
// file are not.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.onnx")
	write(t, model, "model")
	for _, c := range []struct {
		path, want string
	}{
		{dir, "is a directory"},
		{model, "is an input"},
		{filepath.Join(dir, ".", "m.onnx"), "is an input"},
		{filepath.Join(dir, "no", "x"), "does not exist"},
		{filepath.Join(dir, "new.json"), ""},
	} {
		err := Check(c.path, "", "zoo:resnet50", model)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Check(%s) = %v, want %q", c.path, err, c.want)
		}
	}
	if err := os.Link(model, filepath.Join(dir, "hard.onnx")); err == nil {
		if err := Check(filepath.Join(dir, "hard.onnx"), model); err == nil {
			t.Error("a hard link to the input was accepted")
		}
	}
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "dangling")); err == nil {
		if err := Check(filepath.Join(dir, "dangling")); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("dangling link: %v", err)
		}
	}
}

// TestSetAllOrNone: when the second output fails to be written, the
// first does not land either, an existing file keeps its bytes, and no
// temporary file stays.
func TestSetAllOrNone(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	write(t, a, "old a")
	var s Set
	defer s.Abort()
	if err := s.WriteBytes(a, []byte("new a")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := s.Write(b, func(w io.Writer) error { io.WriteString(w, "half"); return boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), b) {
		t.Fatalf("second write: %v", err)
	}
	if err := s.Commit(); err != nil {
		t.Fatalf("commit of an aborted set: %v", err)
	}
	if got, _ := os.ReadFile(a); string(got) != "old a" {
		t.Errorf("a.json = %q, want the old bytes", got)
	}
	onlyFiles(t, dir, "a.json")

	// The same when the destination turns into a directory before Commit.
	var s2 Set
	defer s2.Abort()
	if err := s2.WriteBytes(a, []byte("new a")); err != nil {
		t.Fatal(err)
	}
	if err := s2.WriteBytes(b, []byte("new b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s2.Commit(); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("commit onto a new directory: %v", err)
	}
	if got, _ := os.ReadFile(a); string(got) != "old a" {
		t.Errorf("a.json = %q, want the old bytes", got)
	}
	onlyFiles(t, dir, "a.json", "b.json")
}

// TestSetRenameFails: a rename failing after another succeeded puts the
// replaced file back and removes the one that was new.
func TestSetRenameFails(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	write(t, a, "old a")
	var s Set
	defer s.Abort()
	for _, p := range []string{a, b, c} {
		if err := s.WriteBytes(p, []byte("new")); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	rename = func(from, to string) error {
		if n++; n == 3 {
			return errors.New("disk full")
		}
		return os.Rename(from, to)
	}
	defer func() { rename = os.Rename }()
	if err := s.Commit(); err == nil || !strings.Contains(err.Error(), "disk full") || strings.Contains(err.Error(), "restored") {
		t.Errorf("commit: %v", err)
	}
	if got, _ := os.ReadFile(a); string(got) != "old a" {
		t.Errorf("a = %q, want the old bytes back", got)
	}
	onlyFiles(t, dir, "a")
}

// TestSetRefusals: the same destination twice, and an input, are
// refused with the path named; nothing is written.
func TestSetRefusals(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.onnx"), filepath.Join(dir, "out.json")
	write(t, in, "model")
	s := Set{Inputs: []string{in}}
	defer s.Abort()
	if err := s.WriteBytes(in, nil); err == nil || !strings.Contains(err.Error(), in+": is an input") {
		t.Errorf("input as output: %v", err)
	}
	if err := s.WriteBytes(out, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteBytes(filepath.Join(dir, "x", "..", "out.json"), nil); err == nil || !strings.Contains(err.Error(), "also the output") {
		t.Errorf("same output twice: %v", err)
	}
	onlyFiles(t, dir, "in.onnx")
}

// TestWriteThroughLink: an output that is a symbolic link is written
// where the link points, and the link stays a link.
func TestWriteThroughLink(t *testing.T) {
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real.json"), filepath.Join(dir, "link.json")
	write(t, real, "old")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := WriteAtomic(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if got, _ := os.ReadFile(real); string(got) != "new" {
		t.Errorf("real.json = %q", got)
	}
	onlyFiles(t, dir, "link.json", "real.json")
}
