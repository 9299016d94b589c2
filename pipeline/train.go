package pipeline

import (
	"slices"

	"github.com/onnxcost/onnxcost/passes"
)

// ForTraining returns pass options for a training estimate: the passes
// that are valid only at inference (passes.InferenceOnly: BN folding, BN
// as a pointwise scale and shift) are disabled, whatever the selection
// asked for.
func ForTraining(o passes.Options) passes.Options { return disable(o, passes.InferenceOnly()) }

// ForDType returns o with the fusions a runtime applies only to fp32
// graphs disabled (passes.Float32Only) when the model is priced at
// another compute dtype: a half model runs those parts as their own
// kernels (the older onnxruntime FusedConv of fuse-conv-act took float
// inputs only). "" (the model's own dtype) keeps them; the pass itself
// checks the graph's own type.
func ForDType(o passes.Options, dtype string) passes.Options {
	switch dtype {
	case "", "fp32", "tf32":
		return o
	}
	return disable(o, passes.Float32Only())
}

// disable returns o with names added to its disabled passes, o's own list
// left as it was.
func disable(o passes.Options, names []string) passes.Options {
	o.Disable = slices.Clone(o.Disable)
	for _, p := range names {
		if !slices.Contains(o.Disable, p) {
			o.Disable = append(o.Disable, p)
		}
	}
	return o
}
