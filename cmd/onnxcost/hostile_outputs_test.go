package main

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/web"
)

// hostileRun is a command with one output flag aimed at a target.
type hostileRun struct {
	name string
	// ext is the extension the flag requires ("" when any name does).
	ext  string
	args func(model, budget, target string) []string
	// noInput: the command reads no file (zoo writes a built model).
	noInput bool
}

// hostileRuns are the output flags of every command that writes files.
var hostileRuns = []hostileRun{
	{"report --trace", "", func(m, _, t string) []string { return []string{"report", m, "--gpu", "T4", "--trace", t} }, false},
	{"report --pprof", "", func(m, _, t string) []string { return []string{"report", m, "--gpu", "T4", "--pprof", t} }, false},
	{"compare --trace", "", func(m, _, t string) []string { return []string{"compare", m, "--gpu", "T4", "--trace", t} }, false},
	{"graph -o", "dot", func(m, _, t string) []string { return []string{"graph", m, "--gpu", "T4", "-o", t} }, false},
	{"roofline -o", "svg", func(m, _, t string) []string { return []string{"roofline", m, "--gpu", "T4", "-o", t} }, false},
	{"html -o", "html", func(m, _, t string) []string { return []string{"html", m, "--gpu", "T4", "-o", t} }, false},
	{"sweep -o", "svg", func(m, _, t string) []string { return []string{"sweep", m, "--gpu", "T4", "--batch", "1,2", "-o", t} }, false},
	{"energy -o", "svg", func(m, _, t string) []string { return []string{"energy", m, "--gpu", "T4", "-o", t} }, false},
	{"check --out-json", "", func(_, b, t string) []string { return []string{"check", "-c", b, "--out-json", t} }, false},
	{"check --out-markdown", "", func(_, b, t string) []string { return []string{"check", "-c", b, "--out-markdown", t} }, false},
	{"check --out-junit", "", func(_, b, t string) []string { return []string{"check", "-c", b, "--out-junit", t} }, false},
	{"diff --out-json", "", func(m, _, t string) []string { return []string{"diff", m, m, "--gpu", "T4", "--out-json", t} }, false},
	{"budget init -o", "", func(m, _, t string) []string {
		return []string{"budget", "init", m, "--gpu", "T4", "--force", "-o", t}
	}, false},
	{"optimize --annotate -o", "", func(m, _, t string) []string {
		return []string{"optimize", m, "--annotate", "--gpu", "T4", "-o", t}
	}, false},
	{"zoo -o", "", func(_, _, t string) []string { return []string{"zoo", "alexnet", "-o", t} }, true},
}

// hostileDir is a folder with a model and a budget file that checks it.
func hostileDir(t *testing.T) (dir, model, budget string) {
	t.Helper()
	dir = t.TempDir()
	model = filepath.Join(dir, "m.onnx")
	copyFile(t, fixture(t, "alexnet.onnx"), model)
	budget = filepath.Join(dir, "budget.yaml")
	if err := os.WriteFile(budget, []byte("version: 1\ndefaults:\n  gpu: T4\nmodels:\n  - path: m.onnx\n    budgets:\n      time: 1 s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, model, budget
}

// refused runs args, which must exit 2 with one line that names target
// and says want.
func refused(t *testing.T, name, target, want string, args []string) {
	t.Helper()
	code, _, errs := runCLI(t, args...)
	if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, target) || !strings.Contains(errs, want) {
		t.Errorf("%s %s: exit %d, stderr %q; want exit 2 and one line naming it and saying %q", name, target, code, errs, want)
	}
}

// noTemps fails when a temporary or backup file of an output is left in
// dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".") && (strings.Contains(e.Name(), ".tmp") || strings.Contains(e.Name(), ".old")) {
			t.Errorf("%s left behind in %s", e.Name(), dir)
		}
	}
}

// TestOutputOntoInput: every output flag aimed at the model (by its own
// name, or a hard link of the extension the flag wants) is refused, and
// the model keeps its bytes.
func TestOutputOntoInput(t *testing.T) {
	dir, model, budget := hostileDir(t)
	want, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hostileRuns {
		if h.noInput {
			continue
		}
		target := model
		if h.ext != "" {
			target = filepath.Join(dir, "m."+h.ext)
			os.Remove(target)
			if err := os.Link(model, target); err != nil {
				t.Skip("no hard links here:", err)
			}
		}
		refused(t, h.name, target, "is an input of this run", h.args(model, budget, target))
		if got, _ := os.ReadFile(model); string(got) != string(want) {
			t.Fatalf("%s: the model was overwritten", h.name)
		}
		noTemps(t, dir)
	}
}

// TestOutputOntoOtherInputs: the GPU file, the budget file and the base
// report are inputs too.
func TestOutputOntoOtherInputs(t *testing.T) {
	dir, model, budget := hostileDir(t)
	gpus := filepath.Join(dir, "gpus.yaml")
	base := filepath.Join(dir, "base.json")
	for _, p := range []string{gpus, base} {
		if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		target string
		args   []string
	}{
		{gpus, []string{"report", model, "--gpu", "T4", "--gpu-file", gpus, "--trace", gpus}},
		{budget, []string{"check", "-c", budget, "--out-json", budget}},
		{base, []string{"check", "-c", budget, "--base-report", base, "--out-junit", base}},
	} {
		before, _ := os.ReadFile(c.target)
		refused(t, c.args[0], c.target, "is an input of this run", c.args)
		if after, _ := os.ReadFile(c.target); string(after) != string(before) {
			t.Errorf("%s was overwritten", c.target)
		}
	}
	noTemps(t, dir)
}

// TestOutputOntoDirectory: a directory named as an output is refused and
// stays empty, with nothing left beside it.
func TestOutputOntoDirectory(t *testing.T) {
	dir, model, budget := hostileDir(t)
	for _, h := range hostileRuns {
		ext := h.ext
		if ext == "" {
			ext = "json"
		}
		target := filepath.Join(dir, "out."+ext)
		if err := os.MkdirAll(target, 0o755); err != nil {
			t.Fatal(err)
		}
		refused(t, h.name, target, "is a directory", h.args(model, budget, target))
		if es, err := os.ReadDir(target); err != nil || len(es) != 0 {
			t.Errorf("%s: the directory now holds %d entries (%v)", h.name, len(es), err)
		}
		noTemps(t, dir)
	}
}

// TestOutputTwice: two output flags naming one file are refused.
func TestOutputTwice(t *testing.T) {
	dir, model, _ := hostileDir(t)
	out := filepath.Join(dir, "out.json")
	refused(t, "report", out, "is also the file of --trace",
		[]string{"report", model, "--gpu", "T4", "--trace", out, "--pprof", out})
	if _, err := os.Stat(out); err == nil {
		t.Error("out.json was written")
	}
}

// TestServePreloadName: /preload.json names the model by its base name:
// the folders above it are nothing the page needs.
func TestServePreloadName(t *testing.T) {
	model := fixture(t, "alexnet.onnx")
	data, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.Handler(&web.Preload{Name: model, Data: data}, web.Config{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/preload.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var info struct{ Name, Display string }
	if err := json.Unmarshal(body, &info); err != nil {
		t.Fatal(err)
	}
	if info.Name != "alexnet.onnx" || info.Display != "alexnet.onnx" || strings.Contains(string(body), filepath.Dir(model)) {
		t.Errorf("/preload.json: %s", body)
	}
}
