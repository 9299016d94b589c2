package render

import (
	"fmt"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
)

// FitLine is the memory verdict every human rendering states under its
// header: whether the peak fits in the GPU, and if not by how much and
// what would make it fit.
func FitLine(r *report.Report) string {
	t := r.Totals
	if t.Train != nil {
		return trainFitLine(r)
	}
	if t.GPUs > 1 {
		return parallelFitLine(r)
	}
	if t.MemoryLimitBytes <= 0 {
		return fmt.Sprintf("memory: peak %s; the GPU's memory size is unknown", Bytes(t.PeakMemoryBytes))
	}
	if t.Fits {
		return fmt.Sprintf("memory: peak %s of %s usable: fits (%s of it; weights %s; usable = what CUDA reports less the runtime's floor)",
			Bytes(t.PeakMemoryBytes), Bytes(t.MemoryLimitBytes), Percent(t.PeakMemoryBytes/t.MemoryLimitBytes), Bytes(t.ParamBytes))
	}
	s := fmt.Sprintf("memory: DOES NOT FIT: peak %s exceeds the GPU's usable %s by %s (weights %s, activations %s)",
		Bytes(t.PeakMemoryBytes), Bytes(t.MemoryLimitBytes), Bytes(t.PeakMemoryBytes-t.MemoryLimitBytes), Bytes(t.ParamBytes), Bytes(t.PeakActivationBytes))
	if len(t.FitAdvice) > 0 {
		s += "; to fit: " + strings.Join(t.FitAdvice, "; or ")
	}
	return s
}

// parallelFitLine is FitLine under tensor parallelism: the verdict is one
// GPU's share (cost/parallel.go), and the all-reduce time is stated.
func parallelFitLine(r *report.Report) string {
	t := r.Totals
	verdict := "fits"
	switch {
	case t.MemoryLimitBytes <= 0:
		verdict = "the GPU's memory size is unknown"
	case !t.Fits:
		verdict = fmt.Sprintf("DOES NOT FIT (over by %s)", Bytes(t.PerGPUPeakMemoryBytes-t.MemoryLimitBytes))
	}
	s := fmt.Sprintf("memory per GPU: peak %s of %s: %s (whole model %s); all-reduces %s of the time",
		Bytes(t.PerGPUPeakMemoryBytes), Bytes(t.MemoryLimitBytes), verdict, Bytes(t.PeakMemoryBytes), Seconds(t.CommunicationTimeS))
	if !t.Fits && len(t.FitAdvice) > 0 {
		s += "; to fit: " + strings.Join(t.FitAdvice, "; or ")
	}
	return s
}
