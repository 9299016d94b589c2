package train

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// ruleTestGPU is the cost package's test GPU: round numbers, so that the
// expected times here can be worked by hand.
func ruleTestGPU() *hwdb.GPU {
	return &hwdb.GPU{
		Name: "TestGPU", SMs: 100, BoostClockMHz: 1500,
		Peak: map[hwdb.Precision]float64{
			hwdb.FP32: 100e12, hwdb.FP16: 200e12, hwdb.FP16Tensor: 400e12,
		},
		MemBytes: 80e9, MemBW: 2e12, L2Bytes: 40e6,
		TDPWatts: 300, IdleWatts: 60, LaunchS: 5e-6,
	}
}

// builder makes hand-built graphs concise.
type builder struct {
	t *testing.T
	g *ir.Graph
	m *ir.Model
}

func newBuilder(t *testing.T) *builder {
	g := ir.NewGraph("test")
	return &builder{t: t, g: g, m: &ir.Model{Graph: g, Opsets: []ir.OpsetImport{{Version: 17}}}}
}

// val makes a value of known shape.
func (b *builder) val(name string, dt ir.DType, dims ...int64) *ir.Value {
	b.t.Helper()
	v, err := b.g.NewValue(name)
	if err != nil {
		b.t.Fatal(err)
	}
	v.DType, v.Shape = dt, ir.KnownShape(dims...)
	return v
}

// input makes a graph input of known shape.
func (b *builder) input(name string, dims ...int64) *ir.Value {
	v := b.val(name, ir.Float32, dims...)
	v.Declared = &ir.TypeInfo{DType: ir.Float32, Shape: ir.KnownShape(dims...)}
	b.g.AddInput(v)
	return v
}

// weight makes a float32 initializer (no data: dims only, like a
// graph-only model).
func (b *builder) weight(name string, dims ...int64) *ir.Value {
	v := b.val(name, ir.Float32, dims...)
	b.g.AddInitializer(v, &ir.Tensor{Name: name, DType: ir.Float32, Dims: dims})
	return v
}

func (b *builder) node(op string, ins []*ir.Value, outs []*ir.Value, attrs ...*ir.Attribute) *ir.Node {
	b.t.Helper()
	n := &ir.Node{Name: op + "_" + outs[0].Name, OpType: op, Inputs: ins, Outputs: outs, Attrs: attrs}
	if err := b.g.AddNode(n); err != nil {
		b.t.Fatal(err)
	}
	return n
}

// analyze runs the cost model on b and checks the report is sane.
func (b *builder) analyze(opt cost.Options) *report.Report {
	b.t.Helper()
	r, err := cost.Analyze(b.g, b.m, ruleTestGPU(), opt)
	if err != nil {
		b.t.Fatal(err)
	}
	checkSane(b.t, r)
	return r
}

// checkSane fails on any NaN, infinite or negative number among a
// report's totals and training figures, and on a report that does not
// marshal.
func checkSane(t *testing.T, r *report.Report) {
	t.Helper()
	bad := func(what string, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			t.Errorf("%s = %v", what, x)
		}
	}
	tt := r.Totals
	for name, x := range map[string]float64{"flops": tt.FLOPs, "time": tt.TimeS, "energy": tt.EnergyJ, "peak": tt.PeakMemoryBytes} {
		bad("totals."+name, x)
	}
	if tr := tt.Train; tr != nil {
		for name, x := range map[string]float64{"forward": tr.ForwardTimeS, "backward": tr.BackwardTimeS,
			"optimizer": tr.OptimizerTimeS, "step": tr.StepTimeS, "step_energy": tr.StepEnergyJ, "peak": tr.Memory.PeakBytes} {
			bad("train."+name, x)
		}
	}
	if _, err := json.Marshal(r); err != nil {
		t.Error(err)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
