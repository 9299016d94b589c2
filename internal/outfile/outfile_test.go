package outfile

import (
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
