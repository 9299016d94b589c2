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
	if t.MemoryLimitBytes <= 0 {
		return fmt.Sprintf("memory: peak %s; the GPU's memory size is unknown", Bytes(t.PeakMemoryBytes))
	}
	if t.Fits {
		return fmt.Sprintf("memory: peak %s of %s: fits (%s of memory; weights %s, no runtime overhead counted)",
			Bytes(t.PeakMemoryBytes), Bytes(t.MemoryLimitBytes), Percent(t.PeakMemoryBytes/t.MemoryLimitBytes), Bytes(t.ParamBytes))
	}
	s := fmt.Sprintf("memory: DOES NOT FIT: peak %s exceeds the GPU's %s by %s (weights %s, activations %s)",
		Bytes(t.PeakMemoryBytes), Bytes(t.MemoryLimitBytes), Bytes(t.PeakMemoryBytes-t.MemoryLimitBytes), Bytes(t.ParamBytes), Bytes(t.PeakActivationBytes))
	if len(t.FitAdvice) > 0 {
		s += "; to fit: " + strings.Join(t.FitAdvice, "; or ")
	}
	return s
}
