package main

import (
	"io"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/internal/outfile"
	"github.com/spf13/cobra"
)

func init() { register("export", newExportCmd) }

// export is not a report flag because it prices two plans (the one report
// prices and the unfused one) and prints nothing.
func newExportCmd(_, stderr io.Writer) *cobra.Command {
	var f costFlags
	var nf, mf, uf string
	c := &cobra.Command{
		Use:     "export MODEL --gpu NAME [--netron FILE.json] [--model-explorer FILE.json]",
		Short:   "Per-node cost files that Netron and Model Explorer show over the model (the runtime's kernels: on each node they fuse)",
		Example: "  onnxcost export testdata/models/resnet50.onnx --gpu T4 --netron resnet50.netron.json",
		Args:    exactArgs(1, "MODEL"),
		RunE: func(c *cobra.Command, args []string) error {
			// The plan report prices (the runtime's own, or --plan),
			// beside the unfused one for the second data set.
			priced, _, err := estimate(args[0], &f)
			if err != nil {
				return err
			}
			uc := f
			uc.plan = "unfused"
			unfused, _, err := estimate(args[0], &uc)
			if err != nil {
				return err
			}
			printWarnings(stderr, priced.Warnings)
			n, m, u, err := render.Overlays(priced, unfused)
			if err == nil { // writeFiles refuses an output that is an input, writing none
				err = writeFiles(f.inputs(args[0]), outfile.Bytes(nf, n), outfile.Bytes(mf, m), outfile.Bytes(uf, u))
			}
			return err
		},
	}
	f.add(c)
	f.addWarm(c)
	c.Flags().StringVar(&nf, "netron", "", "write Netron's attachment to `FILE`.json")
	c.Flags().StringVar(&mf, "model-explorer", "", "write Model Explorer node data (the time of the plan report prices: the runtime's own, or --plan) to `FILE`.json")
	c.Flags().StringVar(&uf, "model-explorer-unfused", "", "write Model Explorer node data for the unfused plan to `FILE`.json")
	return c
}
