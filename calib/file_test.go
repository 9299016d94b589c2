package calib

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

func writeString(t testing.TB, c *Calibration) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestWriteParseRoundTripIsByteIdentical(t *testing.T) {
	gpu := mustGPU(t, "T4")
	rows := mixRows(gpu.Name, func(k kern) float64 {
		return map[string]float64{"gemm": 1.4, "conv": 1.2, "Softmax": 0.5}[k.class+k.op] + 0.9
	}, 0.1, 5)
	cal, err := Fit(gpu, rows, Source{Device: "Tesla T4 (40 SMs, 14.6 GiB)", Measurements: "t4 \"kernels\".csv", Date: "2025-06-01", Driver: "550.54", Runtime: "torch"})
	if err != nil {
		t.Fatal(err)
	}
	first := writeString(t, cal)
	back, err := Parse("cal.yaml", []byte(first))
	if err != nil {
		t.Fatalf("%v\n%s", err, first)
	}
	if second := writeString(t, back); second != first {
		t.Errorf("round trip changed the file:\n%s\n---\n%s", first, second)
	}
	if back.Path != "cal.yaml" || back.Source.GPU != "T4" || back.Source.Family != "Turing" || back.Source.Rows != len(rows) ||
		back.Source.Device != "Tesla T4 (40 SMs, 14.6 GiB)" || back.Source.Driver != "550.54" {
		t.Errorf("source read back as %+v (path %q)", back.Source, back.Path)
	}
	if len(back.Bands) == 0 || back.Bands[0].Class != "*" {
		t.Errorf("bands read back as %+v", back.Bands)
	}
	if !contains(first, `op: "Softmax"`) {
		t.Errorf("no op cell written:\n%s", first)
	}
	// The fitted and the read-back calibration price identically, here
	// and transferred.
	for _, g := range []*hwdb.GPU{gpu, mustGPU(t, "L4")} {
		for _, r := range rows {
			rep := *r.Report
			rep.GPU = g.Name
			if a, b := calibratedTime(&rep, cal.For(g)), calibratedTime(&rep, back.For(g)); a != b {
				t.Errorf("%s on %s: fitted %g, read back %g", r.Name, g.Name, a, b)
			}
		}
	}
}

const goodFile = `format: 1
source: {gpu: "A100-SXM4-80GB", family: "Ampere", measurements: "m.csv", rows: 3, date: "", driver: "", runtime: ""}
fit: {gpu_factor: 0.9, median_abs_err_before: 0.2, median_abs_err_after: 0.05}
transfer: {same_family: 0.75, other_family: 0.5}
cells:
  - {class: gemm, bound: "*", size: "*", n: 3, factor: 1.2}
  - {class: gemm, bound: compute, size: "*", n: 3, factor: 1.1}
  - {class: gemm, bound: compute, size: 10-100us, n: 2, factor: 0.95}
  - {class: gemm, op: MatMul, bound: "*", size: "*", n: 2, factor: 0.8}
  - {class: gemm, op: MatMul, bound: compute, size: "*", n: 2, factor: 1.05}
bands:
  - {class: "*", n: 12, q10: 0.9, q90: 1.1}
  - {class: gemm, n: 12, q10: 0.8, q90: 1.3}
  - {class: gemm, precision: fp32, n: 10, q10: 0.95, q90: 1.05}
`

func TestParseAcceptsAHandWrittenFile(t *testing.T) {
	c, err := Parse("cal.yaml", []byte(goodFile))
	if err != nil {
		t.Fatal(err)
	}
	a100 := mustGPU(t, "A100-SXM4-80GB")
	// 31.6 µs is the 10-100us decade's centre, where its cell holds
	// whole; the over-1ms decade has no cell, so 1 there, and between
	// the rule interpolates in log time.
	centre := math.Sqrt(10e-6 * 100e-6)
	for _, c2 := range []struct {
		op, term string
		s, want  float64
	}{
		{"Gemm", "compute", centre, 0.9 * 1.2 * 1.1 * 0.95},
		{"MatMul", "compute", centre, 0.9 * 1.2 * 1.1 * 0.95 * 0.8 * 1.05},
		{"MatMul", "memory", centre, 0.9 * 1.2 * 0.8},
		{"Gemm", "memory", centre, 0.9 * 1.2},
		{"Gemm", "compute", 1e-6, 0.9 * 1.2 * 1.1 * 1},
	} {
		if f := c.For(a100).TermFactor("gemm", "", c2.op, "", c2.term, only(c2.term, c2.s)); !near(f, c2.want, 1e-12) {
			t.Errorf("%s %s %g s: factor %g, want %g", c2.op, c2.term, c2.s, f, c2.want)
		}
	}
	// The precision bands: a gemm kernel on the fp32 path takes its own,
	// one on another path the class's, another class the file's "*".
	for _, b := range []struct {
		class, prec string
		q10         float64
	}{{"gemm", "fp32", 0.95}, {"gemm", "16bit", 0.8}, {"gemm", "", 0.8}, {"conv", "fp32", 0.9}} {
		if got, carried := kernelBand(b.class, b.prec, "Ampere", c.For(a100)); got.Q10 != b.q10 || got.Source != "calibration residuals" || carried != 0 {
			t.Errorf("%s %q: band %+v, want q10 %g from the calibration", b.class, b.prec, got, b.q10)
		}
	}
	// On another GPU of the family: every cell but the size cells, less
	// the deadband, at 0.75, no GPU factor.
	if f, want := c.For(mustGPU(t, "A10")).TermFactor("gemm", "", "MatMul", "", "compute", only("compute", centre)), math.Exp(0.75*(math.Log(1.2*1.1*0.8*1.05)-transferDeadband)); !near(f, want, 1e-12) {
		t.Errorf("same family: factor %g, want %g", f, want)
	}
	// A format 1 file without op keys reads as it always did, and an
	// explicit op "*" is the same cell.
	star := strings.Replace(goodFile, `{class: gemm, bound: compute, size: "*"`, `{class: gemm, op: "*", bound: compute, size: "*"`, 1)
	c2, err := Parse("star.yaml", []byte(star))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := writeString(t, c), writeString(t, c2); a != b {
		t.Errorf("op \"*\" changed the calibration:\n%s\n---\n%s", a, b)
	}
}

