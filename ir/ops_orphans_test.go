package ir

import (
	"errors"
	"testing"
)

// The three ops that had cost rules but no shape rule (RMSNormalization,
// Attention, Swish) now infer their outputs.
func TestOrphanOpsInfer(t *testing.T) {
	f16, f32 := Float16, Float32
	bsh := faShape("b", "s", 768)
	runFAOutputs(t, "rms norm", "RMSNormalization", 23, []faIn{faInput(f16, bsh), faInput(f16, faShape(768))}, nil,
		[]TypeInfo{{DType: f16, Shape: bsh}})
	runFAOutputs(t, "swish", "Swish", 24, []faIn{faInput(f32, bsh)}, []*Attribute{FloatAttr("alpha", 1.5)},
		[]TypeInfo{{DType: f32, Shape: bsh}})
	// 4-D: Y [B, Hq, Lq, dv]; present_key/value grow by the cache length;
	// qk_matmul_output [B, Hq, Lq, past+Lk].
	q, k, v := faShape("b", 8, "L", 64), faShape("b", 2, "L", 64), faShape("b", 2, "L", 32)
	pk, pv := faShape("b", 2, "P", 64), faShape("b", 2, "P", 32)
	runFAOutputs(t, "attention 4d with cache", "Attention", 23,
		[]faIn{faInput(f16, q), faInput(f16, k), faInput(f16, v), {omitted: true}, faInput(f16, pk), faInput(f16, pv)}, nil,
		[]TypeInfo{{DType: f16, Shape: faShape("b", 8, "L", 32)}, {DType: f16, Shape: faShape("b", 2, "P+L", 64)},
			{DType: f16, Shape: faShape("b", 2, "P+L", 32)}, {DType: f16, Shape: faShape("b", 8, "L", "P+L")}})
	// 3-D: heads from attributes; Y [B, Lq, Hq·dv].
	runFAOutputs(t, "attention 3d", "Attention", 23,
		[]faIn{faInput(f32, faShape(2, 10, 512)), faInput(f32, faShape(2, 12, 128)), faInput(f32, faShape(2, 12, 128))},
		[]*Attribute{IntAttr("q_num_heads", 8), IntAttr("kv_num_heads", 2)},
		[]TypeInfo{{DType: f32, Shape: faShape(2, 10, 512)}})
	runFATypeCases(t, []faTypeCase{
		{name: "attention 3d no heads", op: "Attention", opset: 23, ins: []faIn{faInput(f32, faShape(2, 10, 512)), faInput(f32, faShape(2, 12, 128)), faInput(f32, faShape(2, 12, 128))},
			wantErr: "q_num_heads"},
		{name: "attention mixed ranks", op: "Attention", opset: 23, ins: []faIn{faInput(f32, faShape(2, 10, 512)), faInput(f32, faShape(2, 2, 12, 64)), faInput(f32, faShape(2, 12, 128))},
			wantErr: "ranks"},
	})
}

// A shape error is an *OpError naming the op and node.
func TestOpErrorTyped(t *testing.T) {
	_, err := runFAOp(t, "Attention", 23, []faIn{faInput(Float32, faShape(2, 10, 512)), faInput(Float32, faShape(2, 12, 128)), faInput(Float32, faShape(2, 12, 128))}, nil, 1)
	var oe *OpError
	if !errors.As(err, &oe) || oe.Op != "Attention" {
		t.Fatalf("got %v (%T), want an *OpError for Attention", err, err)
	}
}

// RotaryEmbedding (opset 23), added by following doc.go's "Adding an op".
func TestRotaryEmbeddingInfer(t *testing.T) {
	f16 := Float16
	x4, x3 := faShape("b", 32, "s", 128), faShape("b", "s", 4096)
	cache := faShape(8192, 64)
	pos := faShape("b", "s")
	runFAOutputs(t, "4-D with position_ids", "RotaryEmbedding", 23,
		[]faIn{faInput(f16, x4), faInput(f16, cache), faInput(f16, cache), faInput(Int64, pos)}, nil, []TypeInfo{{DType: f16, Shape: x4}})
	runFAOutputs(t, "3-D partial rotation", "RotaryEmbedding", 23,
		[]faIn{faInput(f16, x3), faInput(f16, faShape("b", "s", 32)), faInput(f16, faShape("b", "s", 32))},
		[]*Attribute{IntAttr("num_heads", 32), IntAttr("rotary_embedding_dim", 64)}, []TypeInfo{{DType: f16, Shape: x3}})
	runFATypeCases(t, []faTypeCase{
		{name: "rope 3-D without heads", op: "RotaryEmbedding", opset: 23, ins: []faIn{faInput(f16, x3), faInput(f16, cache), faInput(f16, cache)}, wantErr: "num_heads"},
		{name: "rope rank 2", op: "RotaryEmbedding", opset: 23, ins: []faIn{faInput(f16, faShape(4, 8)), faInput(f16, cache), faInput(f16, cache)}, wantErr: "rank 2"},
		{name: "rope odd dim", op: "RotaryEmbedding", opset: 23, ins: []faIn{faInput(f16, x4), faInput(f16, cache), faInput(f16, cache)}, attrs: []*Attribute{IntAttr("rotary_embedding_dim", 3)}, wantErr: "even"},
	})
}
