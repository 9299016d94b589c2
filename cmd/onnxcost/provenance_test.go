package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateNamesTheDevice: calibrate reads the device a measurements
// table or a Kineto trace names, records it and the driver in the
// calibration's source, and warns, once and in one line, when the device
// is plainly not the --gpu being calibrated (our H200's trace and table
// given to an H100: the same 132 SMs, 139.8 GiB against 79.1); the right
// GPU gets no warning, and the calibration is written either way.
func TestCalibrateNamesTheDevice(t *testing.T) {
	dir := t.TempDir()
	m, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "models", "alexnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(dir, "runs.csv")
	body := "# our H200's runs\n# device: NVIDIA H200\n# sms: 132\n# memory_gib: 139.8\n# driver: 580.159.04\n" +
		"# software: PyTorch 2.11.0+cu130, CUDA 13.0, cuDNN 9.19.0\n" +
		"model,ms,batch,dtype,runtime\n" + m + ",0.9,1,fp16,graph\n" + m + ",1.6,8,fp16,graph\n"
	if err := os.WriteFile(table, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(repoRoot, "calib", "profile", "testdata", "kineto_h200", "bert_base_fp32_b1.json.gz")
	bert := filepath.Join(repoRoot, "testdata", "models", "bert_base.onnx")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"table", []string{"--measurements", table}},
		{"trace", []string{"--profile", trace, bert, "--dtype", "fp32", "--batch", "1", "--runtime", "graph", "--top", "1"}},
	} {
		for _, gpu := range []string{"H100-SXM5-80GB", "H200-SXM-141GB"} {
			cal := filepath.Join(dir, c.name+gpu+".yaml")
			args := append([]string{"calibrate", "--gpu", gpu, "-o", cal, "--date", "2026-12-05"}, c.args...)
			code, _, errs := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("%s on %s: exit %d: %s", c.name, gpu, code, errs)
			}
			warned := strings.Contains(errs, "ran on NVIDIA H200 (132 SMs, 139.8 GiB), not on H100-SXM5-80GB (139.8 GiB against 79.1)")
			if warned != (gpu == "H100-SXM5-80GB") || strings.Count(errs, "warning:") > 1 {
				t.Errorf("%s on %s: stderr %q", c.name, gpu, errs)
			}
			b, err := os.ReadFile(cal)
			if err != nil {
				t.Fatal(err)
			}
			driver := map[string]string{"table": "580.159.04", "trace": "CUDA 13.0 driver API"}[c.name]
			// What ran the calls: the table's runtime column beside its
			// software line; a Kineto trace's own CUDA runtime.
			runtime := map[string]string{"table": "graph (PyTorch 2.11.0+cu130, CUDA 13.0, cuDNN 9.19.0)", "trace": "PyTorch (Kineto trace, CUDA runtime 13.0)"}[c.name]
			// A report priced with it says where its rows were measured.
			var rep struct {
				Calibration string `json:"calibration"`
			}
			runJSON(t, &rep, "report", m, "--gpu", gpu, "--format", "json", "--calibration", cal)
			if !strings.Contains(rep.Calibration, "(2026-12-05) measured on NVIDIA H200 (132 SMs, 139.8 GiB) under "+runtime) {
				t.Errorf("%s on %s: the report's calibration reads %q", c.name, gpu, rep.Calibration)
			}
			for _, want := range []string{`device: "NVIDIA H200 (132 SMs, 139.8 GiB)"`, `driver: "` + driver + `"`, `runtime: "` + runtime + `"`} {
				if !strings.Contains(string(b), want) {
					t.Errorf("%s on %s: the calibration has no %s", c.name, gpu, want)
				}
			}
			// The text header says the times are the calibration's.
			_, out, _ := runCLI(t, "report", m, "--gpu", gpu, "--calibration", cal, "--top", "1")
			if first, _, _ := strings.Cut(out, "\n"); !strings.HasSuffix(first, " · calibrated by "+cal) {
				t.Errorf("%s on %s: the header %q does not name the calibration", c.name, gpu, first)
			}
		}
	}
}

// TestCalibrateBadProvenanceLine: a provenance line that is not its kind
// is named, line and all, in one line with exit code 2, before any row is
// priced (a model that does not exist is never read), and no calibration
// is written.
func TestCalibrateBadProvenanceLine(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "runs.csv")
	body := "# device: NVIDIA H200\n# sms: many\nmodel,ms\nnone.onnx,0.9\n"
	if err := os.WriteFile(table, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cal := filepath.Join(dir, "cal.yaml")
	code, out, errs := runCLI(t, "calibrate", "--gpu", "H200-SXM-141GB", "--measurements", table, "-o", cal)
	want := table + `:2: # sms: "many" is not a whole number of SMs`
	if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stdout %q, stderr %q: want 2 and one line naming %q", code, out, errs, want)
	}
	if _, err := os.Stat(cal); err == nil {
		t.Errorf("%s written", cal)
	}
}
