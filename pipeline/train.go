package pipeline

import (
	"slices"

	"github.com/onnxcost/onnxcost/passes"
)

// ForTraining returns pass options for a training estimate: the passes
// that are valid only at inference (passes.InferenceOnly: BN folding) are
// disabled, whatever the selection asked for.
func ForTraining(o passes.Options) passes.Options {
	o.Disable = slices.Clone(o.Disable)
	for _, p := range passes.InferenceOnly() {
		if !slices.Contains(o.Disable, p) {
			o.Disable = append(o.Disable, p)
		}
	}
	return o
}
