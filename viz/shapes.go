package viz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Shapes is `shapes --format json`: the nodes[].inputs/outputs form of
// the report contract, plus the graph's own inputs and outputs.
type Shapes struct {
	report.Header
	Model    string              `json:"model"`
	Opsets   map[string]int64    `json:"opsets"`
	Bindings map[string]int64    `json:"bindings"`
	Inputs   []report.TensorInfo `json:"inputs"`
	Outputs  []report.TensorInfo `json:"outputs"`
	// Nodes holds the place of graph's nodes: null for a graph with none,
	// else [], into which WriteShapesJSON streams them.
	Nodes      json.RawMessage `json:"nodes"`
	Warnings   []string        `json:"warnings"`
	UnknownOps []string        `json:"unknown_ops"`
	Unbound    []string        `json:"unbound_symbols"`

	graph *ir.Graph
}

// NewShapes returns the shapes of model m, read from path with its
// symbols bound as bindings, with the warnings of reading it and the ops
// and symbols shape inference left unknown.
func NewShapes(path string, m *ir.Model, bindings map[string]int64, warnings, unknownOps, unbound []string, toolVersion string) *Shapes {
	g := m.Graph
	r := &Shapes{
		Header:     report.Header{SchemaVersion: report.SchemaVersion, ToolVersion: toolVersion},
		Model:      path,
		Opsets:     map[string]int64{},
		Bindings:   bindings,
		Inputs:     report.TensorInfos(g.Inputs),
		Outputs:    report.TensorInfos(g.Outputs),
		Nodes:      json.RawMessage("null"),
		Warnings:   nonNilStrings(warnings),
		UnknownOps: nonNilStrings(unknownOps),
		Unbound:    nonNilStrings(unbound),
		graph:      g,
	}
	if len(g.Nodes) > 0 {
		r.Nodes = json.RawMessage("[]")
	}
	for _, o := range m.Opsets {
		d := o.Domain
		if d == "" {
			d = "ai.onnx"
		}
		r.Opsets[d] = o.Version
	}
	return r
}

// walkNodes visits nodes (of a graph, in topological order), each
// subgraph's nodes right after the node that owns it; path names the
// enclosing subgraphs.
func walkNodes(nodes []*ir.Node, path string, visit func(n *ir.Node, path string)) {
	for _, n := range nodes {
		visit(n, path)
		for _, a := range n.Attrs {
			sub := a.Graphs()
			if a.G() != nil {
				sub = append([]*ir.Graph{a.G()}, sub...)
			}
			for _, sg := range sub {
				p := n.Name + "." + a.Name
				if path != "" {
					p = path + "/" + p
				}
				walkNodes(sg.Nodes, p, visit)
			}
		}
	}
}

// WriteShapesText writes the shapes table of graph g of the model at
// path, in chunks of nodes (see render.WriteRows). Every line is built in one reused row buffer: formatting
// each cell as its own string (names, shapes, joined lists, rune-sliced
// cuts) allocated 300 MB and took most of `shapes` on a 112k-node graph.
func WriteShapesText(w io.Writer, path string, g *ir.Graph) error {
	chunks, gen := shapesTable(path, g)
	return render.WriteRows(w, chunks, gen)
}

