package kernelrows

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/internal/measured"
)

// h100GPU is the GPU of testdata/measured/h100_sxm5_kernels.csv (its
// header: one H100 80GB HBM3 SXM5, 700 W).
const h100GPU = "H100-SXM5-80GB"

// OwnFile is one file of our own single-kernel rows and the GPU it was
// measured on.
type OwnFile struct{ File, GPU, Source string }

// OwnFiles are our own single-kernel measurements (scripts/measure_gpu.py
// --kernels), relative to the repository root.
var OwnFiles = []OwnFile{
	{H100File, h100GPU, SourceH100},
	{"testdata/measured/h200_sxm_kernels.csv", "H200-SXM-141GB", SourceH200},
}

// IsOwn reports whether source is one of our own measurements, timed per
// call inside a CUDA graph.
func IsOwn(source string) bool { return source == SourceH100 || source == SourceH200 }

// LoadOwn reads one file of our own single-kernel rows (torch.matmul,
// torch.add and a decode step's scaled_dot_product_attention, timed per
// call inside a CUDA graph; scripts/measure_gpu.py --kernels).
// Nothing is fitted to them, so all are held out.
func LoadOwn(f OwnFile) ([]Row, error) {
	file := f.File
	recs, err := measured.Read(file, "op,dtype,shape,ms")
	if err != nil {
		return nil, err
	}
	gpu, err := lookupGPU(f.GPU, file)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for i, rec := range recs {
		op, dtype, shape := rec[0], rec[1], rec[2]
		ms, err := strconv.ParseFloat(rec[3], 64)
		if err != nil || !(ms > 0) {
			return nil, fmt.Errorf("%s: row %d: time %q is not a positive number", file, i+1, rec[3])
		}
		spec, err := h100Spec(op, dtype, shape)
		if err != nil {
			return nil, fmt.Errorf("%s: row %d: %v", file, i+1, err)
		}
		k, err := spec.kernel(gpu)
		if err != nil {
			return nil, fmt.Errorf("%s: row %d: %v", file, i+1, err)
		}
		rows = append(rows, Row{Source: f.Source, GPU: f.GPU, Op: op + " " + dtype, Shape: shape,
			Class: k.Class, Kernel: k, Compute: dtype, Setting: perf.InPlan,
			MeasuredS: ms * 1e-3, HeldOut: true, spec: &spec})
	}
	return rows, nil
}

// h100Spec is the node of one row: MatMul of shape MxNxK, Add over shape
// elements, or a decode step's Attention of B sequences × H heads over L
// keys of D, in the row's dtype (tf32: fp32 tensors on the TF32 path).
func h100Spec(op, dtype, shape string) (nodeSpec, error) {
	dt, ok := computeStorage[dtype]
	if !ok {
		return nodeSpec{}, fmt.Errorf("dtype %q not fp32, tf32, fp16 or bf16", dtype)
	}
	var dims []int64
	for _, s := range strings.Split(shape, "x") {
		d, err := strconv.ParseInt(s, 10, 64)
		if err != nil || d <= 0 {
			return nodeSpec{}, fmt.Errorf("shape %q: want positive integers joined by x", shape)
		}
		dims = append(dims, d)
	}
	s := nodeSpec{op: op, compute: dtype}
	switch {
	case (op == "MatMul" || op == "MatMulCold") && len(dims) == 3:
		// MatMulCold: the weight read from DRAM every call (rotated
		// through more copies than L2 holds), as a one-node graph prices
		// every input.
		s.op = "MatMul"
		m, n, k := dims[0], dims[1], dims[2]
		s.ins = []tensorSpec{{dt, []int64{m, k}}, {dt, []int64{k, n}}}
		s.out = tensorSpec{dt, []int64{m, n}}
	case op == "Add" && len(dims) == 1:
		s.ins = []tensorSpec{{dt, dims}, {dt, dims}}
		s.out = tensorSpec{dt, dims}
	case op == "Attention" && len(dims) == 4:
		// A decode step's F.scaled_dot_product_attention: one query per
		// sequence and head over L cached keys, ONNX's Attention (opset
		// 23) in the [B, H, L, d] layout.
		b, h, l, d := dims[0], dims[1], dims[2], dims[3]
		q := tensorSpec{dt, []int64{b, h, 1, d}}
		kv := tensorSpec{dt, []int64{b, h, l, d}}
		s.ins = []tensorSpec{q, kv, kv}
		s.out = q
	default:
		return nodeSpec{}, fmt.Errorf("op %s with shape %s: want MatMul or MatMulCold MxNxK, Add N or Attention BxHxLxD", op, shape)
	}
	return s, nil
}
