package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
)

func TestZooList(t *testing.T) {
	code, out, errs := runCLI(t, "zoo")
	if code != 0 {
		t.Fatalf("zoo: exit %d: %s", code, errs)
	}
	for _, name := range models.Names() {
		if !strings.Contains(out, name+" ") {
			t.Errorf("zoo listing lacks %s", name)
		}
	}
	if _, again, _ := runCLI(t, "zoo"); again != out {
		t.Error("zoo listing is not deterministic")
	}
	code, out, _ = runCLI(t, "zoo", "--format", "json")
	var list []models.ListEntry
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != len(models.Zoo()) {
		t.Fatalf("zoo --format json: exit %d, %d entries", code, len(list))
	}
	code, out, _ = runCLI(t, "zoo", "LLaMA-70B")
	if code != 0 || !strings.Contains(out, "kv_heads=8") || !strings.Contains(out, "layers=80") {
		t.Errorf("zoo llama-70b: exit %d, %q", code, out)
	}
}

func TestZooWrite(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "tiny.onnx")
	code, _, errs := runCLI(t, "zoo", "llama-tiny", "--param", "batch=-1", "--param", "seq=32", "--param", "layers=3", "-o", out)
	if code != 0 {
		t.Fatalf("zoo -o: exit %d: %s", code, errs)
	}
	m, err := ir.ReadFile(out, ir.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ir.InferShapes(m, ir.InferOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Graph.Outputs[0].Shape.String(), "[batch,32,1000]"; got != want {
		t.Errorf("output %s, want %s", got, want)
	}
	layers := 0
	for _, n := range m.Graph.Nodes {
		if strings.HasSuffix(n.Name, "/mlp/down_proj/MatMul") {
			layers++
		}
	}
	if layers != 3 {
		t.Errorf("%d layers, want 3", layers)
	}
	for _, v := range m.Graph.Initializers {
		if v.Const.Loc.File != "tiny.onnx.data" || !v.Const.Loc.Missing {
			t.Errorf("weight %s: location %+v, want the absent tiny.onnx.data", v.Name, v.Const.Loc)
			break
		}
	}
	// Nothing but the model is left in the folder (no temp files).
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("folder holds %d entries, want 1", len(ents))
	}
	// The written model is an ordinary input for the other commands.
	if code, _, errs := runCLI(t, "report", out, "--gpu", "T4", "--batch", "2"); code != 0 {
		t.Errorf("report on the zoo model: exit %d: %s", code, errs)
	}
}

func TestZooUsageErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.onnx")
	for _, args := range [][]string{
		{"zoo", "nope", "-o", out},
		{"zoo", "llama-7b", "--param", "nope=1", "-o", out},
		{"zoo", "llama-7b", "--param", "layers=x", "-o", out},
		{"zoo", "llama-7b", "--param", "layers", "-o", out},
		{"zoo", "llama-7b", "--param", "heads=7", "-o", out},
		{"zoo", "llama-7b", "--param", "layers=0", "-o", out},
		{"zoo", "llama-7b", "--param", "seq=-3", "-o", out},
		{"zoo", "llama-7b", "--param", "seq=8"},
		{"zoo", "-o", out},
		{"zoo", "alexnet", "vgg16"},
		{"zoo", "--format", "yaml"},
		{"zoo", "alexnet", "-o", filepath.Join(t.TempDir(), "missing", "x.onnx")},
	} {
		code, stdout, errs := runCLI(t, args...)
		if code != 2 || stdout != "" || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
			t.Errorf("onnxcost %s: exit %d, stdout %q, stderr %q; want exit 2 and one line", strings.Join(args, " "), code, stdout, errs)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed zoo command wrote its output")
	}
}
