package viz

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

// decoder is a report shaped like an exported decoder: an embedding,
// layers of attention and MLP scopes (two nodes each), a head. With
// same the layers are identical blocks (merged into one box); otherwise
// each layer's FLOPs differ.
func decoder(layers int, same bool) *report.Report {
	r := &report.Report{Model: "decoder", GPU: "TestGPU", Plan: "fused", DType: "fp32"}
	v := 0
	add := func(name, op string, flops float64) {
		t := 1e-6 + flops*1e-15
		r.Nodes = append(r.Nodes, report.NodeCost{Counts: report.Counts{FLOPs: flops, BytesRead: 4e5, BytesWritten: 2e5}, Name: name, OpType: op,
			Inputs: []report.TensorInfo{ti(fmt.Sprintf("v%d", v), "float32", 1, 64)}, Outputs: []report.TensorInfo{ti(fmt.Sprintf("v%d", v+1), "float32", 1, 64)},
			Bound: "memory", MemLevel: "hbm", Precision: "fp32", MemoryS: t, TimeS: t, Launches: 1})
		r.Totals.TimeS += t
		v++
	}
	add("/model/embed_tokens/Gather", "Gather", 1e6)
	for l := 0; l < layers; l++ {
		f := 1e9
		if !same {
			f += float64(l) * 1e6
		}
		for _, n := range [][2]string{{"attn/q_proj/MatMul", "MatMul"}, {"attn/Softmax", "Softmax"}, {"mlp/up_proj/MatMul", "MatMul"}, {"mlp/Mul", "Mul"}} {
			add(fmt.Sprintf("/model/layers.%d/%s", l, n[0]), n[1], f)
		}
	}
	add("/lm_head/MatMul", "MatMul", 2e9)
	return r
}

func drawOpen(t *testing.T, r *report.Report, o GraphOptions) (*Drawing, map[string]Group) {
	t.Helper()
	d, err := Draw(r, CeilingsOf(testGPU()), o)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Group{}
	for _, g := range d.Groups {
		byName[g.Name] = g
		if !strings.Contains(d.Graph.String(), `id="`+g.ID+`"`) {
			t.Errorf("group %s (%s) is not drawn", g.ID, g.Name)
		}
	}
	return d, byName
}

// TestExpandScope opens a collapsed scope one level at a time down to
// its nodes; the rest stays collapsed.
func TestExpandScope(t *testing.T) {
	r := decoder(8, false)
	o := GraphOptions{MaxNodes: 12, Page: true}
	d, g := drawOpen(t, r, o)
	if d.Depth != 2 || len(d.Groups) != 10 || g["/model/layers.3"].Kind != "scope" || g["/model/layers.3"].Key != "/model/layers.3" {
		t.Fatalf("depth %d, %d boxes, layers.3 %+v; want depth 2, 10 boxes, a scope", d.Depth, len(d.Groups), g["/model/layers.3"])
	}
	if l3 := g["/model/layers.3"]; l3.Members != 4 || l3.Ops != "MatMul×2 · Softmax · Mul" || l3.Path != "/model/layers.3" {
		t.Errorf("layers.3: %+v", l3)
	}
	o.Expand = []string{"/model/layers.3"}
	d, g = drawOpen(t, r, o)
	if _, ok := g["/model/layers.3"]; ok || g["/model/layers.3/attn"].Kind != "scope" || g["/model/layers.3/mlp"].Kind != "scope" || len(d.Groups) != 11 {
		t.Errorf("opening layers.3 drew %d boxes: %v", len(d.Groups), names(d))
	}
	o.Expand = append(o.Expand, "/model/layers.3/attn")
	d, g = drawOpen(t, r, o)
	for _, n := range []string{"/model/layers.3/attn/q_proj/MatMul", "/model/layers.3/attn/Softmax", "/model/layers.3/mlp", "/model/layers.4"} {
		if _, ok := g[n]; !ok {
			t.Errorf("opening layers.3/attn: no box %s in %v", n, names(d))
		}
	}
	if g["/model/layers.3/attn/Softmax"].Path != "/model/layers.3/attn" {
		t.Errorf("a node's path: %+v", g["/model/layers.3/attn/Softmax"])
	}
	if want := []string{"/model/layers.3", "/model/layers.3/attn"}; strings.Join(d.Expanded, ",") != strings.Join(want, ",") {
		t.Errorf("expanded %v, want %v", d.Expanded, want)
	}
}

