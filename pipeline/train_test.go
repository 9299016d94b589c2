package pipeline

import (
	"slices"
	"testing"

	"github.com/onnxcost/onnxcost/passes"
)

// TestForDType checks that the fp32-only fusions (onnxruntime's FusedConv)
// are dropped when a model is priced at a half or 8-bit dtype and kept at
// its own, fp32 or TF32.
func TestForDType(t *testing.T) {
	for _, dt := range []string{"", "fp32", "tf32"} {
		if o := ForDType(passes.Options{}, dt); len(o.Disable) != 0 {
			t.Errorf("--dtype %q disables %v, want nothing", dt, o.Disable)
		}
	}
	for _, dt := range []string{"fp16", "bf16", "int8", "fp16-amp"} {
		o := ForDType(passes.Options{Disable: []string{"winograd"}}, dt)
		if !slices.Contains(o.Disable, "fuse-conv-act") || !slices.Contains(o.Disable, "winograd") {
			t.Errorf("--dtype %s disables %v, want fuse-conv-act added to winograd", dt, o.Disable)
		}
	}
}
