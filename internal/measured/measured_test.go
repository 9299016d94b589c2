package measured

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		body string
		rows int // -1: an error
	}{
		"ok":        {"# where\na,b\n1,2\n# more\n3,4\n", 2},
		"header":    {"a,c\n1,2\n", -1},
		"no rows":   {"a,b\n", -1},
		"ragged":    {"a,b\n1,2,3\n", -1},
		"only note": {"# nothing\n", -1},
	} {
		p := filepath.Join(dir, name+".csv")
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := Read(p, "a,b")
		if c.rows < 0 {
			if err == nil {
				t.Errorf("%s: want an error", name)
			}
			continue
		}
		if err != nil || len(rows) != c.rows {
			t.Errorf("%s: %d rows, %v; want %d", name, len(rows), err, c.rows)
		}
	}
	if _, err := Read(filepath.Join(dir, "absent.csv"), "a,b"); err == nil {
		t.Error("absent file: want an error")
	}
}

// A .gz table reads as its contents, and Gunzip writes them beside.
func TestGzip(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.csv.gz")
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	if _, err := z.Write([]byte("# where\na,b\n1,2\n")); err != nil || z.Close() != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if rows, err := Read(p, "a,b"); err != nil || len(rows) != 1 || rows[0][1] != "2" {
		t.Errorf("gzipped table: %v, %v", rows, err)
	}
	out, err := Gunzip(p, t.TempDir())
	if err != nil || filepath.Base(out) != "t.csv" {
		t.Fatalf("Gunzip: %q, %v", out, err)
	}
	if rows, err := Read(out, "a,b"); err != nil || len(rows) != 1 {
		t.Errorf("gunzipped table: %v, %v", rows, err)
	}
	if _, err := Gunzip(filepath.Join(dir, "absent.gz"), dir); err == nil {
		t.Error("absent file: want an error")
	}
}
