package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/spf13/cobra"
)

func init() { register(newOptimizeCmd) }

func newOptimizeCmd(stdout, stderr io.Writer) *cobra.Command {
	var mf modelFlags
	var pf passFlags
	var out string
	var list bool
	c := &cobra.Command{
		Use:   "optimize MODEL.onnx -o OUT.onnx",
		Short: "Write the fused graph as an ONNX model (fused ops in domain onnxcost)",
		Long: `optimize runs the fusion passes and writes the resulting graph. Fused ops are
in the custom domain "onnxcost" (imported at version 1), each with a
fused_from attribute naming the nodes it replaced, so the file opens in
Netron. Weights are copied as they are: a BatchNormalization folded into a
Conv changes the weight values only when they were small enough to be read
(the folded bias of a graph-only model has no contents), so the output is
for inspection, not for running.

Symbolic dims stay symbolic unless bound with --batch/--dim.`,
		Args: func(c *cobra.Command, args []string) error {
			if list {
				return nil
			}
			return exactArgs(1, "MODEL.onnx")(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			if list {
				return listPasses(stdout)
			}
			if out == "" {
				return usageErr("optimize: -o OUT.onnx is required")
			}
			if sameFile(args[0], out) {
				return usageErr("optimize: -o %s would overwrite the input model", out)
			}
			pf.dumpTo = stderr
			opt := pf.options()
			if _, err := passes.Selected(opt); err != nil {
				return usageErr("%v", err)
			}
			l, err := loadModel(args[0], &mf, loadOptions{})
			if err != nil {
				return err
			}
			printWarnings(stderr, l.Warnings)
			before := len(l.Model.Graph.Nodes)
			st, err := passes.Run(l.Model.Graph, opt)
			if err != nil {
				return usageErr("%s: %v", args[0], err)
			}
			importFusedDomain(l.Model)
			if err := ir.WriteFile(out, l.Model); err != nil {
				return usageErr("%s: %v", out, err)
			}
			fmt.Fprintf(stderr, "onnxcost: %s: %d nodes -> %d nodes in %d pass iterations (%s)\n",
				out, before, len(l.Model.Graph.Nodes), st.Iterations, changedText(st))
			return nil
		},
	}
	mf.add(c)
	pf.add(c)
	c.Flags().StringVarP(&out, "output", "o", "", "write the fused model to `OUT.onnx`")
	c.Flags().BoolVar(&list, "list", false, "list the passes, in run order, and exit")
	return c
}

// importFusedDomain makes the model import domain onnxcost at version 1
// when a node uses it, so ONNX tools (the checker, Netron) treat the fused
// ops as custom ops of a declared domain.
func importFusedDomain(m *ir.Model) {
	if m.Opset(passes.Domain) != 0 {
		return
	}
	for _, n := range m.Graph.Nodes {
		if n.Domain == passes.Domain {
			m.Opsets = append(m.Opsets, ir.OpsetImport{Domain: passes.Domain, Version: 1})
			return
		}
	}
}

// changedText lists the passes that changed the graph, in table order.
func changedText(st *passes.Stats) string {
	var parts []string
	for _, name := range passes.Names() {
		if k := st.Changed[name]; k > 0 {
			parts = append(parts, name)
		}
	}
	if len(parts) == 0 {
		return "nothing to fuse"
	}
	return "changed by " + strings.Join(parts, ", ")
}

func listPasses(w io.Writer) error {
	for _, p := range passes.Table {
		after := ""
		if len(p.After) > 0 {
			after = " (after " + strings.Join(p.After, ", ") + ")"
		}
		if _, err := fmt.Fprintf(w, "%-18s %s%s\n", p.Name, p.Doc, after); err != nil {
			return err
		}
	}
	return nil
}

// sameFile reports whether two paths name the same file (cleaned, absolute).
func sameFile(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
