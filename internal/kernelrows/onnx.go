package kernelrows

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/internal/calibrate"
	"github.com/onnxcost/onnxcost/ir"
)

// A measured row becomes a measurements table the way a user would write
// one: each row's kernel as a one-node ONNX file, its measured time, the
// compute dtype and the runtime it ran under (onnxcost calibrate
// --measurements).

// ModelDType is the one-node model of r with the compute dtype a
// measurements table must give for it (cost.Options.DType), or ok false
// with why when r has no ONNX form: a row that sums several kernels
// (phi-2's two adds), a DeepBench RNN (cuDNN's skip-input mode has no ONNX
// op: an LSTM node would also price the input projection), and DeepBench
// sheets whose arithmetic no --dtype names (int8 via dp4a, P100's fp16
// storage with fp32 math).
func (r Row) ModelDType() (m *ir.Model, dtype string, why string, err error) {
	spec := r.spec
	if r.bench != nil {
		s, why := benchSpec(r.bench.Row)
		if why != "" {
			return nil, "", why, nil
		}
		spec = &s
	}
	if spec == nil {
		return nil, "", "no node", nil
	}
	if r.Repeat > 1 {
		return nil, "", "sums several kernels", nil
	}
	_, m, _, err = spec.graph()
	if err != nil {
		return nil, "", "", fmt.Errorf("%s %s %s %s: %v", r.Source, r.GPU, r.Op, r.Shape, err)
	}
	return m, spec.compute, "", nil
}

// WriteModel writes r's one-node model to path (ir.WriteFile) and returns
// the dtype to price it at; why is set, and nothing written, when r has
// no ONNX form (ModelDType) or when its kernel does arithmetic the node
// does not: sarathi's SiluAndMul is one pass that also computes a Sigmoid
// and a second Mul per element, which Price counts and a one-node Mul
// model cannot say (priced as a bare Mul, those rows read 28-41% fast on
// the A100 and H100 and taught a calibration a false elementwise factor);
// nor when the kernel read an input from L2 that the kernel before it had
// just written (nodeSpec.justWritten: Vidur's residual adds), which a
// one-node model reads from DRAM (priced cold, the H100's adds read up to
// 1.4× slow and taught its calibration an Add factor that made our H200's
// cold adds, under it, too fast).
func (r Row) WriteModel(path string) (dtype, why string, err error) {
	if r.spec != nil && len(r.spec.extra) > 0 {
		return "", "the kernel also computes " + strings.Join(r.spec.extra, ", ") + " per element (no one-node ONNX form)", nil
	}
	if r.spec != nil && slices.Contains(r.spec.justWritten, true) {
		return "", "the kernel read an input the kernel before it had just written (a one-node model prices it cold)", nil
	}
	m, dtype, why, err := r.ModelDType()
	if err != nil || why != "" {
		return "", why, err
	}
	if err := ir.WriteFile(path, m); err != nil {
		return "", "", fmt.Errorf("%s: %v", path, err)
	}
	return dtype, "", nil
}

// benchSpec is the node of a DeepBench forward GEMM (MatMul [M×K]·[K×N];
// the sheet's transposes change the library's kernel choice, not the
// priced work) or convolution (Conv over NCHW with the sheet's padding and
// strides), in fp32 or fp16 storage and arithmetic.
func benchSpec(r calibrate.BenchRow) (nodeSpec, string) {
	var dt ir.DType
	switch r.Precision {
	case calibrate.BenchFP32:
		dt = ir.Float32
	case calibrate.BenchFP16:
		dt = ir.Float16
	default:
		return nodeSpec{}, "DeepBench " + string(r.Precision) + " (no --dtype names its arithmetic)"
	}
	s := nodeSpec{op: "MatMul", compute: string(r.Precision)}
	switch r.Kind {
	case calibrate.BenchGEMM:
		s.ins = []tensorSpec{{dt, []int64{r.M, r.K}}, {dt, []int64{r.K, r.N}}}
		s.out = tensorSpec{dt, []int64{r.M, r.N}}
	case calibrate.BenchConv:
		c := r.Conv()
		s.op = "Conv"
		s.ins = []tensorSpec{{dt, []int64{c.N, c.C, c.H, c.W}}, {dt, []int64{c.K, c.C, c.R, c.S}}}
		s.out = tensorSpec{dt, []int64{c.N, c.K, c.P(), c.Q()}}
		s.attrs = []*ir.Attribute{
			ir.IntsAttr("kernel_shape", c.R, c.S),
			ir.IntsAttr("pads", c.PadH, c.PadW, c.PadH, c.PadW),
			ir.IntsAttr("strides", max(c.StrideH, 1), max(c.StrideW, 1)),
		}
	default:
		return nodeSpec{}, "DeepBench " + string(r.Kind) + " (cuDNN's skip-input RNN has no ONNX op)"
	}
	return s, ""
}
