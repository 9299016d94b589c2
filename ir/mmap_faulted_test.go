//go:build linux

package ir

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"unsafe"
)

// TestFaultedFileNamesTheMapping: a fault in a mapping ReadFile made,
// after the read returned (names still point into it), is recognised and
// named, so a command can report the file instead of dying with SIGBUS;
// once released, the range is forgotten.
func TestFaultedFileNamesTheMapping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.bin")
	if err := os.WriteFile(path, make([]byte, 3*os.Getpagesize()), 0o644); err != nil {
		t.Fatal(err)
	}
	data, release, f, err := mapFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	got, ok := func() (p string, ok bool) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { p, ok = FaultedFile(recover()) }()
		faultSink = data[len(data)-1] // past the new end: SIGBUS, as a panic here
		return "", false
	}()
	if !ok || got != path {
		t.Fatalf("FaultedFile = %q, %v; want %q", got, ok, path)
	}
	release()
	if _, ok := FaultedFile(nil); ok {
		t.Error("FaultedFile(nil) reported a file")
	}
	mapped.Lock()
	_, kept := mapped.files[unsafe.SliceData(data)]
	mapped.Unlock()
	if kept {
		t.Error("the mapping is still remembered after release")
	}
}

// faultSink keeps the test's read of a lost page from being optimised away.
var faultSink byte
