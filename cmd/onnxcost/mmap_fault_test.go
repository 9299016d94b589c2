//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestModelTruncatedWhileRead: a model file truncated while it is read
// (after it is mapped, before it is decoded) is one line naming the file
// and exit 2, not a fatal bus error with every goroutine's trace.
func TestModelTruncatedWhileRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.onnx")
	copyFile(t, fixture(t, "bert_base.onnx"), path)
	ir.TestHookAfterMap = func(p string) {
		if err := os.Truncate(p, 0); err != nil {
			t.Error(err)
		}
	}
	defer func() { ir.TestHookAfterMap = nil }()
	code, _, errs := runCLI(t, "shapes", path)
	if code != 2 {
		t.Errorf("exit %d, want 2; stderr %q", code, errs)
	}
	wantOneLine(t, "truncated model", errs)
	if !strings.Contains(errs, path) || !strings.Contains(errs, "changed while being read") {
		t.Errorf("stderr %q: want the path and what happened", errs)
	}
}
