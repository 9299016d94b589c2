package main

import (
	"bufio"
	"io"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/spf13/cobra"
)

func init() { register("compare", newCompareCmd) }

func newCompareCmd(stdout, stderr io.Writer) *cobra.Command {
	var f costFlags
	var format string
	var top int
	var vf viewerFlags
	c := &cobra.Command{
		Use: "compare MODEL.onnx --gpu NAME", Example: "  onnxcost compare testdata/models/resnet50.onnx --gpu T4 --batch 1",
		Short: "Compare the unfused and fused plans: per fused group and in total",
		Long: `compare costs the model twice, as read (unfused) and after the fusion passes
(fused), and shows, for every fused group, its constituents and its time,
bytes and launches before and after, sorted by the time saved, then the
totals of both plans.`,
		Args: exactArgs(1, "MODEL.onnx"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json", "markdown"); err != nil {
				return err
			}
			if top < 0 {
				return usageErr("--top must be ≥ 0")
			}
			if c.Flags().Changed("plan") {
				// Hidden, shared with report's flags: taken silently it
				// would read as a choice the output ignores.
				return usageErr("--plan: compare prices both plans, unfused and fused; report --plan prices one")
			}
			if err := vf.check(f.inputs(args[0])...); err != nil {
				return err
			}
			f.dumpTo = stderr
			ur, fr, err := estimatePlans(args[0], &f, vf.trace == "" && vf.pprof == "")
			if err != nil {
				return err
			}
			if err := vf.write([]*report.Report{ur, fr}, f.gpu, f.gpuFile); err != nil {
				return err
			}
			cmp := report.Compare(ur, fr, version)
			printWarnings(stderr, cmp.Warnings)
			if format == "json" {
				return writeJSON(stdout, cmp)
			}
			gpus := fr.Totals.GPUs
			if gpus > 1 {
				// The tables set bytes beside time, and the time is one
				// GPU's: they show one GPU's bytes and FLOPs too (JSON keeps
				// the model's, with each node's gpu_share).
				cmp = report.Compare(ur.PerGPU(), fr.PerGPU(), version)
			}
			// Buffered: the text table is a write per cell; the 112k-node
			// graph's comparison made 266k write calls (62 buffered),
			// 15% of the command's samples under perf.
			bw := bufio.NewWriterSize(stdout, 1<<16)
			if format == "markdown" {
				err = render.CompareMarkdown(bw, cmp, top, gpus)
			} else {
				err = render.CompareText(bw, cmp, top, gpus)
			}
			if err != nil {
				return err
			}
			return bw.Flush()
		},
	}
	f.add(c)
	f.addWarm(c)
	c.Flags().StringVar(&format, "format", "text", "output format: text|json|markdown")
	c.Flags().IntVar(&top, "top", 0, "show only the `N` groups that save the most (0: all)")
	// --plan has no meaning here: both plans are shown.
	_ = c.Flags().MarkHidden("plan")
	vf.add(c, false)
	return c
}

// estimatePlans estimates the unfused and the fused plan (the model is
// loaded once per plan: loading is milliseconds and the passes rewrite
// the graph in place). With totalsOnly (no viewer file wants the unfused
// plan's tensors) the unfused report keeps only what report.Compare reads.
func estimatePlans(path string, f *costFlags, totalsOnly bool) (unfused, fused *report.Report, err error) {
	if err := applyGPUDefault(f); err != nil {
		return nil, nil, err
	}
	uf, ff := *f, *f
	uf.plan, ff.plan = "unfused", "fused"
	if unfused, _, err = estimate(path, &uf); err != nil {
		return nil, nil, err
	}
	if totalsOnly {
		unfused.DropTensors()
	}
	if fused, _, err = estimate(path, &ff); err != nil {
		return nil, nil, err
	}
	return unfused, fused, nil
}
