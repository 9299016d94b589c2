package main

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// TestColumnsMatchTabwriter: the column writer must give tabwriter's bytes
// for any mix of line shapes (cells per line vary, as input, node and
// output lines of `shapes` do, and as nested subgraph lines do), with
// multi-byte runes and special bytes (which go through tabwriter itself).
func TestColumnsMatchTabwriter(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"", "a", "bb", "relu_1", "héllo", "→x", "with\ttab", "x\xffy", "some longer cell text", "bad\x80\xc3", "\ufffd…"}
	for trial := 0; trial < 500; trial++ {
		var lines [][]string
		var want bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
		for l := rng.Intn(12); l >= 0; l-- {
			cells := make([]string, rng.Intn(6)) // no cells: an empty line
			for k := range cells {
				cells[k] = words[rng.Intn(len(words))]
				if trial%2 == 0 && (strings.Contains(cells[k], "\t") || strings.Contains(cells[k], "\xff")) {
					cells[k] = "plain"
				}
			}
			lines = append(lines, cells)
			tw.Write([]byte(strings.Join(cells, "\t") + "\n"))
		}
		tw.Flush()
		var got bytes.Buffer
		err := writeColumns(&got, func(add func(cells ...string)) {
			for _, l := range lines {
				add(l...)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("trial %d:\ngot\n%q\nwant\n%q", trial, got.String(), want.String())
		}
	}
}

// shapesNodeJSON is an entry of nodes[] in `shapes --format json` as
// encoding/json writes it: the reference for appendShapesNode.
type shapesNodeJSON struct {
	Name    string              `json:"name"`
	OpType  string              `json:"op_type"`
	Domain  string              `json:"domain,omitempty"`
	Graph   string              `json:"graph,omitempty"`
	Inputs  []report.TensorInfo `json:"inputs"`
	Outputs []report.TensorInfo `json:"outputs"`
}

// shapesJSONReference writes r with its graph's nodes encoded by
// encoding/json from a node list, as `shapes --format json` did before it
// streamed them.
func shapesJSONReference(t *testing.T, r shapesJSON) string {
	var nodes []shapesNodeJSON
	walkNodes(r.graph.Nodes, "", func(n *ir.Node, path string) {
		nodes = append(nodes, shapesNodeJSON{
			Name: n.Name, OpType: n.OpType, Domain: n.Domain, Graph: path,
			Inputs: report.TensorInfos(n.Inputs), Outputs: report.TensorInfos(n.Outputs),
		})
	})
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false) // as writeJSON encodes the whole report
	if err := enc.Encode(nodes); err != nil {
		t.Fatal(err)
	}
	r.Nodes = bytes.TrimSuffix(js.Bytes(), []byte("\n"))
	var want bytes.Buffer
	if err := writeJSON(&want, &r); err != nil {
		t.Fatal(err)
	}
	return want.String()
}

// shapesTestGraphs returns graphs for the shapes output tests: a subgraph
// body; a graph with nested subgraphs, absent values, unranked and scalar
// shapes, a sequence, an unknown dtype, escapes, symbols with HTML
// characters and invalid UTF-8; and that graph's nodes repeated over
// several chunks (see writeChunks), the last one short, with long and
// non-ASCII names and a subgraph owner at each chunk's end.
func shapesTestGraphs() (body, full, many *ir.Graph) {
	val := func(name string, dt ir.DType, s ir.Shape) *ir.Value {
		return &ir.Value{Name: name, DType: dt, Shape: s}
	}
	x := val("x", ir.Float32, ir.RankedShape(ir.D(1), ir.S("n")))
	odd := val("s", ir.Int64, ir.RankedShape(ir.S("a<b&c>"), ir.S("n\"q"), ir.S("ü"), ir.D(0), ir.D(-1)))
	seq := &ir.Value{Name: "seq", Kind: ir.SequenceValue, DType: ir.Float16, Shape: ir.Unranked()}
	body = &ir.Graph{Nodes: []*ir.Node{
		{Name: "inner", OpType: "Identity", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{val("y", ir.Float32, ir.Unranked())}},
	}}
	deeper := &ir.Graph{Nodes: []*ir.Node{
		{Name: "deep", OpType: "If", Inputs: []*ir.Value{val("c", ir.Bool, ir.RankedShape())}, Attrs: []*ir.Attribute{ir.GraphAttr("then_branch", body), ir.GraphAttr("else_branch", body)}},
	}}
	full = &ir.Graph{Inputs: []*ir.Value{x, seq}, Outputs: []*ir.Value{odd}, Nodes: []*ir.Node{
		{Name: "a<b>", OpType: "Relu", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{}},
		{Name: "c", OpType: "Loop", Domain: "d", Inputs: []*ir.Value{nil, seq, nil}, Outputs: []*ir.Value{nil},
			Attrs: []*ir.Attribute{ir.GraphAttr("body", deeper), graphsAttr("branches", body, deeper)}},
		{Name: "é\u2028\x01\x80\\", OpType: "Add", Domain: "ai.onnx", Inputs: []*ir.Value{
			val("<&>", ir.Float16, ir.RankedShape()), odd, val("weird", ir.DType(999), ir.KnownShape(2, 3)),
		}},
	}}
	many = &ir.Graph{Inputs: full.Inputs, Outputs: full.Outputs}
	long := strings.Repeat("model.layers.17.self_attn.q_proj/", 3)
	for i := 0; len(many.Nodes) < 2*nodesPerChunk+10; i++ {
		n := *full.Nodes[i%len(full.Nodes)]
		switch {
		case (len(many.Nodes)+1)%nodesPerChunk == 0:
			n = *full.Nodes[1] // owns subgraphs, last of its chunk
		case i%7 == 0:
			n.Name = long + strconv.Itoa(i)
		case i%11 == 0:
			n.Name = "ünïcödé→" + strings.Repeat("λ", i%60)
		}
		many.Nodes = append(many.Nodes, &n)
	}
	return body, full, many
}

