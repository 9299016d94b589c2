package sweep

import (
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

func TestMergeGPUWarnings(t *testing.T) {
	gpus := []string{"A10", "MI250X", "MI250X-GCD", "L4", "T4"}
	in := []string{
		"fp32 runs as TF32 on A10: --dtype tf32 prices that",
		"model: no input dim is recognizably the batch",
		"fp32 runs as TF32 on L4: --dtype tf32 prices that",
		"GPU MI250X-GCD has no rate (fp16->fp32): 30 node(s)",
		"GPU MI250X has no rate (fp16->fp32): 30 node(s)",
		"GPU T4 has no rate (fp16->fp32): 31 node(s)",
		"ran on L4, not on T4",
		"fp32 runs as TF32 on T4: --dtype tf32 prices that",
		"L4 beside L4 twice",
		"L4 beside L4 twice",
	}
	got := mergeGPUWarnings(in, gpus)
	want := []string{
		"fp32 runs as TF32 on A10: --dtype tf32 prices that (the same on L4 and T4)",
		"model: no input dim is recognizably the batch",
		// MI250X is not found inside MI250X-GCD: one template, two GPUs.
		"GPU MI250X-GCD has no rate (fp16->fp32): 30 node(s) (the same on MI250X)",
		// Another count is another warning.
		"GPU T4 has no rate (fp16->fp32): 31 node(s)",
		// Two GPUs named: kept whole.
		"ran on L4, not on T4",
		// One GPU named twice: kept whole, and said once.
		"L4 beside L4 twice",
	}
	if !slices.Equal(got, want) {
		t.Errorf("merged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := mergeGPUWarnings(nil, gpus); got == nil || len(got) != 0 {
		t.Errorf("no warnings: %#v, want an empty list (the JSON's [])", got)
	}
}

// TestSweepMergesPerGPUWarnings: a sweep over several GPUs says the
// warning every GPU repeats once, naming the others.
func TestSweepMergesPerGPUWarnings(t *testing.T) {
	var gpus []*hwdb.GPU
	for _, n := range []string{"A10", "L4", "T4"} {
		g, err := hwdb.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		gpus = append(gpus, g)
	}
	res, err := Run(Config{Model: "zoo:resnet50", GPUs: gpus, Batches: []int64{1}})
	if err != nil {
		t.Fatal(err)
	}
	var tf32 []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "TF32") {
			tf32 = append(tf32, w)
		}
	}
	// The T4 (Turing) has no TF32: the warning is the A10's and the L4's.
	if len(tf32) != 1 || !strings.Contains(tf32[0], "TF32 on A10") || !strings.HasSuffix(tf32[0], "(the same on L4)") {
		t.Errorf("TF32 warnings %q, want one, the A10's, the same on L4", tf32)
	}
}
