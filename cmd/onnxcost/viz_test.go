package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// vizFixtures are the real-model fixtures (scripts/export_fixtures.py).
func vizFixtures(t *testing.T) []string {
	t.Helper()
	models, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "models", "*.onnx"))
	if len(models) == 0 {
		t.Skip("no testdata/models/*.onnx (run scripts/export_fixtures.py)")
	}
	return models
}

// TestGraphRendersEveryFixture draws every fixture model, fused and
// unfused, and lays it out with the real Graphviz.
func TestGraphRendersEveryFixture(t *testing.T) {
	if _, err := exec.LookPath("dot"); err != nil {
		t.Skip("graphviz 'dot' not on PATH; CI installs it")
	}
	dir := t.TempDir()
	for _, m := range vizFixtures(t) {
		for _, plan := range []string{"fused", "unfused"} {
			name := strings.TrimSuffix(filepath.Base(m), ".onnx")
			out := filepath.Join(dir, name+"_"+plan+".svg")
			var stdout, stderr bytes.Buffer
			args := []string{"graph", m, "--gpu", "A100-SXM4-80GB", "--plan", plan, "-o", out}
			if name == "densenet121" {
				// 121 Concats of up to 32 inputs: dot lays the whole graph
				// out in about a minute on CI's 2 cores; by block it is quick.
				args = append(args, "--collapse", "2")
			}
			code := run(args, &stdout, &stderr)
			if code != 0 {
				t.Errorf("%s %s: exit %d: %s", name, plan, code, stderr.String())
				continue
			}
			svg, err := os.ReadFile(out)
			if err != nil || !bytes.Contains(svg, []byte("<svg")) {
				t.Errorf("%s %s: no SVG written (%v)", name, plan, err)
			}
		}
	}
}

// TestGraphCommand checks DOT to stdout, a saved JSON report as input,
// and usage errors.
func TestGraphCommand(t *testing.T) {
	models := vizFixtures(t)
	m := models[0]
	var stdout, stderr bytes.Buffer
	if code := run([]string{"graph", m, "--gpu", "A100-SXM4-80GB", "--color", "time", "--rankdir", "LR"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "digraph") {
		t.Fatalf("stdout is not DOT: %.80s", stdout.String())
	}
	dir := t.TempDir()
	rep := filepath.Join(dir, "r.json")
	stdout.Reset()
	if code := run([]string{"report", m, "--gpu", "A100-SXM4-80GB", "--format", "json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("report: exit %d", code)
	}
	if err := os.WriteFile(rep, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "from_json.dot")
	if code := run([]string{"graph", rep, "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("graph of a saved report: exit %d: %s", code, stderr.String())
	}
	for _, bad := range [][]string{
		{"graph", m, "--gpu", "A100-SXM4-80GB", "--color", "pink"},
		{"graph", m, "--gpu", "A100-SXM4-80GB", "--focus", "("},
		{"graph", m, "--gpu", "A100-SXM4-80GB", "-o", filepath.Join(dir, "x.gif")},
		{"roofline", m, "--gpu", "A100-SXM4-80GB"},
	} {
		if code := run(bad, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad[3:], code)
		}
	}
}

// TestRooflineAndHTMLCommands writes a roofline (twice: byte-identical
// SVG) and an HTML report that fetches nothing from the network.
func TestRooflineAndHTMLCommands(t *testing.T) {
	m := vizFixtures(t)[0]
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	var svgs [][]byte
	for i := 0; i < 2; i++ {
		out := filepath.Join(dir, "roof.svg")
		if code := run([]string{"roofline", m, "--gpu", "A100-SXM4-80GB", "-o", out}, &stdout, &stderr); code != 0 {
			t.Fatalf("roofline: exit %d: %s", code, stderr.String())
		}
		b, _ := os.ReadFile(out)
		svgs = append(svgs, b)
	}
	if !bytes.Equal(svgs[0], svgs[1]) {
		t.Error("roofline SVG differs between runs")
	}
	out := filepath.Join(dir, "report.html")
	if code := run([]string{"html", m, "--gpu", "A100-SXM4-80GB", "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("html: exit %d: %s", code, stderr.String())
	}
	page, _ := os.ReadFile(out)
	low := strings.ToLower(string(page))
	for _, bad := range []string{`src="http`, `href="http`, "<link", "<script src"} {
		if strings.Contains(low, bad) {
			t.Errorf("report.html fetches from the network: %q", bad)
		}
	}
	// How far to trust the time, as the text report says it.
	if !strings.Contains(string(page), "80% interval") {
		t.Error("report.html does not state the time's 80% interval")
	}
}
