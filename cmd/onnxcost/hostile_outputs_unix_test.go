//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputOntoSpecialFiles: a FIFO and /dev/null named as an output are
// refused and stay what they are (renaming over them would replace them
// with a regular file).
func TestOutputOntoSpecialFiles(t *testing.T) {
	dir, model, budget := hostileDir(t)
	for _, h := range hostileRuns {
		ext := h.ext
		if ext == "" {
			ext = "json"
		}
		fifo := filepath.Join(dir, "fifo."+ext)
		if err := syscall.Mkfifo(fifo, 0o644); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
		refused(t, h.name, fifo, "FIFO", h.args(model, budget, fifo))
		if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("%s: %s is no longer a FIFO (%v)", h.name, fifo, err)
		}
		if h.ext == "" {
			refused(t, h.name, os.DevNull, "device", h.args(model, budget, os.DevNull))
		}
		noTemps(t, dir)
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("%s is no longer a device: %v", os.DevNull, err)
	}
}

// TestSecondOutputFails: when the second output of a run cannot be
// written (its temporary file's name is too long), the first does not
// land either: an existing file keeps its bytes, a new one is not made,
// and no temporary file stays.
func TestSecondOutputFails(t *testing.T) {
	dir, model, budget := hostileDir(t)
	long := filepath.Join(dir, strings.Repeat("x", 245)+".json")
	trace := filepath.Join(dir, "trace.json")
	if err := os.WriteFile(trace, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "report", model, "--gpu", "T4", "--trace", trace, "--pprof", long)
	if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, long) {
		t.Errorf("report: exit %d, stderr %q", code, errs)
	}
	if got, _ := os.ReadFile(trace); string(got) != "old" {
		t.Errorf("trace.json = %.20q, want the old bytes", got)
	}
	js := filepath.Join(dir, "check.json")
	code, _, errs = runCLI(t, "check", "-c", budget, "--out-json", js, "--out-junit", long)
	if code != 2 || !strings.Contains(errs, long) {
		t.Errorf("check: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(js); err == nil {
		t.Error("check.json was written though --out-junit failed")
	}
	noTemps(t, dir)
}

// umaskChildEnv makes the test binary, run again by TestOutputUmask, write
// the outputs under the umask it inherited: the mask is read once per
// process, so it must be set before the process starts.
const umaskChildEnv = "ONNXCOST_TEST_UMASK_DIR"

// TestOutputUmask: under umask 077 every output is 0600.
func TestOutputUmask(t *testing.T) {
	dir, _, _ := hostileDir(t)
	old := syscall.Umask(0o077)
	cmd := exec.Command(os.Args[0], "-test.run=^TestOutputUmaskChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), umaskChildEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	syscall.Umask(old)
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, name := range []string{"trace.json", "prof.pb.gz", "r.svg", "check.json", "check.md", "o.onnx", "z.onnx"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 0600 under umask 077", name, err)
		}
	}
}

// TestOutputUmaskChild writes the outputs TestOutputUmask checks; it
// does nothing unless run by it.
func TestOutputUmaskChild(t *testing.T) {
	dir := os.Getenv(umaskChildEnv)
	if dir == "" {
		t.Skip("run by TestOutputUmask")
	}
	m, b := filepath.Join(dir, "m.onnx"), filepath.Join(dir, "budget.yaml")
	for _, args := range [][]string{
		{"report", m, "--gpu", "T4", "--trace", filepath.Join(dir, "trace.json"), "--pprof", filepath.Join(dir, "prof.pb.gz")},
		{"roofline", m, "--gpu", "T4", "-o", filepath.Join(dir, "r.svg")},
		{"optimize", m, "-o", filepath.Join(dir, "o.onnx")},
		{"zoo", "alexnet", "-o", filepath.Join(dir, "z.onnx")},
		{"check", "-c", b, "--out-json", filepath.Join(dir, "check.json"), "--out-markdown", filepath.Join(dir, "check.md")},
	} {
		if code, _, errs := runCLI(t, args...); code != 0 {
			t.Errorf("%s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
	}
}
