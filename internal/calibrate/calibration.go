package calibrate

import (
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
)

// Calibration of the time model against DeepBench (CALIBRATION.md).
//
// Every measured kernel becomes a Kernel built with the same builders the
// rules use (perf.GEMMKernel, perf.EstimateConv, perf.RNNKernel), is priced
// with perf.EstimateKernel in the Isolated setting, and is compared with its measured time. Rows are
// split deterministically: within each (GPU, kind) group, in file order,
// every third row is held back and never used in fitting.

// BenchCase is one measured kernel bound to its GPU.
type BenchCase struct {
	Row     BenchRow
	GPUName string    // hwdb name
	GPU     *hwdb.GPU // figures used for the prediction
	Holdout bool      // held back from fitting
}

// deepBenchAliases are DeepBench file tags hwdb does not resolve by
// itself. DeepBench's "TitanX" results (2016) are the Maxwell GTX Titan X,
// measured before the Pascal Titan X existed; hwdb rightly refuses the bare
// name as ambiguous.
var deepBenchAliases = map[string]string{"TitanX": "Titan-X-Maxwell"}

// DeepBenchGPUName returns the hwdb name of the GPU a DeepBench CSV
// measured, or "" when the file names no GPU hwdb knows. The GPU tag of
// the file name (train_DeepBench_NV_P100.csv: "P100") resolves through
// hwdb's own name matching, so new measurements need no code.
func DeepBenchGPUName(file string) string {
	base := strings.TrimSuffix(path.Base(file), ".csv")
	_, tag, ok := strings.Cut(base, "DeepBench_")
	if !ok {
		return ""
	}
	// Drop the vendor prefix ("NV_", "AMD_"); hwdb ignores case, '_' and '-'.
	for _, vendor := range []string{"NV_", "AMD_", "Intel_"} {
		tag = strings.TrimPrefix(tag, vendor)
	}
	if a, ok := deepBenchAliases[tag]; ok {
		tag = a
	}
	if g, err := hwdb.Lookup(tag); err == nil {
		return g.Name
	}
	return ""
}

// GPUResolver finds a GPU's figures by hwdb name.
type GPUResolver func(name string) (*hwdb.GPU, error)

// LoadDeepBench parses every *.csv in fsys, binds rows to GPUs and marks
// the held-out split. Files whose GPU the resolver does not know are
// reported in skipped, not silently dropped.
func LoadDeepBench(fsys fs.FS, resolve GPUResolver) (cases []BenchCase, files []*BenchFile, skipped []string, err error) {
	names, err := fs.Glob(fsys, "*.csv")
	if err != nil {
		return nil, nil, nil, err
	}
	sort.Strings(names)
	for _, name := range names {
		gname := DeepBenchGPUName(name)
		if gname == "" {
			skipped = append(skipped, name+": unknown GPU")
			continue
		}
		g, rerr := resolve(gname)
		if rerr != nil || g == nil {
			skipped = append(skipped, fmt.Sprintf("%s: GPU %s: %v", name, gname, rerr))
			continue
		}
		f, oerr := fsys.Open(name)
		if oerr != nil {
			return nil, nil, nil, oerr
		}
		bf, perr := ParseDeepBench(path.Base(name), f)
		f.Close()
		if perr != nil {
			return nil, nil, nil, perr
		}
		files = append(files, bf)
		for _, r := range bf.Rows {
			cases = append(cases, BenchCase{Row: r, GPUName: gname, GPU: g})
		}
	}
	markHoldout(cases)
	return cases, files, skipped, nil
}

// markHoldout holds back every third row of each (GPU, kind) group.
func markHoldout(cases []BenchCase) {
	seen := map[string]int{}
	for i := range cases {
		key := cases[i].GPUName + "/" + string(cases[i].Row.Kind)
		cases[i].Holdout = seen[key]%3 == 2
		seen[key]++
	}
}

