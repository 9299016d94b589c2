package main

import (
	"fmt"
	"io"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/viz"
	"github.com/spf13/cobra"
)

func init() { register(newRooflineCmd) }

// loadPlans returns the main plan's drawing data and, when both plans are
// wanted and a model (not a saved report) was given, the unfused report.
func loadPlans(path string, f *costFlags, both bool, stderr io.Writer) (*drawn, *report.Report, error) {
	d, err := loadDrawn(path, f, stderr)
	if err != nil || !both {
		return d, nil, err
	}
	if _, isJSON, _ := sniffJSON(path); isJSON || f.plan != "fused" {
		return d, nil, nil
	}
	g := *f
	g.plan = "unfused"
	r, _, err := estimate(path, &g)
	if err != nil {
		return nil, nil, err
	}
	return d, r, nil
}

func newRooflineCmd(stdout, stderr io.Writer) *cobra.Command {
	var f costFlags
	var out string
	var label int
	var single bool
	c := &cobra.Command{
		Use:   "roofline MODEL.onnx|REPORT.json --gpu NAME -o out.{svg,png,pdf}",
		Short: "Draw the roofline chart: every node at its intensity and estimated FLOP/s",
		Long: `roofline draws a log-log roofline chart: arithmetic intensity (FLOP/byte)
against estimated FLOP/s, with the GPU's compute roof for each precision
the model uses, the HBM and L2 bandwidth diagonals and their ridge points.
Every node is a point whose area is its share of time and whose colour is
its bound. With --plan fused (the default) the unfused plan is drawn too,
as rings, each joined to the fused node that absorbed it: fusion moves
points right and up. Nodes with zero FLOPs or zero bytes cannot sit on
log axes; the title counts them.`,
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
			d, other, err := loadPlans(args[0], &f, !single, stderr)
			if err != nil {
				return err
			}
			if label == 0 {
				label = -1
			}
			img, err := viz.Roofline(d.report, other, d.ceil, viz.RooflineOptions{Label: label}, format)
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
	c.Flags().StringVarP(&out, "output", "o", "", "write the chart to `FILE` (.svg, .png or .pdf)")
	c.Flags().IntVar(&label, "top", viz.DefaultRooflineLabels, "name the `N` costliest points (0: none)")
	c.Flags().BoolVar(&single, "single", false, "draw only the --plan given, not fused and unfused together")
	return c
}
