package viz

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

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
func shapesJSONReference(t *testing.T, r Shapes) string {
	var nodes []shapesNodeJSON
	walkNodes(r.graph.Nodes, "", func(n *ir.Node, path string) {
		nodes = append(nodes, shapesNodeJSON{
			Name: n.Name, OpType: n.OpType, Domain: n.Domain, Graph: path,
			Inputs: report.TensorInfos(n.Inputs), Outputs: report.TensorInfos(n.Outputs),
		})
	})
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false) // as WriteShapesJSON encodes the whole report
	if err := enc.Encode(nodes); err != nil {
		t.Fatal(err)
	}
	r.Nodes = bytes.TrimSuffix(js.Bytes(), []byte("\n"))
	var want bytes.Buffer
	enc = json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&r); err != nil {
		t.Fatal(err)
	}
	return want.String()
}

// shapesTestGraphs returns graphs for the shapes output tests: a subgraph
// body; a graph with nested subgraphs, absent values, unranked and scalar
// shapes, a sequence, an unknown dtype, escapes, symbols with HTML
// characters and invalid UTF-8; and that graph's nodes repeated over
// several chunks (see render.WriteChunks), the last one short, with long and
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
	for i := 0; len(many.Nodes) < 2*render.NodesPerChunk+10; i++ {
		n := *full.Nodes[i%len(full.Nodes)]
		switch {
		case (len(many.Nodes)+1)%render.NodesPerChunk == 0:
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
		r := Shapes{Header: report.Header{SchemaVersion: 1, ToolVersion: "v<1>"}, Model: "m\n\"x\".onnx", Opsets: map[string]int64{"ai.onnx": 17},
			Bindings: map[string]int64{}, Inputs: report.TensorInfos([]*ir.Value{x, nil}), Outputs: []report.TensorInfo{},
			Nodes: json.RawMessage("null"), Warnings: []string{"w & <b>"}, UnknownOps: []string{}, Unbound: []string{}, graph: g}
		if len(g.Nodes) > 0 {
			r.Nodes = json.RawMessage("[]")
		}
		want := shapesJSONReference(t, r)
		var got bytes.Buffer
		if err := WriteShapesJSON(&got, &r); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Errorf("%d nodes:\ngot\n%s\nwant\n%s", len(g.Nodes), got.String(), want)
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
		if err := render.WriteRows(&got, chunks, gen); err != nil {
			t.Fatal(err)
		}
		want := tabwriterRows(chunks, gen)
		if got.String() != want {
			t.Errorf("%d nodes:\ngot\n%s\nwant\n%s", len(g.Nodes), got.String(), want)
		}
		if len(g.Nodes) > render.NodesPerChunk && !strings.Contains(want, "…") {
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

// tabwriterRows is the reference for render.WriteRows: every chunk's
// lines, in order, through tabwriter itself.
func tabwriterRows(chunks int, gen render.RowsGen) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	var r render.Row
	for k := 0; k < chunks; k++ {
		gen(k, &r, func() {
			var cells []string
			for c := range r.NumCells() {
				cells = append(cells, string(r.Cell(c)))
			}
			tw.Write([]byte(strings.Join(cells, "\t") + "\n"))
		})
	}
	tw.Flush()
	return b.String()
}