func TestParseRejectsBadFilesInOneLine(t *testing.T) {
	for name, edit := range map[string][2]string{
		"unknown key":     {"transfer:", "extra: 1\ntransfer:"},
		"string factor":   {"factor: 1.2", "factor: fast"},
		"zero factor":     {"factor: 1.2", "factor: 0"},
		"absurd factor":   {"factor: 1.2", "factor: 25"},
		"negative factor": {"factor: 1.1", "factor: -1.1"},
		"bad class":       {"class: gemm, bound: \"*\"", "class: matmul, bound: \"*\""},
		"bad bound":       {"bound: compute, size: \"*\"", "bound: fast, size: \"*\""},
		"bad size":        {"size: 10-100us", "size: tiny"},
		"duplicate cell":  {"size: 10-100us", "size: \"*\""},
		"size sans bound": {"bound: compute, size: 10-100us", "bound: \"*\", size: 10-100us"},
		"bad op":          {"op: MatMul, bound: \"*\"", "op: \"Mat/Mul\", bound: \"*\""},
		"op with size":    {"op: MatMul, bound: compute, size: \"*\"", "op: MatMul, bound: compute, size: 10-100us"},
		"duplicate op":    {"op: MatMul, bound: compute", "op: MatMul, bound: \"*\""},
		"future format":   {"format: 1", "format: 2"},
		"no gpu":          {`gpu: "A100-SXM4-80GB"`, `gpu: ""`},
		"transfer > 1":    {"other_family: 0.5", "other_family: 1.5"},
		"q10 above q90":   {"q10: 0.9", "q10: 1.2"},
		"gpu factor":      {"gpu_factor: 0.9", "gpu_factor: 0.01"},
		"second doc":      {"format: 1", "format: 1\n---\nformat: 1"},
		"not yaml":        {"cells:", "cells: [ {"},
		"bad shape":       {"op: MatMul, bound: \"*\"", "op: MatMul, shape: \"768by3072\", bound: \"*\""},
		"shape sans op":   {"class: gemm, bound: \"*\"", "class: gemm, shape: \"768x3072\", bound: \"*\""},
		"shape and term":  {"op: MatMul, bound: compute", "op: MatMul, shape: \"768x3072\", bound: compute"},
		"bad precision":   {"precision: fp32", "precision: fp33"},
		"precision on *":  {`class: "*", n: 12`, `class: "*", precision: fp32, n: 12`},
		"duplicate band":  {"precision: fp32, n: 10", "n: 10"},
	} {
		bad := strings.Replace(goodFile, edit[0], edit[1], 1)
		if bad == goodFile {
			t.Fatalf("%s: edit did not apply", name)
		}
		_, err := Parse("bad.yaml", []byte(bad))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "calibration bad.yaml: ") || strings.Contains(msg, "\n") || strings.Contains(msg, "calib.") {
			t.Errorf("%s: error %q is not one line naming the file", name, msg)
		}
	}
	if _, err := Parse("e.yaml", nil); err == nil || !contains(err.Error(), "empty") {
		t.Errorf("empty file: %v", err)
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cal.yaml")
	if _, err := Load(p); err == nil || !contains(err.Error(), p) {
		t.Errorf("missing file: %v", err)
	}
	if err := os.WriteFile(p, []byte(goodFile), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil || c.Path != p {
		t.Fatalf("Load: %v, path %q", err, c.Path)
	}
	if d := c.For(mustGPU(t, "A100-SXM4-80GB")).Describe(); !contains(d, p) {
		t.Errorf("Describe %q does not name the file", d)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(goodFile))
	f.Add([]byte("format: 1\ncells: [{class: gemm, factor: 1e400}]"))
	f.Add([]byte("{"))
	f.Add([]byte(goodFile + "hosts:\n  - {runtime: \"pytorch\", n: 12, factor: 0.89}\n"))
	f.Add([]byte(strings.Replace(goodFile, "cells:\n", "paths:\n  gemm: [tensor, vector]\ncells:\n  - {class: gemm, bound: \"*\", size: \"*\", precision: \"16bit\", n: 2, factor: 1.1}\n", 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			return
		}
		first := writeString(t, c)
		back, err := Parse("fuzz.yaml", []byte(first))
		if err != nil {
			t.Fatalf("Write of a parsed file does not parse: %v\n%s", err, first)
		}
		if second := writeString(t, back); second != first {
			t.Fatalf("not idempotent:\n%s\n---\n%s", first, second)
		}
	})
}
