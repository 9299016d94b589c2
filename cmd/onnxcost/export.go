package main

import (
	"io"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/internal/outfile"
	"github.com/spf13/cobra"
)

func init() { register("export", newExportCmd) }

// export is not a report flag because it prices both plans and prints nothing.
func newExportCmd(_, stderr io.Writer) *cobra.Command {
	var f costFlags
	var nf, mf, uf string
	c := &cobra.Command{
		Use:     "export MODEL --gpu NAME [--netron FILE.json] [--model-explorer FILE.json]",
		Short:   "Per-node cost files that Netron and Model Explorer show over the model (fused kernels: on each node they fuse)",
		Example: "  onnxcost export testdata/models/resnet50.onnx --gpu T4 --netron resnet50.netron.json",
		Args:    exactArgs(1, "MODEL"),
		RunE: func(c *cobra.Command, args []string) error {
			unfused, fused, err := estimatePlans(args[0], &f, false)
			if err != nil {
				return err
			}
			printWarnings(stderr, fused.Warnings)
			n, m, u, err := render.Overlays(fused, unfused)
			if err == nil { // writeFiles refuses an output that is an input, writing none
				err = writeFiles(f.inputs(args[0]), outfile.Bytes(nf, n), outfile.Bytes(mf, m), outfile.Bytes(uf, u))
			}
			return err
		},
	}
	f.addBase(c)
	c.Flags().StringVar(&nf, "netron", "", "write Netron's attachment to `FILE`.json")
	c.Flags().StringVar(&mf, "model-explorer", "", "write Model Explorer node data (fused plan's time) to `FILE`.json")
	c.Flags().StringVar(&uf, "model-explorer-unfused", "", "write Model Explorer node data for the unfused plan to `FILE`.json")
	return c
}
