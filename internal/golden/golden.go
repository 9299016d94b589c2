// Package golden compares test output with a golden file under testdata/
// and rewrites the file when the test runs with -update. Each test package
// keeps its own -update flag (a flag registered here would clash with
// theirs) and passes its value in.
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check fails t unless got equals the contents of the file at path. With
// update it writes got to path first, creating the folder, so the check
// passes and the new file can be reviewed in the diff.
func Check(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if gl[i] != wl[i] {
			t.Fatalf("%s differs at line %d:\ngot:  %.300s\nwant: %.300s\n(run %s with -update if the change is intended)",
				path, i+1, gl[i], wl[i], t.Name())
		}
	}
	t.Fatalf("%s differs in length: got %d lines, want %d (run %s with -update if the change is intended)",
		path, len(gl), len(wl), t.Name())
}
