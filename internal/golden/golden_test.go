package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records a failure instead of stopping the
// test, so that Check's failures can themselves be tested.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatal(args ...any)     { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Name() string          { return r.TB.Name() }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "out.golden")
	Check(t, path, []byte("a\nb\n"), true) // creates the folder and file
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\nb\n" {
		t.Fatalf("-update wrote %q, %v", b, err)
	}
	for _, c := range []struct {
		got  string
		fail bool
	}{
		{"a\nb\n", false},
		{"a\nc\n", true},    // a line differs
		{"a\nb\nc\n", true}, // an extra line
	} {
		r := &recorder{TB: t}
		Check(r, path, []byte(c.got), false)
		if r.failed != c.fail {
			t.Errorf("Check(%q) failed = %v, want %v", c.got, r.failed, c.fail)
		}
	}
	r := &recorder{TB: t}
	Check(r, filepath.Join(t.TempDir(), "missing"), nil, false)
	if !r.failed {
		t.Error("a missing golden file must fail")
	}
}