// benchPath maps a sheet's arithmetic to the compute path it ran on and
// the bytes per operand and output element. These choices follow the data,
// not only the sheet titles: P100's "Psuedo FP16" multiplies in fp32 (its
// GEMMs top out at the fp32 rate), and DeepBench's int8 GEMMs (cuBLAS of
// 2017-2019) use dp4a, not T4's int8 tensor cores (T4 int8 GEMMs reach 24
// TOPS of its 130 TOPS tensor peak but 73% of its 32 TOPS dp4a rate).
// Its int8 convolutions are benchConvPath's.
func benchPath(g *hwdb.GPU, bp BenchPrecision) (pr hwdb.Precision, in, out float64) {
	switch bp {
	case BenchPseudoFP16:
		return hwdb.FP32, 2, 2
	case BenchFP16:
		if g.PeakFor(hwdb.FP16Tensor) > 0 {
			return hwdb.FP16Tensor, 2, 2
		}
		return hwdb.FP16, 2, 2
	case BenchINT8:
		return hwdb.INT8, 1, 4
	}
	return hwdb.FP32, 4, 4
}

// benchConvPath is benchPath for a convolution row. DeepBench's int8
// convolutions (code/nvidia/conv_bench.cu and cudnn_helper.h at 30c5115,
// the 2019 patch the T4 results were taken with) describe input, filter
// and output as int8 (cuDNN's INT8_CONFIG, so 1-byte outputs, unlike the
// int8 GEMMs' int32 C), and on compute capability 7.5 and later as
// CUDNN_DATA_INT8x32 in NCHW_VECT_C with CUDNN_TENSOR_OP_MATH: the IMMA
// (int8 tensor-core) kernels, which the measurements confirm (T4 runs
// its large int8 convolutions at up to 72 TOPS, above its 32.6 TOPS dp4a
// peak). Earlier GPUs run dp4a on NHWC.
func benchConvPath(g *hwdb.GPU, bp BenchPrecision) (pr hwdb.Precision, in, out float64) {
	if bp != BenchINT8 {
		return benchPath(g, bp)
	}
	if g.PeakFor(hwdb.INT8Tensor) > 0 {
		return hwdb.INT8Tensor, 1, 1
	}
	return hwdb.INT8, 1, 1
}

// Predict is the model's time for a measured kernel, and the kernel it
// priced (for convolution, the faster of implicit GEMM and Winograd).
func (c BenchCase) Predict(p perf.Params) (perf.KernelTime, perf.Kernel) {
	r := c.Row
	if r.Kind.IsBackward() {
		return c.predictBackward(p)
	}
	path := benchPath
	if r.Kind == BenchConv {
		path = benchConvPath
	}
	pr, in, out := path(c.GPU, r.Precision)
	switch r.Kind {
	case BenchGEMM:
		k := perf.GEMMKernel(r.M, r.N, r.K, 1, pr, in, out)
		// DeepBench's TN rows (cuBLAS column-major: Aᵀ·B, both operands
		// contiguous along K) are a linear layer's x·Wᵀ.
		k.TransposedB = r.TransA && !r.TransB
		return perf.EstimateKernel(c.GPU, k, perf.Options{Params: p, Setting: perf.Isolated}), k
	case BenchConv:
		k, t := perf.EstimateConv(c.GPU, r.Conv(), pr, in, out, perf.Options{Params: p, Setting: perf.Isolated})
		return t, k
	default:
		// DeepBench runs cuDNN RNNs in skip-input mode (no input
		// projection): its own FLOP counts are recurrent-only, and the
		// measured rates would exceed peak otherwise.
		k := perf.RNNKernel(r.RNNOp(), r.Hidden, 0, r.RNNBatch, r.Steps, 1, pr, in)
		return perf.EstimateKernel(c.GPU, k, perf.Options{Params: p, Setting: perf.Isolated}), k
	}
}

// ErrStat is the absolute percentage error of one (GPU, kind) group.
type ErrStat struct {
	GPU    string
	Kind   string // "gemm", "conv", "rnn" or "all"
	N      int
	Median float64 // median |pred-meas|/meas
	P90    float64 // 90th percentile of the same
}

// absPctErr is |pred - meas| / meas.
func absPctErr(pred, meas float64) float64 { return math.Abs(pred-meas) / meas }

// pooledGPU names the rows of ErrorTable that pool every GPU.
const pooledGPU = "(all GPUs)"

