package pipeline_test

import (
	"testing"

	"github.com/onnxcost/onnxcost/pipeline"
)

// TestGQADecodeStreamsItsCache: a grouped-query decode step whose fused
// attention reads K and V before repeat_kv (LLaMA-70B's 8 KV heads for 64
// query heads, the expand absorbed into the node) streams the 8 heads'
// cache, not 64 heads' worth: its stream term stays within a wave of its
// bytes over DRAM (it was 8× that when the decode view counted query
// heads).
func TestGQADecodeStreamsItsCache(t *testing.T) {
	r, err := pipeline.Run("zoo:llama-70b?decode=1&past=4096&batch=16&layers=2", pipeline.Config{GPU: "H100", DType: "fp16"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, nc := range r.Nodes {
		if nc.OpType != "FusedAttention" {
			continue
		}
		n++
		if nc.Bound != "memory" || nc.ComputeS > 1.2*nc.MemoryS {
			t.Errorf("%s: stream %.3g s against memory %.3g s, bound %s: want the KV cache's bytes, memory-bound", nc.Name, nc.ComputeS, nc.MemoryS, nc.Bound)
		}
	}
	if n != 2 {
		t.Errorf("%d fused attentions, want 2 (one a layer)", n)
	}
}