// TestExpandRepeat opens the first block of identical layers drawn as one
// box; the other blocks stay one box.
func TestExpandRepeat(t *testing.T) {
	r := decoder(8, true)
	o := GraphOptions{MaxNodes: 12, Page: true}
	d, _ := drawOpen(t, r, o)
	var rep Group
	for _, x := range d.Groups {
		if x.Kind == "repeat" {
			rep = x
		}
	}
	if rep.Key != "repeat:/model/layers.0" || rep.Members != 32 || rep.Path != "/model/layers.0" {
		t.Fatalf("no repeated block drawn: %v (%+v)", names(d), rep)
	}
	o.Expand = []string{rep.Key}
	d, g := drawOpen(t, r, o)
	if _, ok := g["/model/layers.0/attn/Softmax"]; !ok {
		t.Errorf("opening %s: layer 0's nodes not drawn: %v", rep.Key, names(d))
	}
	if x, ok := g["/model/layers.1 … layers.7 ×7"]; !ok || x.Key != "repeat:/model/layers.1" {
		t.Errorf("opening %s: the other layers are not one box: %v", rep.Key, names(d))
	}
	if len(d.Groups) > 8 {
		t.Errorf("opening one layer drew %d boxes", len(d.Groups))
	}
}

// TestReveal draws a node inside a repeated block alone, and a node cut
// by --top out of its fold.
func TestReveal(t *testing.T) {
	r := decoder(8, true)
	const n = "/model/layers.5/mlp/Mul"
	d, g := drawOpen(t, r, GraphOptions{MaxNodes: 12, Page: true, Reveal: n})
	if x, ok := g[n]; !ok || x.Kind != "node" {
		t.Fatalf("reveal %s: not drawn alone: %v", n, names(d))
	}
	if _, ok := g["/model/layers.6 … layers.7 ×2"]; !ok {
		t.Errorf("reveal %s: the layers after it are not merged: %v", n, names(d))
	}
	if !strings.Contains(strings.Join(d.Expanded, ","), "repeat:"+n) {
		t.Errorf("reveal: expanded %v", d.Expanded)
	}
	// Under --top, the node lies in a fold, which opens.
	d, g = drawOpen(t, decoder(8, false), GraphOptions{Top: 2, Reveal: "/model/layers.1/attn/Softmax"})
	if _, ok := g["/model/layers.1/attn/Softmax"]; !ok {
		t.Errorf("reveal under --top: %v", names(d))
	}
	// A fold opens by its key into its nodes.
	d, _ = drawOpen(t, decoder(3, false), GraphOptions{Top: 1})
	var fold Group
	for _, x := range d.Groups {
		if x.Kind == "fold" && fold.Key == "" {
			fold = x
		}
	}
	if !strings.HasPrefix(fold.Key, "fold:") || !strings.Contains(fold.Name, "nodes folded: /model/embed_tokens/Gather … ") {
		t.Fatalf("fold %+v", fold)
	}
	before := len(d.Groups)
	d, _ = drawOpen(t, decoder(3, false), GraphOptions{Top: 1, Expand: []string{fold.Key}})
	if len(d.Groups) != before-1+fold.Members {
		t.Errorf("opening a fold of %d: %d boxes, was %d: %v", fold.Members, len(d.Groups), before, names(d))
	}
}

// TestPageNotes: the page's legend speaks of its own controls, the
// command line's of its flags; without the new options the DOT is the
// command line's.
func TestPageNotes(t *testing.T) {
	r := decoder(8, false)
	c := CeilingsOf(testGPU())
	cli, _ := DOT(r, c, GraphOptions{MaxNodes: 12})
	page, _ := DOT(r, c, GraphOptions{MaxNodes: 12, Page: true})
	if !strings.Contains(cli, "set --collapse or --top") || strings.Contains(page, "--") || !strings.Contains(page, "click a box to expand it") {
		t.Errorf("notes: CLI has its flags %v, page has none %v and its click %v",
			strings.Contains(cli, "set --collapse"), !strings.Contains(page, "--"), strings.Contains(page, "click a box"))
	}
	if strings.Replace(page, "(click a box to expand it; search finds a node)", "(set --collapse or --top)", 1) != cli {
		t.Errorf("the page's DOT differs from the CLI's beyond the note")
	}
	for i := range r.Nodes { // no scopes: the cut is by cost
		r.Nodes[i].Name = strings.ReplaceAll(strings.Trim(r.Nodes[i].Name, "/"), "/", "_")
	}
	top, _ := DOT(r, c, GraphOptions{MaxNodes: 12, Page: true})
	if !strings.Contains(top, "click a dashed box") || strings.Contains(top, "--top") {
		t.Errorf("top note: %s", regexp.MustCompile(`costliest are kept[^<]*`).FindString(top))
	}
	if _, err := Draw(r, c, GraphOptions{Reveal: "nope"}); err != nil {
		t.Errorf("reveal of a missing node: %v", err)
	}
}

func names(d *Drawing) []string {
	var out []string
	for _, g := range d.Groups {
		out = append(out, g.Name)
	}
	return out
}