// ErrorTable computes error statistics over the cases selected by keep,
// per GPU and kind plus an "all" row per GPU and pooled rows over all
// GPUs, sorted by GPU then kind.
func ErrorTable(cases []BenchCase, p perf.Params, keep func(BenchCase) bool) []ErrStat {
	groups := map[[2]string][]float64{}
	for _, c := range cases {
		if !keep(c) {
			continue
		}
		t, _ := c.Predict(p)
		e := absPctErr(t.TimeS, c.Row.TimeS)
		groups[[2]string{c.GPUName, string(c.Row.Kind)}] = append(groups[[2]string{c.GPUName, string(c.Row.Kind)}], e)
		groups[[2]string{c.GPUName, "all"}] = append(groups[[2]string{c.GPUName, "all"}], e)
		groups[[2]string{pooledGPU, string(c.Row.Kind)}] = append(groups[[2]string{pooledGPU, string(c.Row.Kind)}], e)
		groups[[2]string{pooledGPU, "all"}] = append(groups[[2]string{pooledGPU, "all"}], e)
	}
	keys := make([][2]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return kindOrder(keys[i][1]) < kindOrder(keys[j][1])
	})
	out := make([]ErrStat, 0, len(keys))
	for _, k := range keys {
		e := groups[k]
		out = append(out, ErrStat{GPU: k[0], Kind: k[1], N: len(e), Median: quantile(e, 0.5), P90: quantile(e, 0.9)})
	}
	return out
}

func kindOrder(k string) int {
	switch k {
	case "gemm":
		return 0
	case "conv":
		return 1
	case "rnn":
		return 2
	case "conv-dgrad":
		return 3
	case "conv-wgrad":
		return 4
	case "rnn-dgrad":
		return 5
	case "rnn-wgrad":
		return 6
	case "rnn-bwd":
		return 7
	}
	return 8
}

// quantile is the q-quantile by linear interpolation between order
// statistics; it sorts a copy.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (pos-float64(lo))*(s[hi]-s[lo])
}

// fitted lists the parameters the fit moves, as pointers into a Params;
// all are positive, so the search runs on their logarithms. L2Factor stays
// fixed: DeepBench does not isolate L2. The RNN step latencies are fitted
// by their own stage (FitRNN), EffWgrad by FitBackward.
func fitted(p *perf.Params) []*float64 {
	return []*float64{
		&p.EffVector, &p.EffTensor, &p.EffConv, &p.EffWinograd, &p.KHalf,
		&p.SmallTile, &p.TileReuse, &p.Occupancy, &p.Unaligned, &p.MemEff, &p.FillLaunches, &p.LaunchS,
	}
}

// FitLoss is the loss the fit minimises, on the log ratio of predicted to
// measured time (2× too slow weighs like 2× too fast): the blend
// (1-w)·mean + w·median of min(|log ratio|, fitLossCap), w =
// fitLossMedianWeight. The cap keeps a few library pathologies (a GEMM
// shape cuBLAS runs 3× slow, P100's batch-32 RNNs) from pulling the
// parameters away from the bulk of the rows, and the median term aims the
// fit at what is reported (median error). Rows of all GPUs are pooled:
// weighing GPUs alike made the Pascal GPUs 5 points worse for no
// leave-one-out gain.
//
// Each row counts with its RowWeight: DeepBench's fp16 and int8 operands
// are all zeros (see RowWeight), so those rows count less.
func FitLoss(cases []BenchCase, p perf.Params) float64 {
	var sum, wsum float64
	all := make([]weighted, 0, len(cases))
	for _, c := range cases {
		t, _ := c.Predict(p)
		e := float64(fitLossBad)
		if t.TimeS > 0 && !math.IsNaN(t.TimeS) && !math.IsInf(t.TimeS, 0) {
			e = min(math.Abs(math.Log(t.TimeS/c.Row.TimeS)), fitLossCap)
		}
		w := RowWeight(c.Row)
		sum += w * e
		wsum += w
		all = append(all, weighted{e, w})
	}
	if len(all) == 0 || wsum <= 0 {
		return 0
	}
	return (1-fitLossMedianWeight)*sum/wsum + fitLossMedianWeight*weightedMedian(all)
}

