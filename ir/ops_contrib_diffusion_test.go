package ir

import "testing"

// TestDiffusionContribInfer: the ops onnxruntime's optimizer writes into
// a Stable Diffusion UNet, at SD 1.5's first block (64×64 latents, 320
// channels, 32 groups, NHWC), and their refusals.
func TestDiffusionContribInfer(t *testing.T) {
	const ms = "com.microsoft::"
	f16 := Float16
	x := faShape("n", 64, 64, 320)
	c320 := faInput(f16, faShape(320))
	gn := []*Attribute{IntAttr("groups", 32), IntAttr("activation", 1)}
	runFAOutputs(t, "group norm", ms+"GroupNorm", 1, []faIn{faInput(f16, x), c320, c320}, gn, []TypeInfo{{DType: f16, Shape: x}})
	runFAOutputs(t, "group norm nchw", ms+"GroupNorm", 1, []faIn{faInput(f16, faShape("n", 320, 64, 64)), c320, c320},
		append(gn, IntAttr("channels_last", 0)), []TypeInfo{{DType: f16, Shape: faShape("n", 320, 64, 64)}})
	runFAOutputs(t, "skip group norm", ms+"SkipGroupNorm", 1, []faIn{faInput(f16, x), c320, c320, faInput(f16, x), c320}, gn,
		[]TypeInfo{{DType: f16, Shape: x}, {DType: f16, Shape: x}})
	conv := []*Attribute{IntsAttr("pads", 1, 1, 1, 1), IntsAttr("kernel_shape", 3, 3)}
	runFAOutputs(t, "nhwc conv", ms+"NhwcConv", 1, []faIn{faInput(f16, faShape("n", 64, 64, 4)), faInput(f16, faShape(320, 3, 3, 4)), c320},
		conv, []TypeInfo{{DType: f16, Shape: x}})
	runFAOutputs(t, "nhwc conv stride 2", ms+"NhwcConv", 1, []faIn{faInput(f16, x), faInput(f16, faShape(320, 3, 3, 320))},
		append(conv, IntsAttr("strides", 2, 2)), []TypeInfo{{DType: f16, Shape: faShape("n", 32, 32, 320)}})
	// NhwcFusedConv's weight is in Conv's layout [M, C/group, kH, kW].
	runFAOutputs(t, "nhwc fused conv", ms+"NhwcFusedConv", 1, []faIn{faInput(f16, faShape("n", 64, 64, 4)), faInput(f16, faShape(320, 4, 3, 3)), c320,
		faInput(f16, x)}, append(conv, StringAttr("activation", "Relu")), []TypeInfo{{DType: f16, Shape: x}})
	runFAOutputs(t, "transpose matmul", ms+"TransposeMatMul", 1, []faIn{faInput(f16, faShape(8, 64, 32)), faInput(f16, faShape(8, 16, 32))},
		[]*Attribute{IntAttr("transB", 1)}, []TypeInfo{{DType: f16, Shape: faShape(8, 64, 16)}})
	runFAOutputs(t, "bias split gelu", ms+"BiasSplitGelu", 1, []faIn{faInput(f16, faShape("n", 4096, 2560)), faInput(f16, faShape(2560))}, nil,
		[]TypeInfo{{DType: f16, Shape: faShape("n", 4096, 1280)}})
	seq := faShape("n", 4096, 320)
	runFAOutputs(t, "bias add", ms+"BiasAdd", 1, []faIn{faInput(f16, seq), c320, faInput(f16, seq)}, nil, []TypeInfo{{DType: f16, Shape: seq}})
	runFATypeCases(t, []faTypeCase{
		{name: "group norm without groups", op: ms + "GroupNorm", opset: 1, ins: []faIn{faInput(f16, x), c320, c320}, wantErr: "groups"},
		{name: "groups not dividing", op: ms + "GroupNorm", opset: 1, attrs: []*Attribute{IntAttr("groups", 33)},
			ins: []faIn{faInput(f16, x), c320, c320}, wantErr: "not divisible by groups 33"},
		{name: "gamma of another width", op: ms + "GroupNorm", opset: 1, attrs: gn,
			ins: []faIn{faInput(f16, x), faInput(f16, faShape(64)), c320}, wantErr: "gamma has 64 entries"},
		{name: "silu flag out of range", op: ms + "GroupNorm", opset: 1, attrs: []*Attribute{IntAttr("groups", 32), IntAttr("activation", 2)},
			ins: []faIn{faInput(f16, x), c320, c320}, wantErr: "activation 2"},
		{name: "nhwc conv channels", op: ms + "NhwcConv", opset: 1, attrs: conv,
			ins: []faIn{faInput(f16, faShape("n", 64, 64, 4)), faInput(f16, faShape(320, 3, 3, 8))}, wantErr: "channel"},
		{name: "split gelu odd", op: ms + "BiasSplitGelu", opset: 1, ins: []faIn{faInput(f16, faShape(1, 4, 5)), faInput(f16, faShape(5))}, wantErr: "odd"},
		{name: "bias add skip shape", op: ms + "BiasAdd", opset: 1, ins: []faIn{faInput(f16, faShape(1, 4, 8)), faInput(f16, faShape(8)), faInput(f16, faShape(1, 5, 8))}, wantErr: "one shape"},
	})
}
