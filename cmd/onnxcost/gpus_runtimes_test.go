package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

func TestGPUsRuntimes(t *testing.T) {
	code, out, errs := runCLI(t, "gpus", "runtimes")
	if code != 0 || !strings.HasPrefix(out, "NAME") || !strings.Contains(out, "pytorch-compile") {
		t.Fatalf("gpus runtimes: code %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCLI(t, "gpus", "runtimes", "--format", "json")
	var rs []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rs) != nil || len(rs) != len(hwdb.Runtimes()) {
		t.Fatalf("gpus runtimes --format json: code %d, %d profiles\n%s", code, len(rs), out)
	}
	bad := filepath.Join(t.TempDir(), "rt.yaml")
	if err := os.WriteFile(bad, []byte("- name: x\n  dispatch_us: -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "gpus", "runtimes", "--runtime-file", bad)
	if code != 2 || out != "" || !strings.Contains(errs, "rt.yaml:2: dispatch_us must be") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("bad runtime file: code %d stdout %q stderr %q", code, out, errs)
	}
}