// RowWeight is how much a DeepBench row counts in the fit. DeepBench fills
// its operands with Tensor rand<T> (code/nvidia/tensor.h in
// baidu-research/DeepBench): uniform floats in [0,1) copied into T, and
// its half and int8 benchmarks use T = uint16_t and uint8_t
// (gemm_bench.cu: rand<uint16_t>, rand<uint8_t>), so every value truncates
// to 0. Multiplying zeros toggles almost no datapath bits: the kernel draws
// less power than on real data, and a power-limited board (T4 at 70 W)
// holds a higher clock than it would. Those timings are optimistic by an
// amount the data cannot tell, so they count zeroOperandWeight of an fp32
// row, whose operands are real uniform floats.
func RowWeight(r BenchRow) float64 {
	switch r.Precision {
	case BenchFP16, BenchPseudoFP16, BenchINT8:
		return zeroOperandWeight
	}
	return 1
}

// zeroOperandWeight is the weight of a row measured on all-zero operands.
const zeroOperandWeight = 0.5

// weighted is a loss term with its weight.
type weighted struct{ e, w float64 }

// weightedMedian is the value at half the total weight (the lower one
// on a tie), the median of the rows each repeated in proportion to its
// weight.
func weightedMedian(v []weighted) float64 {
	s := append([]weighted(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i].e < s[j].e })
	var total float64
	for _, x := range s {
		total += x.w
	}
	var acc float64
	for _, x := range s {
		acc += x.w
		if acc >= total/2 {
			return x.e
		}
	}
	return s[len(s)-1].e
}

// fitLossCap caps one row's |log ratio| in FitLoss: ln 2.5 (the float64
// nearest, equal to math.Log(2.5)), so a row predicted 2.5× off either
// way counts no more than that.
const fitLossCap = 0.916290731874155065183527211768

// fitLossMedianWeight blends the median |log ratio| into FitLoss.
const fitLossMedianWeight = 0.5

// fitLossBad is the loss of a row the model cannot price at all.
const fitLossBad = 10.0

// Fit minimises FitLoss over the training cases with Nelder-Mead on the
// logarithms of the fitted parameters, starting from start.
func Fit(train []BenchCase, start perf.Params, maxEvals int) (perf.Params, float64, error) {
	if len(train) == 0 {
		return start, 0, fmt.Errorf("no training rows")
	}
	// Parameters no training row exercises stay at their start values
	// rather than drifting to a bound: without tensor-core rows (fitting
	// with T4 left out) eff_tensor and unaligned are not identified.
	free := fitted(&start)
	// eff_tensor is held (revision 4): T4's fp16 GEMMs are the only
	// tensor-core rows, and with the shared-memory tile model the fit
	// trades it against the vector-path parameters (it ran to 0.98-1.0),
	// which made whole-model tensor-core estimates (BERT on A100/A30/T4)
	// 6% too fast. It stays at revision 2's physically anchored value:
	// T4 tensor GEMMs reach 0.60 of datasheet at 0.66 of boost clock.
	// small_tile now prices tensor-core tiles only and is held alike.
	free = slices.DeleteFunc(free, func(v *float64) bool { return v == &start.EffTensor || v == &start.SmallTile })
	if !anyTensor(train, start) {
		free = slices.DeleteFunc(free, func(v *float64) bool { return v == &start.EffTensor || v == &start.Unaligned })
	}
	idx := make([]int, len(free)) // position of each free parameter in fitted()
	for i, v := range free {
		idx[i] = slices.Index(fitted(&start), v)
	}
	x0 := make([]float64, len(free))
	for i, v := range free {
		x0[i] = math.Log(*v)
	}
	decode := func(x []float64) perf.Params {
		p := start
		all := fitted(&p)
		for i, j := range idx {
			*all[j] = math.Exp(x[i])
		}
		return capFractions(p)
	}
	x, _ := nelderMead(func(x []float64) float64 { return FitLoss(train, decode(x)) }, x0, 0.3, maxEvals)
	p := decode(x)
	return p, FitLoss(train, p), nil
}

