package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/internal/outfile"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/spf13/cobra"
)

func init() { register("optimize", newOptimizeCmd) }

func newOptimizeCmd(stdout, stderr io.Writer) *cobra.Command {
	var mf modelFlags
	var pf passFlags
	var out string
	var list bool
	var ann annotateFlags
	c := &cobra.Command{
		Use: "optimize MODEL.onnx -o OUT.onnx", Example: "  onnxcost optimize --list\n  onnxcost optimize testdata/models/resnet50.onnx -o resnet50.fused.onnx",
		Short: "Write the fused graph as an ONNX model (fused ops in domain onnxcost)",
		Long: `optimize runs the fusion passes and writes the resulting graph. Fused ops are
in the custom domain "onnxcost" (imported at version 1), each with a
fused_from attribute naming the nodes it replaced, so the file opens in
Netron. Weights are copied as they are: a BatchNormalization folded into a
Conv changes the weight values only when they were small enough to be read
(the folded bias of a graph-only model has no contents), so the output is
for inspection, not for running.

Symbolic dims stay symbolic unless bound with --batch/--dim. The Winograd
substitution is left to costing time (its tile choice depends on the
batch), unless --passes names it.

With --annotate --gpu NAME each node carries its estimate (time, share,
FLOPs, bytes, bound, fused-from) in metadata_props under onnxcost.* keys,
and the model its totals: Netron shows them in the node and model panels.`,
		Args: func(c *cobra.Command, args []string) error {
			if list {
				return nil
			}
			return exactArgs(1, "MODEL.onnx")(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			if list {
				return passes.WriteList(stdout)
			}
			if out == "" {
				return usageErr("optimize: -o OUT.onnx is required")
			}
			if err := refuseOutputs([]string{args[0], ann.gpuFile}, outfile.Target{Flag: "-o", Path: out}); err != nil {
				return err
			}
			pf.dumpTo = stderr
			if err := pf.validate(); err != nil {
				return err
			}
			opt := pf.options()
			if len(opt.Only) == 0 && !slices.Contains(opt.Disable, winogradPass) {
				// Winograd's tile (F(4x4), F(2x2) or direct) is chosen from
				// the tile count, which depends on the batch the model is
				// costed at; written into the file it would freeze one
				// batch's choice. Left out, the fused plan of the re-read
				// model makes it at whatever batch it is costed, exactly as
				// the original's does. --passes winograd,... writes it.
				opt.Disable = append(opt.Disable, winogradPass)
			}
			if _, err := passes.Selected(opt); err != nil {
				return usageErr("%v", err)
			}
			rep, err := ann.estimate(args[0], mf, pf, stderr)
			if err != nil {
				return err
			}
			prog := con.Start(args[0], 0)
			defer prog.Stop()
			prog.Phase("reading, inferring shapes")
			l, err := loadModel(args[0], &mf, loadOptions{})
			if err != nil {
				return err
			}
			printWarnings(stderr, l.Warnings)
			before := len(l.Model.Graph.Nodes)
			prog.Phase("fusing")
			st, err := passes.Run(l.Model.Graph, opt)
			if err != nil {
				return usageErr("%s: %v", args[0], err)
			}
			l.Model.ImportFusedDomain()
			if rep != nil {
				render.Annotate(l.Model, rep)
			}
			noteExternalData(stderr, l.Model, args[0], out)
			prog.Phase("writing " + out)
			// Streamed: a model can be bigger than memory wants to hold twice.
			inputs := append([]string{args[0], ann.gpuFile}, l.Model.ExternalFiles(args[0])...)
			if err := writeFiles(inputs, outfile.File{Path: out, Write: func(w io.Writer) error { return ir.Write(w, l.Model) }}); err != nil {
				return err
			}
			prog.Stop()
			fmt.Fprintf(stderr, "onnxcost: %s: %d nodes -> %d nodes in %d pass iterations (%s)\n",
				out, before, len(l.Model.Graph.Nodes), st.Iterations, st.ChangedText())
			if slices.ContainsFunc(l.Model.Graph.Nodes, func(n *ir.Node) bool { return n.Domain == ir.FusedDomain }) {
				fmt.Fprintf(stderr, "onnxcost: note: %s holds %s ops, which only onnxcost reads: onnxruntime and other runtimes refuse them (--passes cleanup writes a model they run)\n", out, ir.FusedDomain)
			}
			return nil
		},
	}
	mf.add(c)
	pf.add(c)
	c.Flags().StringVarP(&out, "output", "o", "", "write the fused model to `OUT.onnx`")
	c.Flags().BoolVar(&list, "list", false, "list the passes, in run order, and exit")
	ann.add(c)
	return c
}

// winogradPass is the pass optimize leaves to costing time.
const winogradPass = "winograd"
