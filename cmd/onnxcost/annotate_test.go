package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// pythonONNX returns the system python with the onnx package, or skips.
func pythonONNX(t *testing.T) string {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	if err := exec.Command(py, "-c", "import onnx").Run(); err != nil {
		t.Skip("python3 has no onnx package")
	}
	return py
}

// readNodeMetadataPy decodes the written file with the onnx package and
// returns each node's metadata_props and the model's. The onnx package
// may predate NodeProto.metadata_props (onnx 1.16): then the field is an
// unknown field, which the script reads off the node's own encoding as
// field 9, wire type 2, a StringStringEntryProto; that is what Netron
// decodes.
const readNodeMetadataPy = `
import json, sys, onnx
m = onnx.load(sys.argv[1], load_external_data=False)
def varint(b, i):
    x = s = 0
    while True:
        c = b[i]; i += 1; x |= (c & 0x7f) << s; s += 7
        if c < 0x80: return x, i
def node_meta(n):
    if hasattr(n, "metadata_props"):
        return [[e.key, e.value] for e in n.metadata_props]
    b = n.SerializeToString(); i = 0; out = []
    while i < len(b):
        tag, i = varint(b, i); num, wt = tag >> 3, tag & 7
        if wt == 2:
            l, i = varint(b, i); p = b[i:i+l]; i += l
            if num == 9:
                e = onnx.StringStringEntryProto.FromString(p); out.append([e.key, e.value])
        elif wt == 0: _, i = varint(b, i)
        elif wt == 1: i += 8
        elif wt == 5: i += 4
        else: raise SystemExit("bad wire type")
    return out
json.dump({"model": [[p.key, p.value] for p in m.metadata_props],
           "nodes": {n.name: node_meta(n) for n in m.graph.node}}, sys.stdout)
`

