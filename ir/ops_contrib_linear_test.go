package ir

import (
	"strings"
	"testing"
)

// TestLinearAttentionContribInfer: a Qwen3.5-style Gated DeltaNet layer's
// ops (16 query/key heads and 32 value heads of 128, a 4-tap convolution
// over 8192 channels) and their refusals.
func TestLinearAttentionContribInfer(t *testing.T) {
	const ms = "com.microsoft::"
	bf := BFloat16
	x := faShape("b", "s", 4096)
	runFAOutputs(t, "gated add", ms+"GatedAdd", 1, []faIn{faInput(bf, x), faInput(bf, x), faInput(bf, faShape("b", "s", 1))}, nil,
		[]TypeInfo{{DType: bf, Shape: x}})
	runFAOutputs(t, "gated rms norm", ms+"GatedRMSNorm", 1, []faIn{faInput(bf, x), faInput(bf, faShape(128)), faInput(bf, x)}, nil,
		[]TypeInfo{{DType: bf, Shape: x}})
	conv := []faIn{faInput(bf, faShape("b", 8192, "s")), faInput(bf, faShape(8192, 1, 4)), faInput(bf, faShape(8192)), faInput(bf, faShape("b", 8192, 3))}
	runFAOutputs(t, "causal conv", ms+"CausalConvWithState", 1, conv, []*Attribute{StringAttr("activation", "silu")},
		[]TypeInfo{{DType: bf, Shape: faShape("b", 8192, "s")}, {DType: bf, Shape: faShape("b", 8192, 3)}})
	runFAOutputs(t, "causal conv dilated window", ms+"CausalConvWithState", 1, conv[:3], []*Attribute{IntAttr("dilation", 2), IntAttr("state_window", 4)},
		[]TypeInfo{{DType: bf, Shape: faShape("b", 8192, "s")}, {DType: bf, Shape: faShape(4, "b", 8192, 6)}})
	runFAOutputs(t, "causal conv channels last", ms+"CausalConvWithState", 1, []faIn{faInput(bf, faShape("b", "s", 8192)), conv[1]},
		[]*Attribute{IntAttr("channels_last", 1)}, []TypeInfo{{DType: bf, Shape: faShape("b", "s", 8192)}, {DType: bf, Shape: faShape("b", 3, 8192)}})
	qk, v := faInput(bf, faShape("t", 16, 128)), faInput(bf, faShape("t", 32, 128))
	state := faInput(Float32, faShape(2, 32, 128, 128))
	gated := []faIn{qk, qk, v, faInput(Int32, faShape(3)), faInput(Float32, faShape("t", 32)), faInput(Float32, faShape("t", 32)), state}
	runFAOutputs(t, "gated delta net", ms+"GatedDeltaNet", 1, gated, nil,
		[]TypeInfo{{DType: bf, Shape: faShape("t", 32, 128)}, {DType: Float32, Shape: faShape(2, 32, 128, 128)}})
	qk4, v4 := faInput(bf, faShape("b", "s", 16, 128)), faInput(bf, faShape("b", "s", 32, 128))
	runFAOutputs(t, "gated delta net rank 4", ms+"GatedDeltaNet", 1, []faIn{qk4, qk4, v4}, nil,
		[]TypeInfo{{DType: bf, Shape: faShape("b", "s", 32, 128)}})
	for _, c := range []struct {
		ins   []faIn
		attrs []*Attribute
		want  string
	}{
		{conv[:2], []*Attribute{IntAttr("ndim", 4)}, "ndim 4"},
		{[]faIn{conv[0], faInput(bf, faShape(8192, 4))}, nil, "weight has rank 2"},
		{conv[:2], []*Attribute{IntAttr("channels_last", 1), IntAttr("ndim", 2)}, "channels_last needs ndim 1"},
	} {
		if _, err := runFAOp(t, ms+"CausalConvWithState", 1, c.ins, c.attrs, 2); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CausalConvWithState: want an error with %q, got %v", c.want, err)
		}
	}
	runFATypeCases(t, []faTypeCase{
		{name: "norm groups", op: ms + "GatedRMSNorm", opset: 1, ins: []faIn{faInput(bf, x), faInput(bf, faShape(100)), faInput(bf, x)}, wantErr: "not a multiple"},
		{name: "value heads", op: ms + "GatedDeltaNet", opset: 1, ins: []faIn{qk, qk, faInput(bf, faShape("t", 24, 128))}, wantErr: "not a multiple"},
		{name: "key heads", op: ms + "GatedDeltaNet", opset: 1, ins: []faIn{qk, faInput(bf, faShape("t", 8, 128)), v}, wantErr: "num_heads_q must equal"},
		{name: "update rule", op: ms + "GatedDeltaNet", opset: 1, attrs: []*Attribute{StringAttr("update_rule", "mamba")}, ins: []faIn{qk, qk, v}, wantErr: "update_rule"},
	})
}
