package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/spf13/cobra"
)

func init() { register("shapes", newShapesCmd) }

// shapesJSON is `shapes --format json`: the nodes[].inputs/outputs form of
// the report contract, plus the graph's own inputs and outputs.
type shapesJSON struct {
	report.Header
	Model    string              `json:"model"`
	Opsets   map[string]int64    `json:"opsets"`
	Bindings map[string]int64    `json:"bindings"`
	Inputs   []report.TensorInfo `json:"inputs"`
	Outputs  []report.TensorInfo `json:"outputs"`
	// Nodes holds the place of graph's nodes: null for a graph with none,
	// else [], into which writeShapesJSON streams them.
	Nodes      json.RawMessage `json:"nodes"`
	Warnings   []string        `json:"warnings"`
	UnknownOps []string        `json:"unknown_ops"`
	Unbound    []string        `json:"unbound_symbols"`

	graph *ir.Graph
}

func newShapesCmd(stdout, stderr io.Writer) *cobra.Command {
	var mf modelFlags
	var format string
	c := &cobra.Command{
		Use:   "shapes MODEL.onnx",
		Short: "Print every node with its inputs' and outputs' dtypes and inferred shapes",
		Args:  exactArgs(1, "MODEL.onnx"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			l, err := loadModel(args[0], &mf, loadOptions{})
			if err != nil {
				return err
			}
			printWarnings(stderr, l.Warnings)
			if format == "json" {
				return writeShapesJSON(stdout, shapesReport(l))
			}
			return writeShapesText(stdout, l)
		},
	}
	mf.add(c)
	c.Flags().StringVar(&format, "format", "text", "output format: text|json")
	return c
}

func shapesReport(l *pipeline.Loaded) *shapesJSON {
	g := l.Model.Graph
	r := &shapesJSON{
		Header:     report.Header{SchemaVersion: report.SchemaVersion, ToolVersion: version},
		Model:      l.Path,
		Opsets:     map[string]int64{},
		Bindings:   l.Bindings,
		Inputs:     report.TensorInfos(g.Inputs),
		Outputs:    report.TensorInfos(g.Outputs),
		Nodes:      json.RawMessage("null"),
		Warnings:   nonNil(l.Warnings),
		UnknownOps: nonNil(l.Infer.UnknownOps),
		Unbound:    nonNil(l.Infer.Unbound),
		graph:      g,
	}
	if len(g.Nodes) > 0 {
		r.Nodes = json.RawMessage("[]")
	}
	for _, o := range l.Model.Opsets {
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

// writeShapesText writes the shapes table, in chunks of nodes (see
// writeRows). Every line is built in one reused row buffer: formatting
// each cell as its own string (names, shapes, joined lists, rune-sliced
// cuts) allocated 300 MB and took most of `shapes` on a 112k-node graph.
func writeShapesText(w io.Writer, l *pipeline.Loaded) error {
	chunks, gen := shapesTable(l.Path, l.Model.Graph)
	return writeRows(w, chunks, gen)
}

// shapesTable returns the lines of the shapes table of graph g of the
// model at path, as chunks for writeRows: the header and g's inputs, then
// a line per node, chunk by chunk, then g's outputs.
func shapesTable(path string, g *ir.Graph) (chunks int, gen rowsGen) {
	header := "# " + path + ": " + strconv.Itoa(g.NodeCount()) + " nodes"
	chunks = chunkCount(len(g.Nodes))
	return chunks, func(k int, r *row, emit func()) {
		graphIO := func(label string, v *ir.Value) {
			r.reset()
			r.text = append(r.text, label...)
			r.endCell()
			r.text = appendValueText(r.text, v)
			r.endCell()
			emit()
		}
		if k == 0 {
			r.reset()
			r.text = append(r.text, header...)
			r.endCell()
			emit()
			for _, in := range g.Inputs {
				graphIO("input", in)
			}
		}
		walkNodes(chunkNodes(g.Nodes, k), "", func(n *ir.Node, path string) {
			r.reset()
			if path != "" {
				r.text = appendSpaces(r.text, 2*(strings.Count(path, "/")+1))
			}
			from := len(r.text)
			r.text = append(r.text, n.Name...)
			r.cut(from, maxNameCell)
			r.endCell()
			from = len(r.text)
			if n.Domain != "" && n.Domain != "ai.onnx" {
				r.text = append(append(r.text, n.Domain...), '.')
			}
			r.text = append(r.text, n.OpType...)
			r.cut(from, maxOpCell)
			r.endCell()
			from = len(r.text)
			r.text = appendValuesText(r.text, n.Inputs)
			r.cut(from, maxInputsCell)
			r.endCell()
			r.text = append(r.text, "-> "...)
			from = len(r.text)
			r.text = appendValuesText(r.text, n.Outputs)
			r.cut(from, maxOutputsCell)
			r.endCell()
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

// writeShapesJSON writes r as writeJSON would with its nodes in place,
// but streams the nodes, appending each straight from the graph into one
// reused buffer: encoding the whole report at once holds it twice
// (compact, then indented), 67 MB each on a 112k-node graph, and building
// a node list with a report.TensorInfo per value first was still 100 MB
// and 0.44M objects (BenchmarkScaleStages/shapes-json B/op).
func writeShapesJSON(w io.Writer, r *shapesJSON) error {
	var head bytes.Buffer
	if err := writeJSON(&head, r); err != nil {
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
	chunks := chunkCount(len(r.graph.Nodes))
	return writeChunks(w, chunks, nodesPerChunk*jsonBytesPerNode, func(k int, b []byte) []byte {
		if k == 0 {
			b = append(b, "\n  \"nodes\": ["...)
		}
		first := k == 0
		walkNodes(chunkNodes(r.graph.Nodes, k), "", func(n *ir.Node, path string) {
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
// writeJSON indents an entry of nodes[] (without its leading indent):
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

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeAs writes a result as --format asks: "json", "csv", or text for
// anything else (the command has checked the value already).
func writeAs[T any](w io.Writer, format string, v T, csv, text func(io.Writer, T) error) error {
	switch format {
	case "json":
		return writeJSON(w, v)
	case "csv":
		return csv(w, v)
	}
	return text(w, v)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func checkFormat(got string, allowed ...string) error {
	return checkValue("--format", got, allowed...)
}

// exactArgs is cobra.ExactArgs with a usage error naming what is missing.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s: want %s, got %d argument(s) (see '%s --help')", c.Name(), names, len(args), c.CommandPath())
		}
		return nil
	}
}
