package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/spf13/cobra"
)

// annotateFlags are optimize's --annotate and the estimate settings it
// needs (the GPU; the plan is the passes optimize runs).
type annotateFlags struct {
	on      bool
	gpu     string
	gpuFile string
	dtype   string
}

func (a *annotateFlags) add(c *cobra.Command) {
	c.Flags().BoolVar(&a.on, "annotate", false, "write each node's estimate into its metadata_props (onnxcost.* keys; Netron shows them); needs --gpu")
	c.Flags().StringVar(&a.gpu, "gpu", "", "GPU for --annotate (see 'onnxcost gpus')")
	c.Flags().StringVar(&a.gpuFile, "gpu-file", "", "YAML or JSON file with your own GPU specs, for --annotate")
	c.Flags().StringVar(&a.dtype, "dtype", "", "compute dtype for --annotate (default: the model's own)")
}

// estimate costs the fused plan for --annotate (nil without it). It loads
// the model on its own, with unbound symbols assumed 1 as `report` does,
// so the written graph keeps its symbolic dims while the numbers exist.
func (a *annotateFlags) estimate(path string, mf modelFlags, pf passFlags, stderr io.Writer) (*report.Report, error) {
	if !a.on {
		if a.gpu != "" {
			return nil, usageErr("optimize: --gpu is only used with --annotate")
		}
		return nil, nil
	}
	f := costFlags{modelFlags: mf, gpu: a.gpu, gpuFile: a.gpuFile, dtype: a.dtype, plan: "fused", passFlags: pf}
	r, _, err := estimate(path, &f)
	if err != nil {
		return nil, err
	}
	printWarnings(stderr, r.Warnings)
	return r, nil
}

// noteExternalData says what the written model's weights are when the
// input keeps them in external files. ir.Write copies the bytes of every
// external file that is present into the output (so the output needs no
// side file and resolves from any folder); tensors whose file was absent
// (a graph-only model) stay references to the same location, which then
// resolves only if that file is placed beside the output. Nothing is
// said for a model with its weights inside.
func noteExternalData(stderr io.Writer, m *ir.Model, in, out string) {
	var inlined float64
	missing := map[string]bool{}
	var files []string
	for _, v := range m.Graph.Initializers {
		t := v.Const
		if t == nil || t.Loc.File == "" {
			continue
		}
		if !t.Loc.Missing {
			inlined += float64(t.Loc.Length)
			continue
		}
		if !missing[t.Loc.File] {
			missing[t.Loc.File] = true
			files = append(files, t.Loc.File)
		}
	}
	if inlined > 0 {
		fmt.Fprintf(stderr, "onnxcost: note: %s: the %s of external weights of %s are copied into it; it needs no side file\n",
			out, render.Bytes(inlined), in)
		if inlined >= 2<<30 {
			fmt.Fprintf(stderr, "onnxcost: warning: %s is over 2 GiB: protobuf readers (onnx.load, onnxruntime) refuse models that size; use it with onnxcost or Netron only\n", out)
		}
	}
	if len(files) > 0 {
		fmt.Fprintf(stderr, "onnxcost: note: %s does not contain the weights that were not present beside %s (graph-only); it refers to them as %s, relative to its own folder, so it loads only once they are placed there\n",
			out, in, strings.Join(files, ", "))
	}
}
