package main

import (
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/internal/outfile"
	"github.com/onnxcost/onnxcost/viz"
	"github.com/spf13/cobra"
)

// viewerFlags are the files for outside viewers a cost command can write
// beside its normal output: a Chrome/Perfetto trace and a pprof profile.
type viewerFlags struct {
	trace string
	pprof string
}

func (v *viewerFlags) add(c *cobra.Command, pprof bool) {
	c.Flags().StringVar(&v.trace, "trace", "", "also write the estimated execution as a Chrome trace-event `FILE.json` (Perfetto, chrome://tracing)")
	if pprof {
		c.Flags().StringVar(&v.pprof, "pprof", "", "also write a pprof profile `FILE.pb.gz` (time, FLOPs, bytes by module scope; go tool pprof)")
	}
}

// write writes the requested viewer files for the given plans (one trace
// process each; the profile is of the first plan). Files are built fully
// before any is written, so a failure leaves no partial output.
func (v *viewerFlags) write(plans []*report.Report, gpuName, gpuFile string) error {
	if v.trace == "" && v.pprof == "" {
		return nil
	}
	var ceil viz.Ceilings
	if g, err := resolveGPU(gpuName, gpuFile); err == nil {
		ceil = viz.CeilingsOf(g)
	}
	var trace, prof []byte
	var err error
	if v.trace != "" {
		if trace, err = viz.Trace(plans, ceil); err != nil {
			return usageErr("%s: %v", v.trace, err)
		}
	}
	if v.pprof != "" {
		if prof, err = viz.Profile(plans[0]); err != nil {
			return usageErr("%s: %v", v.pprof, err)
		}
	}
	// Both land or neither does.
	return writeFiles(nil, outfile.Bytes(v.trace, trace), outfile.Bytes(v.pprof, prof))
}

// check refuses, before any work, a --trace or --pprof that would
// destroy something (refuseOutputs).
func (v *viewerFlags) check(inputs ...string) error {
	return refuseOutputs(inputs, outfile.Target{Flag: "--trace", Path: v.trace}, outfile.Target{Flag: "--pprof", Path: v.pprof})
}