// shapesTable returns the lines of the shapes table of graph g of the
// model at path, as chunks for render.WriteRows: the header and g's inputs, then
// a line per node, chunk by chunk, then g's outputs.
func shapesTable(path string, g *ir.Graph) (chunks int, gen render.RowsGen) {
	header := "# " + path + ": " + strconv.Itoa(g.NodeCount()) + " nodes"
	chunks = render.ChunkCount(len(g.Nodes))
	return chunks, func(k int, r *render.Row, emit func()) {
		graphIO := func(label string, v *ir.Value) {
			r.Reset()
			r.Text = append(r.Text, label...)
			r.EndCell()
			r.Text = appendValueText(r.Text, v)
			r.EndCell()
			emit()
		}
		if k == 0 {
			r.Reset()
			r.Text = append(r.Text, header...)
			r.EndCell()
			emit()
			for _, in := range g.Inputs {
				graphIO("input", in)
			}
		}
		walkNodes(render.ChunkNodes(g.Nodes, k), "", func(n *ir.Node, path string) {
			r.Reset()
			if path != "" {
				r.Text = render.AppendSpaces(r.Text, 2*(strings.Count(path, "/")+1))
			}
			from := len(r.Text)
			r.Text = append(r.Text, n.Name...)
			r.Cut(from, maxNameCell)
			r.EndCell()
			from = len(r.Text)
			if n.Domain != "" && n.Domain != "ai.onnx" {
				r.Text = append(append(r.Text, n.Domain...), '.')
			}
			r.Text = append(r.Text, n.OpType...)
			r.Cut(from, maxOpCell)
			r.EndCell()
			from = len(r.Text)
			r.Text = appendValuesText(r.Text, n.Inputs)
			r.Cut(from, maxInputsCell)
			r.EndCell()
			r.Text = append(r.Text, "-> "...)
			from = len(r.Text)
			r.Text = appendValuesText(r.Text, n.Outputs)
			r.Cut(from, maxOutputsCell)
			r.EndCell()
			emit()
		})
		if k == chunks-1 {
			for _, o := range g.Outputs {
				graphIO("output", o)
			}
		}
	}
}

// Column caps of the shapes text: one long node name or a Concat of fifty
// inputs would otherwise pad every line of the table to its width. The
// outputs are cut too, to keep a line readable; --format json has
// every name and shape in full.
const (
	maxNameCell    = 40
	maxOpCell      = 28
	maxInputsCell  = 60
	maxOutputsCell = 64
)

// appendValueText appends "name:dtype[shape]", with seq:, opt: or map:
// before the dtype of a non-tensor value, or "-" for an absent one.
func appendValueText(b []byte, v *ir.Value) []byte {
	if v == nil {
		return append(b, '-')
	}
	b = append(append(b, v.Name...), ':')
	switch v.Kind {
	case ir.SequenceValue:
		b = append(b, "seq:"...)
	case ir.OptionalValue:
		b = append(b, "opt:"...)
	case ir.MapValue:
		b = append(b, "map:"...)
	}
	b = append(b, v.DType.String()...)
	return v.Shape.AppendText(b)
}

// appendValuesText appends the values' texts separated by ", ".
func appendValuesText(b []byte, vs []*ir.Value) []byte {
	for i, v := range vs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendValueText(b, v)
	}
	return b
}

// WriteShapesJSON writes r as an indented encoding/json encoder (HTML
// left unescaped) would with its nodes in place,
// but streams the nodes, appending each straight from the graph into one
// reused buffer: encoding the whole report at once holds it twice
// (compact, then indented), 67 MB each on a 112k-node graph, and building
// a node list with a report.TensorInfo per value first was still 100 MB
// and 0.44M objects (BenchmarkScaleStages/shapes-json B/op).
func WriteShapesJSON(w io.Writer, r *Shapes) error {
	var head bytes.Buffer
	enc := json.NewEncoder(&head)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	if r.graph == nil || len(r.graph.Nodes) == 0 {
		_, err := w.Write(head.Bytes())
		return err
	}
	// Newlines inside strings are escaped, so the marker can only be the
	// nodes field itself.
	const marker = "\n  \"nodes\": [],\n"
	before, after, ok := bytes.Cut(head.Bytes(), []byte(marker))
	if !ok {
		return fmt.Errorf("shapes: no %q in the JSON written", marker)
	}
	if _, err := w.Write(before); err != nil {
		return err
	}
	chunks := render.ChunkCount(len(r.graph.Nodes))
	return render.WriteChunks(w, chunks, render.NodesPerChunk*jsonBytesPerNode, func(k int, b []byte) []byte {
		if k == 0 {
			b = append(b, "\n  \"nodes\": ["...)
		}
		first := k == 0
		walkNodes(render.ChunkNodes(r.graph.Nodes, k), "", func(n *ir.Node, path string) {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendShapesNode(append(b, "\n    "...), n, path)
		})
		if k == chunks-1 {
			b = append(append(b, "\n  ],\n"...), after...)
		}
		return b
	})
}