// TestShapesJSONStreamed: the streamed shapes JSON is byte for byte what
// encoding the whole report gives, with nodes, nested subgraph nodes,
// absent values, unranked and scalar shapes, non-tensor values, escapes,
// and with no nodes.
func TestShapesJSONStreamed(t *testing.T) {
	x := &ir.Value{Name: "x", DType: ir.Float32, Shape: ir.RankedShape(ir.D(1), ir.S("n"))}
	body, full, many := shapesTestGraphs()
	for _, g := range []*ir.Graph{{}, {Nodes: []*ir.Node{}}, body, full, many} {
		r := shapesJSON{Header: report.Header{SchemaVersion: 1, ToolVersion: "v<1>"}, Model: "m\n\"x\".onnx", Opsets: map[string]int64{"ai.onnx": 17},
			Bindings: map[string]int64{}, Inputs: report.TensorInfos([]*ir.Value{x, nil}), Outputs: []report.TensorInfo{},
			Nodes: json.RawMessage("null"), Warnings: []string{"w & <b>"}, UnknownOps: []string{}, Unbound: []string{}, graph: g}
		if len(g.Nodes) > 0 {
			r.Nodes = json.RawMessage("[]")
		}
		want := shapesJSONReference(t, r)
		var got bytes.Buffer
		if err := writeShapesJSON(&got, &r); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Errorf("%d nodes:\ngot\n%s\nwant\n%s", len(g.Nodes), got.String(), want)
		}
	}
}

