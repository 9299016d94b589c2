package main

import (
	"context"
	"fmt"
	"io"

	"github.com/onnxcost/onnxcost/internal/outfile"
	"github.com/onnxcost/onnxcost/viz"
	"github.com/spf13/cobra"
)

func init() { register("html", newHTMLCmd) }

func newHTMLCmd(stdout, stderr io.Writer) *cobra.Command {
	var f costFlags
	var g graphFlags
	var out string
	var full bool
	c := &cobra.Command{
		Use: "html MODEL.onnx|REPORT.json --gpu NAME -o report.html", Example: "  onnxcost html testdata/models/resnet50.onnx --gpu T4 -o report.html",
		Short: "Write one self-contained HTML report: summary, sortable node table, graph and roofline",
		Long: `html writes a single HTML file that needs no network: the summary, a
sortable per-node table, the annotated graph (SVG, rendered by the system
'dot' when it is on PATH; otherwise the DOT source is embedded) and the
roofline chart (fused and unfused plans).`,
		Args: exactArgs(1, "MODEL.onnx"),
		RunE: func(c *cobra.Command, args []string) error {
			if out == "" {
				return usageErr("-o FILE is required")
			}
			// The page is HTML whatever the name says: an x.pdf holding
			// HTML opens as a broken PDF, so any other extension is refused
			// before anything is estimated or written.
			if _, err := outFormat(out, "html", "htm"); err != nil {
				return usageErr("-o %s: html writes an HTML page; name it .html or .htm (use 'graph' or 'roofline' for .svg, .png or .pdf)", out)
			}
			if err := refuseOutputs(f.inputs(args[0]), outfile.Target{Flag: "-o", Path: out}); err != nil {
				return err
			}
			d, other, huge, err := loadPlans(args[0], &f, true, full, stderr)
			if err != nil {
				return err
			}
			if huge {
				hugeNote(stderr, d, fmt.Sprintf("the page shows the %s plan alone and its %d costliest nodes in the table and the roofline", d.report.Plan, viz.HugeRows),
					"--full shows both plans and every node (slow)")
			}
			src, err := g.dot(d)
			if err != nil {
				return err
			}
			in := viz.HTMLInput{Report: d.report, Ceil: d.ceil}
			in.SetGraph(context.Background(), src, g.timeout)
			ro := viz.RooflineOptions{}
			if huge {
				ro.MaxPoints, in.MaxRows = viz.HugePoints, viz.HugeRows
			}
			page, err := viz.HTMLPage(in, other, ro)
			if err != nil {
				return usageErr("%v", err)
			}
			return writeOut(out, page)
		},
	}
	f.add(c)
	f.addWarm(c)
	g.add(c)
	c.Flags().StringVarP(&out, "output", "o", "", "write the report to `FILE` (.html or .htm)")
	c.Flags().BoolVar(&full, "full", false, "show both plans and every node even for a model over 20,000 nodes (slow)")
	return c
}
