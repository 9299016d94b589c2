package ir

import "testing"

// TestContribVisionInfer: MaxpoolWithMask, ConvTransposeWithDynamicPads
// with constant and unknown pads, CropAndResize and CDist, with the
// shapes onnxruntime-node 1.23.2 gives on the CPU for the same nodes
// ([1,4,5,5], [1,3,9,9], [4,3,5,6], [5,7]), and their refusals.
func TestContribVisionInfer(t *testing.T) {
	const ms = "com.microsoft::"
	f := Float32
	x := faInput(f, faShape(1, 4, 9, 9))
	pool := []*Attribute{IntsAttr("kernel_shape", 3, 3), IntsAttr("strides", 2, 2), IntsAttr("pads", 1, 1, 1, 1)}
	runFAOutputs(t, "maxpool with mask", ms+"MaxpoolWithMask", 1, []faIn{x, faInput(Int32, faShape(1, 4, 9, 9))}, pool,
		[]TypeInfo{{DType: f, Shape: faShape(1, 4, 5, 5)}})
	cx, cw := faInput(f, faShape(1, 4, 5, 5)), faInput(f, faShape(4, 3, 3, 3))
	pads := faKnown(&Tensor{DType: Int64, Dims: []int64{4}, Ints: []int64{1, 1, 1, 1}, HasData: true})
	stride := []*Attribute{IntsAttr("strides", 2, 2)}
	runFAOutputs(t, "conv transpose, constant pads", ms+"ConvTransposeWithDynamicPads", 1, []faIn{cx, cw, pads}, stride,
		[]TypeInfo{{DType: f, Shape: faShape(1, 3, 9, 9)}})
	runFAOutputs(t, "conv transpose, no pads", ms+"ConvTransposeWithDynamicPads", 1, []faIn{cx, cw, faOmitted, faInput(f, faShape(3))}, stride,
		[]TypeInfo{{DType: f, Shape: faShape(1, 3, 11, 11)}})
	outs, err := runFAOp(t, ms+"ConvTransposeWithDynamicPads", 1, []faIn{cx, cw, faInput(Int64, faShape(4))}, stride, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s := outs[0].Shape; !s.Dims[0].Is(1) || !s.Dims[1].Is(3) || s.Dims[2].IsKnown() || s.Dims[3].IsKnown() {
		t.Errorf("conv transpose with unknown pads: %s, want [1,3,?,?]", s)
	}
	crop := faKnown(&Tensor{DType: Int32, Dims: []int64{2}, Ints: []int64{5, 6}, HasData: true})
	img, rois, bi := faInput(f, faShape(2, 3, 20, 20)), faInput(f, faShape(4, 4)), faInput(Int32, faShape(4))
	runFAOutputs(t, "crop and resize", ms+"CropAndResize", 1, []faIn{img, rois, bi, crop}, nil, []TypeInfo{{DType: f, Shape: faShape(4, 3, 5, 6)}})
	runFAOutputs(t, "cdist", ms+"CDist", 1, []faIn{faInput(f, faShape(5, 16)), faInput(f, faShape(7, 16))}, nil, []TypeInfo{{DType: f, Shape: faShape(5, 7)}})
	checkInferErrors(t, []inferErrCase{
		{op: ms + "MaxpoolWithMask", ins: []faIn{x, faInput(f, faShape(1, 4, 9, 9))}, attrs: pool, want: "M is float32"},
		{op: ms + "CropAndResize", ins: []faIn{faInput(f, faShape(3, 20, 20)), rois, bi, crop}, want: "X has rank 3"},
		{op: ms + "CropAndResize", ins: []faIn{img, faInput(f, faShape(4, 5)), bi, crop}, want: "rois is [4,5]"},
		{op: ms + "CropAndResize", ins: []faIn{img, rois, faInput(Int32, faShape(3)), crop}, want: "batch_indices has length 3"},
		{op: ms + "CropAndResize", ins: []faIn{img, rois, bi, faKnown(&Tensor{DType: Int32, Dims: []int64{2}, Ints: []int64{0, 6}, HasData: true})}, want: "must be positive"},
		{op: ms + "CropAndResize", ins: []faIn{img, rois, bi, crop}, attrs: []*Attribute{StringAttr("mode", "bicubic")}, want: "bilinear or nearest"},
		{op: ms + "CDist", ins: []faIn{faInput(f, faShape(5, 16)), faInput(f, faShape(7, 8))}, want: "B is [7,8]"},
		{op: ms + "CDist", ins: []faIn{faInput(f, faShape(5, 16)), faInput(f, faShape(7, 16))}, attrs: []*Attribute{StringAttr("metric", "cosine")}, want: "euclidean and sqeuclidean"},
		{op: ms + "CDist", ins: []faIn{faInput(f, faShape(16)), faInput(f, faShape(7, 16))}, want: "A has rank 1"},
	})
}
