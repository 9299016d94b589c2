package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/internal/pipeline"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/spf13/cobra"
)

func init() { register(newShapesCmd) }

// shapesJSON is `shapes --format json`: the nodes[].inputs/outputs form of
// the report contract, plus the graph's own inputs and outputs.
type shapesJSON struct {
	report.Header
	Model      string              `json:"model"`
	Opsets     map[string]int64    `json:"opsets"`
	Bindings   map[string]int64    `json:"bindings"`
	Inputs     []report.TensorInfo `json:"inputs"`
	Outputs    []report.TensorInfo `json:"outputs"`
	Nodes      []shapesNodeJSON    `json:"nodes"`
	Warnings   []string            `json:"warnings"`
	UnknownOps []string            `json:"unknown_ops"`
	Unbound    []string            `json:"unbound_symbols"`
}

type shapesNodeJSON struct {
	Name    string              `json:"name"`
	OpType  string              `json:"op_type"`
	Domain  string              `json:"domain,omitempty"`
	Graph   string              `json:"graph,omitempty"` // enclosing subgraph path for nested nodes
	Inputs  []report.TensorInfo `json:"inputs"`
	Outputs []report.TensorInfo `json:"outputs"`
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
		Warnings:   nonNil(l.Warnings),
		UnknownOps: nonNil(l.Infer.UnknownOps),
		Unbound:    nonNil(l.Infer.Unbound),
	}
	for _, o := range l.Model.Opsets {
		d := o.Domain
		if d == "" {
			d = "ai.onnx"
		}
		r.Opsets[d] = o.Version
	}
	walkNodes(g, "", func(n *ir.Node, path string) {
		r.Nodes = append(r.Nodes, shapesNodeJSON{
			Name: n.Name, OpType: n.OpType, Domain: n.Domain, Graph: path,
			Inputs: report.TensorInfos(n.Inputs), Outputs: report.TensorInfos(n.Outputs),
		})
	})
	return r
}

// walkNodes visits nodes in topological order, each subgraph's nodes right
// after the node that owns it; path names the enclosing subgraphs.
func walkNodes(g *ir.Graph, path string, visit func(n *ir.Node, path string)) {
	for _, n := range g.Nodes {
		visit(n, path)
		for _, a := range n.Attrs {
			sub := a.Graphs
			if a.G != nil {
				sub = append([]*ir.Graph{a.G}, sub...)
			}
			for _, sg := range sub {
				p := n.Name + "." + a.Name
				if path != "" {
					p = path + "/" + p
				}
				walkNodes(sg, p, visit)
			}
		}
	}
}

// writeShapesText writes the shapes table. Every line is built in one
// reused row buffer: formatting each cell as its own string (names,
// shapes, joined lists, rune-sliced cuts) allocated 300 MB and took most
// of `shapes` on a 112k-node graph.
func writeShapesText(w io.Writer, l *pipeline.Loaded) error {
	g := l.Model.Graph
	header := "# " + l.Path + ": " + strconv.Itoa(g.NodeCount()) + " nodes"
	var r row
	return writeRows(w, func(emit func(*row)) {
		r.reset()
		r.text = append(r.text, header...)
		r.endCell()
		emit(&r)
		graphIO := func(label string, v *ir.Value) {
			r.reset()
			r.text = append(r.text, label...)
			r.endCell()
			r.text = appendValueText(r.text, v)
			r.endCell()
			emit(&r)
		}
		for _, in := range g.Inputs {
			graphIO("input", in)
		}
		walkNodes(g, "", func(n *ir.Node, path string) {
			r.reset()
			if path != "" {
				r.text = append(r.text, strings.Repeat("  ", strings.Count(path, "/")+1)...)
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
			emit(&r)
		})
		for _, o := range g.Outputs {
			graphIO("output", o)
		}
	})
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

// writeShapesJSON writes r exactly as writeJSON would, but encodes the
// nodes one at a time into a buffered stream: encoding the whole report
// at once holds it twice (compact, then indented); on a 112k-node graph
// that was 67 MB of output held twice and most of 4.5 s.
func writeShapesJSON(w io.Writer, r *shapesJSON) error {
	nodes := r.Nodes
	if len(nodes) == 0 {
		return writeJSON(w, r) // null or [], as it is
	}
	r.Nodes = []shapesNodeJSON{}
	var head bytes.Buffer
	err := writeJSON(&head, r)
	r.Nodes = nodes
	if err != nil {
		return err
	}
	// Newlines inside strings are escaped, so the marker can only be the
	// nodes field itself.
	const marker = "\n  \"nodes\": [],\n"
	before, after, ok := bytes.Cut(head.Bytes(), []byte(marker))
	if !ok {
		return writeJSON(w, r)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(before)
	bw.WriteString("\n  \"nodes\": [\n")
	var node []byte
	for i := range nodes {
		node = appendShapesNode(append(node[:0], "    "...), &nodes[i])
		if i+1 < len(nodes) {
			node = append(node, ',')
		}
		bw.Write(append(node, '\n'))
	}
	bw.WriteString("  ],\n")
	bw.Write(after)
	return bw.Flush()
}

// appendShapesNode appends n as writeJSON indents it at depth 2 (a
// nodes[] entry), without its leading indent. With encoding/json
// (reflection and a second indenting pass per node) writing the JSON of a
// 112k-node graph allocated 1.12M objects, with this 0.44M, and the whole
// command's CPU time went from 2.4 s to 1.8 s (BenchmarkScaleStages,
// /usr/bin/time, 2-core machine). TestShapesJSONStreamed holds it to
// encoding/json's bytes.
func appendShapesNode(b []byte, n *shapesNodeJSON) []byte {
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
	if n.Graph != "" {
		field(`"graph`, n.Graph)
	}
	list := func(name string, ts []report.TensorInfo) {
		b = append(append(b, in1...), name...)
		switch {
		case ts == nil:
			b = append(b, "null"...)
			return
		case len(ts) == 0:
			b = append(b, "[]"...)
			return
		}
		b = append(b, '[')
		for i := range ts {
			t := &ts[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(append(b, in2...), '{')
			b = append(append(b, in2...), `  "name": `...)
			b = append(appendJSONString(b, t.Name, false), ',')
			b = append(append(b, in2...), `  "dtype": `...)
			b = append(appendJSONString(b, t.DType, false), ',')
			b = append(append(b, in2...), `  "shape": `...)
			switch {
			case t.Shape == nil:
				b = append(b, "null"...)
			case len(t.Shape) == 0:
				b = append(b, "[]"...)
			default:
				b = append(b, '[')
				for k, d := range t.Shape {
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