// appendShapesNode appends node n, inside the subgraphs path names, as
// an indented encoder writes an entry of nodes[] (without its leading indent):
//
//	{"name", "op_type", "domain" (omitted when empty), "graph" (omitted
//	when empty), "inputs" and "outputs": [{"name", "dtype", "shape"}]}
//
// with absent (nil) values left out of inputs and outputs, and the shape
// null when unranked, else its dims: numbers, or strings for symbols.
// With encoding/json (reflection and a second indenting pass per node)
// writing the JSON of a 112k-node graph allocated 1.12M objects, with this
// from a node list 0.44M, and from the graph none per node.
// TestShapesJSONStreamed holds it to encoding/json's bytes.
func appendShapesNode(b []byte, n *ir.Node, path string) []byte {
	const in1, in2 = "\n      ", "\n        "
	b = append(b, '{')
	field := func(name, v string) {
		b = append(append(append(b, in1...), name...), `": `...)
		b = appendJSONString(b, v, false)
		b = append(b, ',')
	}
	field(`"name`, n.Name)
	field(`"op_type`, n.OpType)
	if n.Domain != "" {
		field(`"domain`, n.Domain)
	}
	if path != "" {
		field(`"graph`, path)
	}
	list := func(name string, vs []*ir.Value) {
		b = append(append(b, in1...), name...)
		open := false
		for _, v := range vs {
			if v == nil {
				continue
			}
			if open {
				b = append(b, ',')
			} else {
				b = append(b, '[')
				open = true
			}
			b = append(append(b, in2...), '{')
			b = append(append(b, in2...), `  "name": `...)
			b = append(appendJSONString(b, v.Name, false), ',')
			b = append(append(b, in2...), `  "dtype": `...)
			b = append(appendJSONString(b, v.DType.String(), false), ',')
			b = append(append(b, in2...), `  "shape": `...)
			switch {
			case !v.Shape.Ranked:
				b = append(b, "null"...)
			case len(v.Shape.Dims) == 0:
				b = append(b, "[]"...)
			default:
				b = append(b, '[')
				for k, d := range v.Shape.Dims {
					if k > 0 {
						b = append(b, ',')
					}
					b = append(b, in2+"    "...)
					if d.IsKnown() {
						b = strconv.AppendInt(b, d.Value, 10)
					} else {
						// report.Shape marshals symbols with json.Marshal,
						// which escapes HTML characters.
						b = appendJSONString(b, d.Sym, true)
					}
				}
				b = append(append(b, in2+"  "...), ']')
			}
			b = append(append(b, in2...), '}')
		}
		if !open {
			b = append(b, "[]"...)
			return
		}
		b = append(append(b, in1...), ']')
	}
	list(`"inputs": `, n.Inputs)
	b = append(b, ',')
	list(`"outputs": `, n.Outputs)
	return append(b, "\n    }"...)
}

// appendJSONString appends s quoted as encoding/json quotes it (with HTML
// escaping when html is set). Plain printable ASCII is copied; anything
// else goes through encoding/json itself.
func appendJSONString(b []byte, s string, html bool) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || html && (c == '<' || c == '>' || c == '&') {
			plain = false
			break
		}
	}
	if plain {
		return append(append(append(b, '"'), s...), '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// jsonBytesPerNode is what a node takes in the shapes JSON, for sizing
// chunk buffers (see render.WriteChunks): that of an LLM's node (the
// 112k-node graph of BenchmarkScaleStages: 600) with a margin.
const jsonBytesPerNode = 1024
