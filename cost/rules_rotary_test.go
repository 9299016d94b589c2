package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// TestRotaryRule: LLaMA-style RoPE on one decode step, X [1, 32, 1, 128]
// fp16, caches [4096, 32] (rotary_embedding_dim 64: half of each head).
func TestRotaryRule(t *testing.T) {
	b := irtest.New(t, 23)
	mk := func(name string, dt ir.DType, dims ...int64) *ir.Value { return b.Tensor(name, dt, dims...) }
	x, y := mk("x", ir.Float16, 1, 32, 1, 128), mk("y", ir.Float16, 1, 32, 1, 128)
	cos, sin := mk("cos", ir.Float16, 4096, 32), mk("sin", ir.Float16, 4096, 32)
	pos := mk("pos", ir.Int64, 1, 1)
	n := &ir.Node{Name: "rope", OpType: "RotaryEmbedding", Inputs: []*ir.Value{x, cos, sin, pos}, Outputs: []*ir.Value{y},
		Attrs: []*ir.Attribute{ir.IntAttr("rotary_embedding_dim", 64)}}
	e, err := LookupRule("", "RotaryEmbedding")(n, &RuleCtx{Graph: b.G})
	if err != nil {
		t.Fatal(err)
	}
	const elems = 32 * 128
	if want := 3.0 * elems * 64 / 128; e.FLOPs != want { // 3 flops per rotated channel, half rotated
		t.Errorf("flops = %v, want %v", e.FLOPs, want)
	}
	// X (fp16) + position_ids (int64) + one token's cache row from each cache
	// (64/2 fp16 values), not the 4096-row caches.
	if want := elems*2.0 + 8 + 2*(1*32)*2; e.BytesRead != want {
		t.Errorf("bytes read = %v, want %v", e.BytesRead, want)
	}
	if want := elems * 2.0; e.BytesWritten != want || e.Launches != 1 {
		t.Errorf("bytes written = %v, launches %v; want %v, 1", e.BytesWritten, e.Launches, want)
	}
}
