// Package kernelrows prices single measured kernels through onnxcost's time
// model: Vidur's per-operator LLM profiles (A100, H100, A40), DeepBench's
// GEMM/convolution/RNN sheets (through internal/calibrate) and our own H100
// and H200 rows (testdata/measured). Each row is a kernel measured alone, the kernel
// the cost rules build for it, and whether it is held out of fitting. The
// per-(source, GPU, op) and per-(GPU, class) errors show where the model is
// off; the held-out ratios measured/predicted per GPU family and kernel class
// are the error bands of calib (go run ./internal/kernelrows/cmd/bands).
package kernelrows

import (
	"fmt"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/calibrate"
)

// Sources of rows.
const (
	SourceVidur     = "vidur"
	SourceDeepBench = "deepbench"
	SourceH100      = "onnxcost-h100"
	SourceH200      = "onnxcost-h200"
)

// Row is one measured kernel (or a short run of identical kernels that the
// measurement sums) with what the time model needs to price it.
type Row struct {
	Source string
	// GPU is the hwdb name of the GPU the row was measured on.
	GPU string
	// Op is what the data set calls the operation ("mlp_up_proj",
	// "gemm/fp32", "MatMul fp16").
	Op string
	// Shape is the row's sizes in words, unique within (Source, GPU, Op).
	Shape string
	// Class is the kernel class the rules give it.
	Class perf.KernelClass
	// Kernel is the kernel priced on GPU with the committed parameters
	// (its precision resolved for GPU; Price resolves it again for
	// another GPU from Compute).
	Kernel perf.Kernel
	// Compute is the compute dtype as cost.Options.DType takes it ("fp16",
	// "tf32"...); empty for DeepBench rows, which pick their own path.
	Compute string
	// Repeat is the number of identical kernels the measured time sums
	// (phi-2's two residual adds); 0 means 1.
	Repeat int
	// Setting is how the measurement ran the kernel: InPlan for kernels
	// timed back to back inside a PyTorch run (Vidur, our H100 rows, priced
	// as cost.Analyze prices a node), Isolated for DeepBench's library
	// calls in a loop (the calibration's setting).
	Setting   perf.Setting
	MeasuredS float64
	// HeldOut marks rows no fit may use: DeepBench's calibration hold-out,
	// every 4th Vidur shape, all our H100 rows.
	HeldOut bool

	// bench is the DeepBench case, priced through calibrate (which picks
	// the convolution algorithm per GPU and parameter set).
	bench *calibrate.BenchCase
	// spec is the one-node graph of a Vidur or H100 row, kept so tests can
	// cost the same graph with cost.Analyze.
	spec *nodeSpec
}

// Price is the time model's estimate for the row on gpu with the committed
// parameters, the way cost.Analyze prices a node of a one-node graph for
// rows measured inside PyTorch.
func Price(r Row, gpu *hwdb.GPU) perf.KernelTime {
	return PriceWith(r, gpu, perf.DefaultParams())
}

// PriceWith is Price with candidate parameters p (for refits).
func PriceWith(r Row, gpu *hwdb.GPU, p perf.Params) perf.KernelTime {
	if r.bench != nil {
		c := *r.bench
		c.GPU = gpu
		t, _ := c.Predict(p)
		return t
	}
	k := r.Kernel
	if r.Compute != "" {
		k.Precision = perf.ResolvePrecision(gpu, perf.WantedPrecision(r.Compute, k.Class))
	}
	o := perf.Options{Params: p, Setting: r.Setting}
	if r.Setting == perf.InPlan {
		o.Runtime = runtimeOf(r.Source)
	}
	t := perf.EstimateKernel(gpu, k, o)
	if n := float64(r.Repeat); n > 1 {
		t.ComputeS *= n
		t.LatencyS *= n
		t.MemoryS *= n
		t.LaunchS *= n
		t.TimeS *= n
	}
	return t
}

// PrecisionGroup is the row's band precision (calib.PrecisionGroup): a
// DeepBench row's the arithmetic its sheet asked for (fp32, fp16 or int8,
// whatever path the model prices it on; none for the fp16-storage,
// fp32-math "pseudo_fp16" rows, which no report runs), any other row's
// its priced kernel's path.
func (r Row) PrecisionGroup() string {
	if r.bench != nil {
		switch r.bench.Row.Precision {
		case calibrate.BenchFP32:
			return calib.PrecisionGroup(hwdb.FP32)
		case calibrate.BenchFP16:
			return calib.PrecisionGroup(hwdb.FP16Tensor)
		case calibrate.BenchINT8:
			return calib.PrecisionGroup(hwdb.INT8Tensor)
		}
		return ""
	}
	return calib.PrecisionGroup(r.Kernel.Precision)
}

// inPlanRuntime prices rows timed inside PyTorch back to back: kernels
// replayed one after another, each paying the in-graph gap.
var inPlanRuntime = mustRuntime("graph")

// vidurRuntime is inPlanRuntime as Vidur's PyTorch ran it: an older
// PyTorch than 2.8, whose index_select of an embedding lookup is
// indexSelectLargeIndex's loop, not a gather (hwdb.Runtime.IndexSelectGather).
var vidurRuntime = func() *hwdb.Runtime {
	r := inPlanRuntime.Clone()
	r.IndexSelectGather = 0
	return r
}()

// runtimeOf is the runtime a source's in-plan rows ran under.
func runtimeOf(source string) *hwdb.Runtime {
	if source == SourceVidur {
		return vidurRuntime
	}
	return inPlanRuntime
}

func mustRuntime(name string) *hwdb.Runtime {
	r, err := hwdb.LookupRuntime(name)
	if err != nil {
		panic(fmt.Sprintf("kernelrows: built-in runtime %q: %v", name, err))
	}
	return r
}

// Family is the GPU architecture family of an hwdb arch ("Ampere (GA100)"
// is "Ampere", "Ada Lovelace (AD102)" is "Ada Lovelace").
func Family(g *hwdb.GPU) string { return g.Family() }

// lookupGPU resolves an hwdb name, naming what wanted it on failure.
func lookupGPU(name, what string) (*hwdb.GPU, error) {
	g, err := hwdb.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%s: GPU %s: %v", what, name, err)
	}
	return g, nil
}
