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

// ForDType returns o with the fusions a runtime applies only to fp32
// graphs disabled (passes.Float32Only) when the model is priced at
// another compute dtype: onnxruntime's CUDA FusedConv takes float inputs
// only, so a half model runs its convolutions' ReLUs and residual adds as
// their own kernels. "" (the model's own dtype) keeps them; the pass
// itself checks the graph's own type.
func ForDType(o passes.Options, dtype string) passes.Options {
	switch dtype {
	case "", "fp32", "tf32":
		return o
	}
	o.Disable = slices.Clone(o.Disable)
	for _, p := range passes.Float32Only() {
		if !slices.Contains(o.Disable, p) {
			o.Disable = append(o.Disable, p)
		}
	}
	return o
}