// TestRowCut: cutting a cell in place gives what cutting its string by
// runes gives (head, ellipsis, a third of the width as tail), for ASCII
// and multi-byte text around the limit.
func TestRowCut(t *testing.T) {
	ref := func(s string, n int) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		tail := n / 3
		return string(r[:n-tail-1]) + "…" + string(r[len(r)-tail:])
	}
	for _, s := range []string{"", "abc", "abcdefghij", "héllo→wörld_of_tensors", "ééééééééééé", "a→b→c→d→e→f→g", "x\xffyzzzzzzzzzz"} {
		for n := 1; n <= 12; n++ {
			var r row
			r.text = append(r.text, "pre:"...)
			r.text = append(r.text, s...)
			r.cut(4, n)
			r.text = append(r.text, ":post"...)
			if got, want := string(r.text), "pre:"+ref(s, n)+":post"; got != want {
				t.Errorf("cut(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

// TestCellStats: the one-pass count is utf8.RuneCount (an invalid byte is
// one rune) and the special bytes are those tabwriter.Write acts on, on
// random bytes mixing ASCII, multi-byte runes, their fragments and invalid
// bytes.
func TestCellStats(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	pieces := []string{"a", "Z", " ", "\t", "\n", "\v", "\f", "\r", "é", "…", "→", "😀", "\xff", "\xe2\x80", "\x80", "\xc3", "\xf0\x9f"}
	for trial := 0; trial < 2000; trial++ {
		var c []byte
		for k := rng.Intn(8); k > 0; k-- {
			c = append(c, pieces[rng.Intn(len(pieces))]...)
		}
		runes, special := cellStats(c)
		if want := utf8.RuneCount(c); runes != want {
			t.Errorf("cellStats(%q) runes = %d, want %d", c, runes, want)
		}
		want := false
		for _, b := range c {
			want = want || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == tabwriter.Escape
		}
		if special != want {
			t.Errorf("cellStats(%q) special = %v, want %v", c, special, want)
		}
	}
}

// TestPlainPrefix: the word-at-a-time scan stops where a byte-by-byte one
// does, for every position and kind of stopping byte in strings longer
// than a word.
func TestPlainPrefix(t *testing.T) {
	ref := func(s []byte) int {
		for i, b := range s {
			if b < 0x20 || b >= utf8.RuneSelf {
				return i
			}
		}
		return len(s)
	}
	base := []byte("abcdefghijklmnopqrstuvwxyz_0123456789 ~!")
	for n := 0; n <= len(base); n++ {
		for at := 0; at <= n; at++ {
			for _, stop := range []byte{0x00, '\t', 0x1f, 0x7f, 0x80, 0xc3, 0xff} {
				s := append([]byte(nil), base[:n]...)
				if at < n {
					s[at] = stop
				}
				if got, want := plainPrefix(s), ref(s); got != want {
					t.Fatalf("plainPrefix(%q) = %d, want %d", s, got, want)
				}
			}
		}
	}
}

// tabwriterRows is the reference for writeRows: every chunk's lines, in
// order, through tabwriter itself.
func tabwriterRows(chunks int, gen rowsGen) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, columnPadding, ' ', 0)
	var r row
	for k := 0; k < chunks; k++ {
		gen(k, &r, func() {
			var cells []string
			for c := range r.ends {
				cells = append(cells, string(r.cell(c)))
			}
			tw.Write([]byte(strings.Join(cells, "\t") + "\n"))
		})
	}
	tw.Flush()
	return b.String()
}

// TestColumnsChunked: lines split into chunks anywhere (empty chunks, a
// column block running over several chunks) are laid out as tabwriter
// lays out all of them at once, whether chunks are measured and formatted
// on one goroutine or several.
func TestColumnsChunked(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	words := []string{"", "a", "bb", "relu_1", "héllo", "→x", "some longer cell text", "x\xffy"}
	for trial := 0; trial < 300; trial++ {
		chunks := make([][][]string, 1+rng.Intn(8))
		for k := range chunks {
			for l := rng.Intn(5); l > 0; l-- {
				cells := make([]string, rng.Intn(5))
				for c := range cells {
					cells[c] = words[rng.Intn(len(words)-trial%2)] // odd trials: no escape byte
				}
				chunks[k] = append(chunks[k], cells)
			}
		}
		gen := func(k int, r *row, emit func()) {
			for _, cells := range chunks[k] {
				r.reset()
				for _, c := range cells {
					r.text = append(r.text, c...)
					r.endCell()
				}
				emit()
			}
		}
		var got bytes.Buffer
		if err := writeRows(&got, len(chunks), gen); err != nil {
			t.Fatal(err)
		}
		if want := tabwriterRows(len(chunks), gen); got.String() != want {
			t.Fatalf("trial %d, chunks %q:\ngot\n%q\nwant\n%q", trial, chunks, got.String(), want)
		}
	}
}

// TestShapesTableChunked: the shapes table of a graph of several chunks
// (subgraphs, long and non-ASCII names cut to the column caps, a subgraph
// owner at a chunk's end) is what tabwriter makes of its lines, and so is
// that of a graph with a tab in a name (which goes through tabwriter).
func TestShapesTableChunked(t *testing.T) {
	_, full, many := shapesTestGraphs()
	tab := &ir.Graph{Nodes: append([]*ir.Node{{Name: "tab\there", OpType: "Relu"}}, many.Nodes...)}
	for _, g := range []*ir.Graph{{}, full, many, tab} {
		chunks, gen := shapesTable("m.onnx", g)
		var got bytes.Buffer
		if err := writeRows(&got, chunks, gen); err != nil {
			t.Fatal(err)
		}
		want := tabwriterRows(chunks, gen)
		if got.String() != want {
			t.Errorf("%d nodes:\ngot\n%s\nwant\n%s", len(g.Nodes), got.String(), want)
		}
		if len(g.Nodes) > nodesPerChunk && !strings.Contains(want, "…") {
			t.Errorf("%d nodes: no cell was cut", len(g.Nodes))
		}
	}
}

// graphsAttr returns a GRAPHS attribute holding gs.
func graphsAttr(name string, gs ...*ir.Graph) *ir.Attribute {
	a := &ir.Attribute{Name: name, Type: ir.AttrGraphs}
	a.SetGraphs(gs)
	return a
}