// TestAnnotateNetronMetadata: optimize --annotate writes each node's
// estimate into NodeProto.metadata_props and the totals into the model's,
// as the onnx package decodes them, and the values are the report's.
func TestAnnotateNetronMetadata(t *testing.T) {
	py := pythonONNX(t)
	m := fixture(t, "resnet50.onnx")
	dir := t.TempDir()
	out := filepath.Join(dir, "ann.onnx")
	code, _, errs := runCLI(t, "optimize", m, "-o", out, "--annotate", "--gpu", "A100-SXM4-80GB", "--batch", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, rjs, errs := runCLI(t, "report", m, "--gpu", "A100-SXM4-80GB", "--batch", "2", "--format", "json")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	r := struct {
		Totals struct {
			TimeS float64 `json:"time_s"`
		} `json:"totals"`
		Nodes []struct {
			Name      string   `json:"name"`
			TimeS     float64  `json:"time_s"`
			FLOPs     float64  `json:"flops"`
			Bound     string   `json:"bound"`
			FusedFrom []string `json:"fused_from"`
		} `json:"nodes"`
	}{}
	if err := json.Unmarshal([]byte(rjs), &r); err != nil {
		t.Fatal(err)
	}
	raw, err := exec.Command(py, "-c", readNodeMetadataPy, out).Output()
	if err != nil {
		t.Fatalf("python onnx could not read %s: %v", out, err)
	}
	var got struct {
		Model [][2]string
		Nodes map[string][][2]string
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	find := func(kvs [][2]string, key string) (string, bool) {
		for _, kv := range kvs {
			if kv[0] == key {
				return kv[1], true
			}
		}
		return "", false
	}
	if v, _ := find(got.Model, "onnxcost.gpu"); v != "A100-SXM4-80GB" {
		t.Errorf("model metadata onnxcost.gpu = %q; all: %v", v, got.Model)
	}
	if v, _ := find(got.Model, "onnxcost.time_s"); v != strconv.FormatFloat(r.Totals.TimeS, 'g', -1, 64) {
		t.Errorf("model onnxcost.time_s = %q, want %v", v, r.Totals.TimeS)
	}
	if len(got.Nodes) != len(r.Nodes) {
		t.Errorf("%d nodes in the written model, %d in the report", len(got.Nodes), len(r.Nodes))
	}
	for _, n := range r.Nodes {
		kvs := got.Nodes[n.Name]
		ts, ok := find(kvs, "onnxcost.time_s")
		if !ok {
			t.Fatalf("node %s has no onnxcost.time_s; metadata %v", n.Name, kvs)
		}
		if v, err := strconv.ParseFloat(ts, 64); err != nil || v != n.TimeS {
			t.Errorf("node %s: time_s %q, want %v", n.Name, ts, n.TimeS)
		}
		if v, _ := find(kvs, "onnxcost.bound"); v != n.Bound {
			t.Errorf("node %s: bound %q, want %q", n.Name, v, n.Bound)
		}
		if v, _ := find(kvs, "onnxcost.flops"); v != strconv.FormatFloat(n.FLOPs, 'f', -1, 64) {
			t.Errorf("node %s: flops %q, want %v", n.Name, v, n.FLOPs)
		}
		ff, has := find(kvs, "onnxcost.fused_from")
		if has != (len(n.FusedFrom) > 0) || ff != strings.Join(n.FusedFrom, ", ") {
			t.Errorf("node %s: fused_from %q, want %q", n.Name, ff, n.FusedFrom)
		}
		for _, k := range []string{"onnxcost.summary", "onnxcost.time_share", "onnxcost.bytes"} {
			if _, ok := find(kvs, k); !ok {
				t.Errorf("node %s: no %s", n.Name, k)
			}
		}
	}
	// The written graph keeps the dims --batch bound, and our own reader
	// reads the same metadata back.
	m2, err := ir.ReadFile(out, ir.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m2.Graph.Nodes[0].Metadata()) == 0 {
		t.Error("ir reader sees no node metadata")
	}
	// Without --annotate, --gpu is a usage error (it would do nothing).
	if code, _, _ := runCLI(t, "optimize", m, "-o", filepath.Join(dir, "x.onnx"), "--gpu", "T4"); code != 2 {
		t.Errorf("optimize --gpu without --annotate: exit %d, want 2", code)
	}
}

// TestOptimizeExternalWeights: a model whose weights live beside it in an
// external file, optimized into another folder, carries those weights
// inside (python onnx loads it from there with its external data); a
// tensor whose file was absent stays a reference, and stderr says so.
func TestOptimizeExternalWeights(t *testing.T) {
	py := pythonONNX(t)
	src := filepath.Join(repoRoot, "ir", "testdata", "roundtrip")
	dir := t.TempDir()
	in := filepath.Join(dir, "in", "external.onnx")
	copyFile(t, filepath.Join(src, "external.onnx"), in)
	copyFile(t, filepath.Join(src, "ext.bin"), filepath.Join(dir, "in", "ext.bin"))
	out := filepath.Join(dir, "elsewhere", "deep", "out.onnx")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "optimize", in, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "missing.bin") || !strings.Contains(errs, "copied into it") {
		t.Errorf("stderr does not explain the weights: %s", errs)
	}
	ext, err := os.ReadFile(filepath.Join(dir, "in", "ext.bin"))
	if err != nil {
		t.Fatal(err)
	}
	script := `
import sys, onnx
m = onnx.load(sys.argv[1], load_external_data=False)
for t in m.graph.initializer:
    loc = [e.value for e in t.external_data if e.key == "location"]
    print(t.name, t.data_location, t.raw_data.hex(), ",".join(loc))
`
	res, err := exec.Command(py, "-c", script, out).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v: %s", err, res)
	}
	lines := strings.Split(strings.TrimSpace(string(res)), "\n")
	want := map[string]string{
		"w": "w 0 " + hex.EncodeToString(ext[16:40]) + " ",
		"v": "v 1  missing.bin",
	}
	for _, l := range lines {
		name := strings.Fields(l)[0]
		if w, ok := want[name]; ok && l != w {
			t.Errorf("tensor %s: %q, want %q", name, l, w)
		}
		delete(want, name)
	}
	if len(want) != 0 {
		t.Errorf("tensors not in the output: %v (python said %s)", want, res)
	}
	// Placing the missing file beside the output makes every reference
	// resolve from the output's folder: onnx loads all external data.
	if err := os.WriteFile(filepath.Join(filepath.Dir(out), "missing.bin"), bytes.Repeat([]byte{0}, 12), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := exec.Command(py, "-c", "import sys, onnx; onnx.load(sys.argv[1])", out).CombinedOutput(); err != nil {
		t.Errorf("onnx.load with external data: %v: %s", err, res)
	}
}
