// Package costtest is what the cost and train packages' tests share: a
// hand-written GPU whose round numbers let an expected time be worked by
// hand, a builder of small typed graphs for cost and backward rules, and
// a check that a report holds no impossible number. It is imported by
// tests only; it cannot price a graph itself (cost's own tests could not
// import it then), so each package keeps a one-line analyze of its own.
package costtest

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// GPU is a fixed GPU, so that tests do not move when the database is
// edited: 100 TFLOP/s fp32 vector, 200 fp16 vector, 400 fp16 tensor, no
// tf32, 2 TB/s, 40 MB of L2, 300 W TDP, 60 W idle, 5 µs launches.
func GPU() *hwdb.GPU {
	return &hwdb.GPU{
		Name: "TestGPU", SMs: 100, BoostClockMHz: 1500,
		Peak: map[hwdb.Precision]float64{
			hwdb.FP32: 100e12, hwdb.FP16: 200e12, hwdb.FP16Tensor: 400e12,
		},
		MemBytes: 80e9, MemBW: 2e12, L2Bytes: 40e6,
		TDPWatts: 300, IdleWatts: 60, LaunchS: 5e-6,
	}
}

// Builder makes hand-built graphs concise: values of known shape, float32
// inputs and weights, and nodes writing the outputs they are given.
type Builder struct {
	T testing.TB
	G *ir.Graph
	M *ir.Model
}

// New starts an empty graph at opset 17.
func New(t testing.TB) *Builder {
	g := ir.NewGraph("test")
	return &Builder{T: t, G: g, M: &ir.Model{Graph: g, Opsets: []ir.OpsetImport{{Version: 17}}}}
}

// Val makes a value of known shape.
func (b *Builder) Val(name string, dt ir.DType, dims ...int64) *ir.Value {
	b.T.Helper()
	v, err := b.G.NewValue(name)
	if err != nil {
		b.T.Fatal(err)
	}
	v.DType, v.Shape = dt, ir.KnownShape(dims...)
	return v
}

// Input makes a float32 graph input of known shape.
func (b *Builder) Input(name string, dims ...int64) *ir.Value {
	v := b.Val(name, ir.Float32, dims...)
	v.Declared = &ir.TypeInfo{DType: ir.Float32, Shape: ir.KnownShape(dims...)}
	b.G.AddInput(v)
	return v
}

// Weight makes a float32 initializer with dims only, like a graph-only
// model's.
func (b *Builder) Weight(name string, dims ...int64) *ir.Value {
	v := b.Val(name, ir.Float32, dims...)
	b.G.AddInitializer(v, &ir.Tensor{Name: name, DType: ir.Float32, Dims: dims})
	return v
}

// Ints makes an int64 initializer with known contents.
func (b *Builder) Ints(name string, vals ...int64) *ir.Value {
	v := b.Val(name, ir.Int64, int64(len(vals)))
	b.G.AddInitializer(v, ir.IntTensor([]int64{int64(len(vals))}, vals))
	return v
}

// Node adds op reading ins and writing outs, named after its first output.
func (b *Builder) Node(op string, ins []*ir.Value, outs []*ir.Value, attrs ...*ir.Attribute) *ir.Node {
	b.T.Helper()
	n := &ir.Node{Name: op + "_" + outs[0].Name, OpType: op, Inputs: ins, Outputs: outs, Attrs: attrs}
	if err := b.G.AddNode(n); err != nil {
		b.T.Fatal(err)
	}
	return n
}

// CheckSane fails on any NaN, infinite or negative number among a
// report's totals, its nodes' figures and its training step's, on a GEMM
// and convolution share of time above 1, and on a report that does not
// marshal.
func CheckSane(t testing.TB, r *report.Report) {
	t.Helper()
	bad := func(what string, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			t.Errorf("%s = %v", what, x)
		}
	}
	tt := r.Totals
	for name, x := range map[string]float64{"macs": tt.MACs, "flops": tt.FLOPs, "trans": tt.Transcendentals,
		"read": tt.BytesRead, "written": tt.BytesWritten, "params": tt.Params, "param_bytes": tt.ParamBytes,
		"launches": tt.Launches, "time": tt.TimeS, "energy": tt.EnergyJ, "peak": tt.PeakMemoryBytes,
		"peak_act": tt.PeakActivationBytes, "share": tt.GEMMConvTimeShare} {
		bad("totals."+name, x)
	}
	if tt.GEMMConvTimeShare > 1+1e-9 {
		t.Errorf("gemm_conv_time_share = %v > 1", tt.GEMMConvTimeShare)
	}
	for _, n := range r.Nodes {
		for i, x := range []float64{n.MACs, n.FLOPs, n.Transcendentals, n.BytesRead, n.BytesWritten, n.Params,
			n.Launches, n.ArithmeticIntensity, n.ComputeS, n.MemoryS, n.TimeS, n.LaunchS, n.EnergyJ} {
			bad(n.Name+" field "+string(rune('0'+i)), x)
		}
	}
	if tr := tt.Train; tr != nil {
		for name, x := range map[string]float64{"forward": tr.ForwardTimeS, "backward": tr.BackwardTimeS,
			"optimizer": tr.OptimizerTimeS, "step": tr.StepTimeS, "step_energy": tr.StepEnergyJ, "peak": tr.Memory.PeakBytes} {
			bad("train."+name, x)
		}
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("report does not marshal: %v", err)
	}
}

// Linear builds y = x·Wᵀ for x [2,64,256] and a weight W [512,256]: as
// torch.onnx writes F.linear exported without constant folding,
// MatMul(x, Transpose(W)), when transposed; else as the folded export,
// MatMul(x, Wᵀ) with Wᵀ an initializer of its own.
func Linear(t testing.TB, transposed bool) *Builder {
	b := New(t)
	x := b.Input("x", 2, 64, 256)
	y := b.Val("y", ir.Float32, 2, 64, 512)
	b.G.AddOutput(y)
	if !transposed {
		b.Node("MatMul", []*ir.Value{x, b.Weight("wt", 256, 512)}, []*ir.Value{y})
		return b
	}
	wt := b.Val("wt", ir.Float32, 256, 512)
	b.Node("Transpose", []*ir.Value{b.Weight("w", 512, 256)}, []*ir.Value{wt}, ir.IntsAttr("perm", 1, 0))
	b.Node("MatMul", []*ir.Value{x, wt}, []*ir.Value{y})
	return b
}

// LM builds a language model's two ends: a Gather from a [vocab,dim]
// embedding table by rows token ids, then a MatMul by a [dim,vocab] head
// weight. Tied, the model marks the head as the table's transposed copy
// (ir.Model.TiedCopies), as pipeline.Load does for a file whose bytes
// show it.
func (b *Builder) LM(vocab, dim, rows int64, tied bool) {
	ids := b.Val("ids", ir.Int64, rows)
	ids.Declared = &ir.TypeInfo{DType: ir.Int64, Shape: ir.KnownShape(rows)}
	b.G.AddInput(ids)
	table, head := b.Weight("table", vocab, dim), b.Weight("head", dim, vocab)
	x, y := b.Val("x", ir.Float32, rows, dim), b.Val("y", ir.Float32, rows, vocab)
	b.Node("Gather", []*ir.Value{table, ids}, []*ir.Value{x})
	b.Node("MatMul", []*ir.Value{x, head}, []*ir.Value{y})
	b.G.Outputs = append(b.G.Outputs, y)
	if tied {
		b.M.TiedCopies = map[*ir.Value]*ir.Value{head: table}
	}
}
