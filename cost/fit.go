package cost

import (
	"fmt"
	"math"
	"strconv"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// Memory fit. A report says whether its peak memory (weights plus the
// peak of live activations, graph inputs such as a past key/value cache
// included, see memory.go) fits in the GPU's usable memory, and when it
// does not, by how much and what would make it fit. Usable is what CUDA
// reports as the board's total (hwdb cuda_mem_gib: the nominal size less
// the driver's reserve and, on ECC GDDR boards, the ECC share) less the
// runtime's floor (its CUDA context and library workspaces): a peak
// between that and the nominal size does not run, and judging by the
// nominal size put sweep --find-max-batch one step too high. A training
// report's peak is already the nvidia-smi view, floor included, so it is
// held to CUDA's total alone.

// dtypeBytes is the element size of a report dtype name; 0 when unknown.
var dtypeBytes = map[string]float64{"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}

// lowerPrecisions lists, per dtype, the smaller dtypes worth suggesting
// with the GPU precision that must exist for each.
var lowerPrecisions = []struct {
	name string
	need []hwdb.Precision
}{
	{"fp16", []hwdb.Precision{hwdb.FP16Tensor, hwdb.FP16}},
	{"bf16", []hwdb.Precision{hwdb.BF16Tensor, hwdb.BF16}},
	{"fp8", []hwdb.Precision{hwdb.FP8Tensor}},
	{"int8", []hwdb.Precision{hwdb.INT8Tensor, hwdb.INT8}},
}

// applyFit fills the fit fields of the totals. batch is the leading dim
// of the first graph input (0 when unknown), used for the smaller-batch
// advice.
func applyFit(r *report.Report, gpu *hwdb.GPU, batch int64) {
	t := &r.Totals
	t.FitAdvice = []string{}
	floor := 0.0
	if r.Runtime != nil && t.Train == nil {
		floor = r.Runtime.MemoryFloorBytes
	}
	mem := gpu.UsableMem(floor)
	if gpu.MemBytes <= 0 {
		mem = 0 // size unknown: no verdict
	}
	t.MemoryLimitBytes = mem
	// Under tensor parallelism one GPU holds its share (parallel.go).
	peak := t.PeakMemoryBytes
	if t.GPUs > 1 {
		peak = t.PerGPUPeakMemoryBytes
	}
	t.Fits = gpu.MemBytes <= 0 || peak <= mem
	if t.Fits {
		return
	}
	// More GPUs: a tensor-parallel split divides weights and activations
	// (ignoring the replicated pieces and communication buffers).
	if t.GPUs > 1 {
		if m, ok := moreGPUs(t, mem); ok {
			t.FitAdvice = append(t.FitAdvice, fmt.Sprintf("--gpus %d or more (the split weights divided further; replicated weights and activations stay whole)", m))
		}
	} else {
		n := math.Ceil(t.PeakMemoryBytes / mem)
		t.FitAdvice = append(t.FitAdvice, fmt.Sprintf("split over at least %.0f GPUs of this kind (weights and activations divided)", n))
	}
	// A smaller batch: activations scale with it, weights do not.
	if batch > 1 && t.PeakActivationBytes > 0 {
		// (When the weights alone exceed the memory no batch helps, and
		// the verdict's weight figure says so.)
		if b := int64(math.Floor(float64(batch) * (mem - t.ParamBytes) / t.PeakActivationBytes)); t.ParamBytes < mem && b >= 1 && b < batch {
			t.FitAdvice = append(t.FitAdvice, "batch "+strconv.FormatInt(b, 10)+" or less (activations scale with batch; now "+strconv.FormatInt(batch, 10)+")")
		}
	}
	// A lower precision: every floating tensor shrinks with the element.
	if e := dtypeBytes[r.DType]; e > 0 {
		for _, lp := range lowerPrecisions {
			e2 := dtypeBytes[lp.name]
			if e2 >= e || !hasAny(gpu, lp.need) {
				continue
			}
			if peak := t.PeakMemoryBytes * e2 / e; peak <= mem {
				t.FitAdvice = append(t.FitAdvice, fmt.Sprintf("--dtype %s (peak about %.3g GB)", lp.name, peak/1e9))
				break
			}
		}
	}
}

// moreGPUs is the least tensor-parallel degree whose per-GPU peak fits
// mem, from a report at t.GPUs: the split weights S satisfy
// whole − perGPU = S·(1 − 1/n), and the rest R = perGPU − S/n stays on
// every GPU. ok is false when R alone exceeds mem.
func moreGPUs(t *report.Totals, mem float64) (int, bool) {
	n := float64(t.GPUs)
	split := (t.PeakMemoryBytes - t.PerGPUPeakMemoryBytes) * n / (n - 1)
	rest := t.PerGPUPeakMemoryBytes - split/n
	if split <= 0 || rest >= mem {
		return 0, false
	}
	m := math.Ceil(split / (mem - rest))
	if m <= n || m > 1<<20 {
		return 0, false
	}
	return int(m), true
}

func hasAny(g *hwdb.GPU, ps []hwdb.Precision) bool {
	for _, p := range ps {
		if g.PeakFor(p) > 0 {
			return true
		}
	}
	return false
}

// leadingBatch is the leading dim of the first ranked graph input, the
// batch of most exported models (0 when unknown or rank 0).
func leadingBatch(g *ir.Graph) int64 {
	for _, in := range g.Inputs {
		if in == nil || !in.Shape.Ranked || len(in.Shape.Dims) == 0 {
			continue
		}
		if d := in.Shape.Dims[0]; d.IsKnown() {
			return d.Value
		}
		return 0
	}
	return 0
}
