//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onnxcost/onnxcost/internal/config"
)

// refuseFileRun runs the command in-process, fails the test if it takes more
// than 5 s (each file here used to block an open or a read forever), and
// checks the refusal: exit 2, nothing on stdout, one line on stderr naming
// the file.
func refuseFileRun(t *testing.T, file, want string, args ...string) {
	t.Helper()
	type result struct {
		code      int
		out, errs string
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		code, out, errs := runCLI(t, args...)
		done <- result{code, out, errs}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("onnxcost %s: still running after 5 s", strings.Join(args, " "))
	}
	line := strings.TrimSpace(r.errs)
	if r.code != 2 || r.out != "" || strings.Contains(line, "\n") || !strings.Contains(line, file) || !strings.Contains(line, want) {
		t.Errorf("onnxcost %s: exit %d in %v, stdout %q, stderr %q; want exit 2, no output, one line naming %s with %q",
			strings.Join(args, " "), r.code, time.Since(start).Round(time.Millisecond), r.out, r.errs, file, want)
	}
}

func makeFIFO(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// TestHostileFIFOs: a named pipe in every role of a file onnxcost reads
// is refused at once.
func TestHostileFIFOs(t *testing.T) {
	t.Setenv(config.GPUEnv, "")
	m := fixture(t, "alexnet.onnx")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	makeFIFO(t, fifo)

	// External data: the model's ext.bin is a named pipe beside it.
	ext := filepath.Join(dir, "ext")
	if err := os.Mkdir(ext, 0o755); err != nil {
		t.Fatal(err)
	}
	extModel := filepath.Join(ext, "external.onnx")
	copyFile(t, filepath.Join(repoRoot, "ir", "testdata", "roundtrip", "external.onnx"), extModel)
	makeFIFO(t, filepath.Join(ext, "ext.bin"))

	okBudget := filepath.Join(dir, "budget.yaml")
	if err := os.WriteFile(okBudget, []byte("version: 1\ndefaults:\n  gpu: T4\n  batch: 1\nmodels:\n  - path: "+m+"\n    budgets:\n      time: 1 s\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	const notRegular = "not a regular file (a named pipe)"
	cases := []struct {
		file string
		args []string
	}{
		{fifo, []string{"report", fifo, "--gpu", "T4"}},
		{fifo, []string{"shapes", fifo}},
		{fifo, []string{"diff", fifo, m, "--gpu", "T4"}},
		{fifo, []string{"diff", m, fifo, "--gpu", "T4"}},
		{fifo, []string{"graph", fifo, "--gpu", "T4"}},
		{"ext.bin", []string{"report", extModel, "--gpu", "T4"}},
		{"ext.bin", []string{"shapes", extModel}},
		{"ext.bin", []string{"serve", "--addr", "127.0.0.1:0", extModel}},
		{fifo, []string{"report", m, "--gpu", "T4", "--gpu-file", fifo}},
		{fifo, []string{"gpus", "--gpu-file", fifo}},
		{fifo, []string{"report", m, "--gpu", "T4", "--runtime-file", fifo}},
		{fifo, []string{"check", "-c", fifo}},
		{fifo, []string{"check", "-c", okBudget, "--base-report", fifo}},
		{fifo, []string{"gpus", "compare", m, "--gpu", "T4", "--prices", fifo}},
	}
	for _, c := range cases {
		refuseFileRun(t, c.file, notRegular, c.args...)
	}

	// The .onnxcost.yaml the --gpu default is searched in.
	cwd := filepath.Join(dir, "work")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	budget := filepath.Join(cwd, config.BudgetFileName)
	makeFIFO(t, budget)
	t.Chdir(cwd)
	refuseFileRun(t, budget, notRegular, "report", m)
	refuseFileRun(t, config.BudgetFileName, notRegular, "check")
}

// TestHostileSideFileSizes: /dev/zero (never ends) and a regular file over
// the 16 MiB bound, in every role of a YAML, JSON or CSV side file, are
// refused at once, before any of it is read.
func TestHostileSideFileSizes(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	t.Setenv(config.GPUEnv, "")
	m := fixture(t, "alexnet.onnx")
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size alone must refuse it.
	if err := f.Truncate(16<<20 + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()

	for _, c := range []struct{ file, want string }{
		{"/dev/zero", "not a regular file (a character device)"},
		{big, "larger than 16 MiB"},
	} {
		refuseFileRun(t, c.file, c.want, "report", m, "--gpu", "T4", "--gpu-file", c.file)
		refuseFileRun(t, c.file, c.want, "report", m, "--gpu", "T4", "--runtime-file", c.file)
		refuseFileRun(t, c.file, c.want, "check", "-c", c.file)
		refuseFileRun(t, c.file, c.want, "gpus", "compare", m, "--gpu", "T4", "--prices", c.file)
	}

	// A found .onnxcost.yaml: a symbolic link to /dev/zero, then an
	// oversized file.
	cwd := filepath.Join(dir, "work")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	budget := filepath.Join(cwd, config.BudgetFileName)
	if err := os.Symlink("/dev/zero", budget); err != nil {
		t.Fatal(err)
	}
	t.Chdir(cwd)
	refuseFileRun(t, budget, "not a regular file (a character device)", "report", m)
	if err := os.Remove(budget); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(big, budget); err != nil {
		t.Fatal(err)
	}
	refuseFileRun(t, budget, "larger than 16 MiB", "report", m)
}

// TestPlantedBudgetFile: a .onnxcost.yaml in a world-writable folder (as
// one planted in the system temp folder) does not choose the GPU of a
// command run three folders below it, nor does one above a repository's
// root.
func TestPlantedBudgetFile(t *testing.T) {
	t.Setenv(config.GPUEnv, "")
	m := fixture(t, "alexnet.onnx")
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(shared, config.BudgetFileName)
	if err := os.WriteFile(planted, []byte("defaults:\n  gpu: T4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(shared, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	// Owned by the user and not shared: the file is found.
	code, out, errs := runCLI(t, "report", m)
	if code != 0 || !strings.Contains(firstLine(out), "GPU T4 (from "+planted+")") {
		t.Fatalf("own folder: exit %d, header %q, stderr %q", code, firstLine(out), errs)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "report", m)
	if code != 0 || !strings.Contains(firstLine(out), "no GPU (counts only)") {
		t.Errorf("world-writable folder: exit %d, header %q, stderr %q (want the planted file ignored)", code, firstLine(out), errs)
	}
	if err := os.Chmod(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(shared, "a", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "report", m)
	if code != 0 || !strings.Contains(firstLine(out), "no GPU (counts only)") {
		t.Errorf("above the repository root: exit %d, header %q, stderr %q (want the file above ignored)", code, firstLine(out), errs)
	}
}
