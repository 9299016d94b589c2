package main

import (
	"fmt"
	"io"

	"github.com/onnxcost/onnxcost/cost/gate"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/internal/outfile"
	"github.com/onnxcost/onnxcost/viz"
	"github.com/spf13/cobra"
)

func init() { register("roofline", newRooflineCmd) }

// loadPlans returns the main plan's drawing data and, when both plans are
// wanted and a model (not a saved report) was given, the unfused report.
// Unless full, a model over viz.HugeNodes gets no unfused plan, and huge says
// so (the caller degrades the rest and says how to force it).
func loadPlans(path string, f *costFlags, both, full bool, stderr io.Writer) (d *drawn, other *report.Report, huge bool, err error) {
	d, err = loadDrawn(path, f, stderr)
	if err != nil {
		return nil, nil, false, err
	}
	huge = !full && viz.IsHuge(d.report)
	if !both || huge {
		return d, nil, huge, nil
	}
	if _, isJSON, _ := gate.SniffJSON(path); isJSON || f.plan != "fused" {
		return d, nil, false, nil
	}
	g := *f
	g.plan = "unfused"
	r, _, err := estimate(path, &g)
	if err != nil {
		return nil, nil, false, err
	}
	return d, r, false, nil
}

// hugeNote is the one stderr line saying a drawing of a huge model was
// degraded, what it shows and how to get everything.
func hugeNote(stderr io.Writer, d *drawn, shows, force string) {
	fmt.Fprintf(stderr, "onnxcost: note: %s\n", viz.HugeNote(d.report, shows, force))
}

func newRooflineCmd(stdout, stderr io.Writer) *cobra.Command {
	var f costFlags
	var out string
	var label int
	var single, full bool
	var tf timeRooflineFlags
	c := &cobra.Command{
		Use: "roofline MODEL.onnx|REPORT.json --gpu NAME -o out.{svg,png,pdf}", Example: "  onnxcost roofline testdata/models/resnet50.onnx --gpu T4 -o roofline.svg",
		Short: "Draw the roofline chart: every node at its intensity and estimated FLOP/s",
		Long: `roofline draws a log-log roofline chart: arithmetic intensity (FLOP/byte)
against estimated FLOP/s, with the GPU's compute roof for each precision
the model uses, the HBM and L2 bandwidth diagonals and their ridge points.
Every node is a point whose area is its share of time and whose colour is
its bound. With --plan fused (the default) the unfused plan is drawn too,
as rings, each joined to the fused node that absorbed it: fusion moves
points right and up. Nodes with zero FLOPs or zero bytes cannot sit on
log axes; the title counts them.

With --time --sweep NAME=LIST it draws the time-based roofline instead:
estimated time against the swept parameter (batch, a symbol or a zoo
parameter), for the whole model or one --node, with the compute floor
(FLOPs / attainable rate), the memory floor (bytes / bandwidth) and the
launch floor (launches × overhead) as lines and the estimate on top, each
point coloured by the floor that dominates it.

  onnxcost roofline zoo:lstm-ptb --gpu V100 --time --sweep batch=1..1024 --node /rnn/LSTM -o lstm.png`,
		Args: exactArgs(1, "MODEL.onnx"),
		RunE: func(c *cobra.Command, args []string) error {
			if out == "" {
				return usageErr("-o FILE is required (.svg, .png or .pdf)")
			}
			format, err := outFormat(out, "svg", "png", "pdf")
			if err != nil {
				return err
			}
			if label < 0 {
				return usageErr("--label must be ≥ 0")
			}
			if err := refuseOutputs(f.inputs(args[0]), outfile.Target{Flag: "-o", Path: out}); err != nil {
				return err
			}
			if tf.on || tf.sweep != "" || tf.node != "" {
				if !tf.on || tf.sweep == "" {
					return usageErr("--time needs --sweep NAME=LIST, and --sweep and --node need --time")
				}
				return writeTimeRoofline(args[0], out, format, &f, &tf, stderr)
			}
			d, other, huge, err := loadPlans(args[0], &f, !single, full, stderr)
			if err != nil {
				return err
			}
			if label == 0 {
				label = -1
			}
			ro := viz.RooflineOptions{Label: label}
			if huge {
				ro.MaxPoints = viz.HugePoints
				hugeNote(stderr, d, fmt.Sprintf("the roofline draws the %s plan alone, its %d costliest points at most", d.report.Plan, viz.HugePoints),
					"--full draws both plans and every point (slow)")
			}
			img, err := viz.Roofline(d.report, other, d.ceil, ro, format)
			if err != nil {
				return usageErr("%v", err)
			}
			if d.ceil.GPU == nil {
				fmt.Fprintln(stderr, "onnxcost: warning: no GPU ceilings: roofs not drawn")
			}
			return writeOut(out, img)
		},
	}
	f.add(c)
	f.addWarm(c)
	c.Flags().StringVarP(&out, "output", "o", "", "write the chart to `FILE` (.svg, .png or .pdf)")
	c.Flags().IntVar(&label, "top", viz.DefaultRooflineLabels, "name the `N` costliest points (0: none)")
	c.Flags().BoolVar(&single, "single", false, "draw only the --plan given, not fused and unfused together")
	c.Flags().BoolVar(&full, "full", false, "draw both plans and every point even for a model over 20,000 nodes (slow)")
	c.Flags().BoolVar(&tf.on, "time", false, "draw the time-based roofline: time against --sweep, with compute, memory and launch floors")
	c.Flags().StringVar(&tf.sweep, "sweep", "", "with --time: the swept parameter, `NAME=LIST` (batch=1..1024, a symbol, or a zoo parameter)")
	c.Flags().StringVar(&tf.node, "node", "", "with --time: draw one node (by name, or the fused node that absorbed it) instead of the whole model")
	return c
}
