package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestExportCoversModel checks that both viewers' files give figures to
// at least 90% of the model's named nodes (fused kernels hand theirs to
// every node they fuse; folded nodes get none) and are deterministic.
func TestExportCoversModel(t *testing.T) {
	dir := t.TempDir()
	llama := filepath.Join(dir, "llama-decode.onnx")
	if code, _, errs := runCLI(t, "zoo", "llama-tiny", "--param", "decode=1", "--param", "past=16", "-o", llama); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct{ model, gpu string }{{fixture(t, "resnet50.onnx"), "A100"}, {llama, "T4"}} {
		m, err := ir.ReadFile(c.model, ir.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var files [2][3][]byte
		for i := range files {
			n, me, u := filepath.Join(dir, "n.json"), filepath.Join(dir, "m.json"), filepath.Join(dir, "u.json")
			if code, _, errs := runCLI(t, "export", c.model, "--gpu", c.gpu, "--netron", n, "--model-explorer", me, "--model-explorer-unfused", u); code != 0 {
				t.Fatal(errs)
			}
			for j, p := range []string{n, me, u} {
				if files[i][j], err = os.ReadFile(p); err != nil {
					t.Fatal(err)
				}
			}
		}
		for j := range files[0] {
			if !bytes.Equal(files[0][j], files[1][j]) {
				t.Errorf("%s: file %d differs between runs", c.model, j)
			}
		}
		var netron struct {
			Metrics []struct{ Target, Name string }
		}
		var me, mu struct {
			Results map[string]struct{ Value float64 }
		}
		for j, v := range []any{&netron, &me, &mu} {
			if err := json.Unmarshal(files[0][j], v); err != nil {
				t.Fatal(err)
			}
		}
		timed := map[string]bool{}
		for _, e := range netron.Metrics {
			timed[e.Target] = timed[e.Target] || e.Name == "onnxcost.time"
		}
		var named, inNetron, inME, inMU int
		for _, n := range m.Graph.Nodes {
			if n.Name == "" {
				continue
			}
			named++
			inNetron += b2i(timed[n.Name])
			_, ok := me.Results[n.Name]
			inME += b2i(ok)
			_, ok = mu.Results[n.Name]
			inMU += b2i(ok)
		}
		for what, got := range map[string]int{"netron": inNetron, "model-explorer": inME, "model-explorer-unfused": inMU} {
			if named == 0 || float64(got) < 0.9*float64(named) {
				t.Errorf("%s: %s names %d of %d nodes", c.model, what, got, named)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestExportPricesTheRuntime: the overlay is the plan report prices (the
// runtime's own, or --plan), named in Model Explorer's data set; before,
// it was the fused plan whatever the runtime ran (PyTorch's eager
// kernels drawn as TensorRT's fused ones) and --plan was ignored.
func TestExportPricesTheRuntime(t *testing.T) {
	dir := t.TempDir()
	me := filepath.Join(dir, "m.json")
	seen := map[string]string{}
	for _, c := range []struct {
		args []string
		name string
	}{
		{nil, "onnxcost time (ms), runtime tensorrt (fused kernels), A100-SXM4-80GB"},
		{[]string{"--runtime", "pytorch"}, "onnxcost time (ms), runtime pytorch (eager kernels), A100-SXM4-80GB"},
		{[]string{"--plan", "unfused"}, "onnxcost time (ms), runtime tensorrt (unfused kernels), A100-SXM4-80GB"},
	} {
		if code, _, errs := runCLI(t, append([]string{"export", "zoo:resnet18", "--gpu", "A100", "--model-explorer", me, "-q"}, c.args...)...); code != 0 {
			t.Fatalf("%v: %s", c.args, errs)
		}
		b, err := os.ReadFile(me)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		if d.Name != c.name {
			t.Errorf("%v: data set %q, want %q", c.args, d.Name, c.name)
		}
		if prev, dup := seen[string(b)]; dup {
			t.Errorf("%v: the same overlay as %q", c.args, prev)
		}
		seen[string(b)] = d.Name
	}
	if code, _, errs := runCLI(t, "compare", "zoo:resnet18", "--gpu", "A100", "--plan", "unfused"); code != 2 || !strings.Contains(errs, "--plan: compare prices both plans") {
		t.Errorf("compare --plan: exit %d, %q; want 2 refusing it", code, errs)
	}
}