// capFractions holds the parameters that are fractions of a tile rate, of
// an aligned rate, of a peak or of a bandwidth to at most 1: a fit moves
// their logarithms freely.
func capFractions(p perf.Params) perf.Params {
	p.SmallTile = min(p.SmallTile, 1)
	p.Unaligned = min(p.Unaligned, 1)
	p.EffTensor = min(p.EffTensor, 1)
	p.MemEff = min(p.MemEff, 1)
	return p
}

// anyTensor reports whether any case is priced on a tensor-core path.
func anyTensor(cases []BenchCase, p perf.Params) bool {
	for _, c := range cases {
		if _, k := c.Predict(p); k.OnTensorCores() {
			return true
		}
	}
	return false
}

// Training and Holdout select the split.
func Training(c BenchCase) bool { return !c.Holdout }

// Holdout selects the held-back rows.
func Holdout(c BenchCase) bool { return c.Holdout }

// WriteErrorTable prints a Markdown table of error statistics.
func WriteErrorTable(w io.Writer, stats []ErrStat) {
	fmt.Fprintln(w, "| GPU | kind | n | median abs err | P90 abs err |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|")
	for _, s := range stats {
		fmt.Fprintf(w, "| %s | %s | %d | %.1f%% | %.1f%% |\n", s.GPU, s.Kind, s.N, 100*s.Median, 100*s.P90)
	}
}

// WriteParams prints the parameters as a Markdown table, in a fixed order.
func WriteParams(w io.Writer, p perf.Params) {
	fmt.Fprintln(w, "| parameter | value | meaning |")
	fmt.Fprintln(w, "|---|---:|---|")
	for _, r := range []struct {
		name string
		v    float64
		doc  string
	}{
		{"eff_vector", p.EffVector, "fraction of vector (CUDA-core) peak for large GEMMs"},
		{"eff_tensor", p.EffTensor, "fraction of tensor-core peak for large GEMMs (held by the DeepBench-only fit; the joint fit moves it)"},
		{"eff_conv", p.EffConv, "implicit-GEMM convolution rate relative to GEMM"},
		{"eff_winograd", p.EffWinograd, "Winograd batched-GEMM rate relative to GEMM"},
		{"eff_wgrad", p.EffWgrad, "convolution weight-gradient rate relative to the forward convolution (fitted on backward rows)"},
		{"k_half", p.KHalf, "K per CTA at which the main loop reaches half rate"},
		{"small_tile", p.SmallTile, "tensor-core rate kept per halving of the CTA tile below 128×128 (held by the DeepBench-only fit)"},
		{"tile_reuse", p.TileReuse, "FMAs per shared-memory word of a 128×128 vector tile"},
		{"occupancy", p.Occupancy, "exponent of the rate lost by an under-filled SM"},
		{"unaligned", p.Unaligned, "tensor-core rate kept when M, N or K is not aligned"},
		{"mem_eff", p.MemEff, "fraction of DRAM bandwidth"},
		{"l2_factor", p.L2Factor, "L2 bandwidth / DRAM bandwidth when unknown (assumed)"},
		{"full_clock_power", p.FullClockPower, "W/(SM·GHz) a GPU needs to hold boost clock under dense compute (assumed)"},
		{"rnn_step_launches", p.RNNStepLaunches, "per-step RNN latency in launch overheads at batch 16 and over (fitted on RNN rows)"},
		{"rnn_tiled_batch_half", p.RNNTiledBatchHalf, "batch at which a tiled RNN step's GEMM reaches half its path's rate (fitted on RNN rows)"},
		{"rnn_gemv_step_launches", p.RNNGemvStepLaunches, "the same at batch 1-8, whose step runs a GEMV-like kernel; linear between 8 and 16 (fitted on RNN rows)"},
		{"fill_launches", p.FillLaunches, "fixed GEMM-like kernel latency in launch overheads"},
		{"launch_s", p.LaunchS, "per-kernel overhead (s) when the GPU entry has none"},
		{"tensor_power_exp", p.TensorPowerExp, "growth of the power density tensor-core GEMMs need with tensor width per SM"},
		{"pointwise_rate", p.PointwiseRate, "counted FLOPs per SM per cycle of pointwise, reduction and data kernels"},
	} {
		fmt.Fprintf(w, "| %s | %.4g | %s |\n", r.name, r.v, r.doc)
	}
}
