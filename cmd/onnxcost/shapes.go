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

func writeShapesText(w io.Writer, l *pipeline.Loaded) error {
	g := l.Model.Graph
	header := "# " + l.Path + ": " + strconv.Itoa(g.NodeCount()) + " nodes"
	return writeColumns(w, func(add func(cells ...string)) {
		add(header)
		for _, in := range g.Inputs {
			add("input", valueText(in))
		}
		walkNodes(g, "", func(n *ir.Node, path string) {
			indent := ""
			if path != "" {
				indent = strings.Repeat("  ", strings.Count(path, "/")+1)
			}
			add(indent+cell(n.Name, maxNameCell), cell(ir.QualifiedOp(n.Domain, n.OpType), maxOpCell), cell(valuesText(n.Inputs), maxInputsCell), "-> "+cell(valuesText(n.Outputs), maxOutputsCell))
		})
		for _, o := range g.Outputs {
			add("output", valueText(o))
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

// cell cuts s to n runes, keeping its head and tail around an ellipsis.
func cell(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	tail := n / 3
	return string(r[:n-tail-1]) + "…" + string(r[len(r)-tail:])
}

func valueText(v *ir.Value) string {
	if v == nil {
		return "-"
	}
	kind := ""
	switch v.Kind {
	case ir.SequenceValue:
		kind = "seq:"
	case ir.OptionalValue:
		kind = "opt:"
	case ir.MapValue:
		kind = "map:"
	}
	return v.Name + ":" + kind + v.DType.String() + v.Shape.String()
}

func valuesText(vs []*ir.Value) string {
	switch len(vs) {
	case 0:
		return ""
	case 1:
		return valueText(vs[0])
	}
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		parts = append(parts, valueText(v))
	}
	return strings.Join(parts, ", ")
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
	var node bytes.Buffer
	enc := json.NewEncoder(&node)
	enc.SetIndent("    ", "  ")
	enc.SetEscapeHTML(false)
	for i := range nodes {
		node.Reset()
		if err := enc.Encode(&nodes[i]); err != nil {
			return err
		}
		bw.WriteString("    ")
		bw.Write(bytes.TrimSuffix(node.Bytes(), []byte("\n")))
		if i+1 < len(nodes) {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("  ],\n")
	bw.Write(after)
	return bw.Flush()
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
