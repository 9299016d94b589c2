package perf

import (
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/measured"
)

// attnGEMV is one decode step's q·kᵀ (scores) or p·v (values) over keys
// cached keys for b sequences of 32 heads of 128, fp16, as the cost rules
// view the MatMul: M = 1, b·32 matrices.
func attnGEMV(b, keys int64, scores bool) Kernel {
	n, k := keys, int64(128)
	if !scores {
		n, k = 128, keys
	}
	batch := b * 32
	return Kernel{Class: ClassGEMM, Precision: hwdb.FP16Tensor, M: 1, N: n, K: k, Batch: batch,
		FLOPs: FMAFLOPs * float64(n*k*batch), Bytes: 2 * float64(batch*(n*k+n+k)), Launches: 1}
}

// The batched GEMVs of a decode step's attention run at gemvx's
// in-flight-limited rate (the H200 profile: 43 and 26 µs at batch 8),
// below the stream rate the model gives other kernels, and only under
// runtimes that hand them to cuBLAS; a single GEMV and a GEMM are
// unchanged.
func TestBatchedGEMVOverTheCache(t *testing.T) {
	o := PlanOptions()
	h200, err := hwdb.Lookup("H200-SXM-141GB")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		scores   bool
		lo, hi   float64
		measured string
	}{{true, 38e-6, 48e-6, "43 µs"}, {false, 23e-6, 30e-6, "26 µs"}} {
		kt := EstimateKernel(h200, attnGEMV(8, 1025, c.scores), o)
		if body := kt.TimeS - kt.LaunchS; body < c.lo || body > c.hi {
			t.Errorf("scores=%v at batch 8: %.1f µs, want the profile's %s", c.scores, body*1e6, c.measured)
		}
	}
	trt, err := hwdb.LookupRuntime("tensorrt")
	if err != nil {
		t.Fatal(err)
	}
	k := attnGEMV(8, 1025, true)
	if f := batchedGEMVStretch(h200, k, o.Params, trt); f != 1 {
		t.Errorf("TensorRT: stretch %g, want 1 (its own kernels)", f)
	}
	for name, kk := range map[string]Kernel{"one GEMV": {Class: ClassGEMM, M: 1, N: 4096, K: 4096, Batch: 1},
		"a GEMM of two rows": {Class: ClassGEMM, M: 2, N: 1025, K: 128, Batch: 256}} {
		if f := batchedGEMVStretch(h200, kk, o.Params, nil); f != 1 {
			t.Errorf("%s: stretch %g, want 1", name, f)
		}
	}
	// More sequences never take less time.
	prev := 0.0
	for b := int64(1); b <= 64; b++ {
		tb := EstimateKernel(h200, attnGEMV(b, 1025, true), o).TimeS
		if tb < prev {
			t.Fatalf("batch %d: %g s, below batch %d's %g s", b, tb, b-1, prev)
		}
		prev = tb
	}
}

// TestGEMVxRatesAreTheProfiles: the two rates are the H200 profile's
// (testdata/measured/h200_sxm_llama7b_decode_b8_kernels.csv.gz): the
// median of each layer's first gemvx kernel (q·kᵀ) and second (p·v),
// over 67 MB of cache each, as bytes per SM cycle of the H200.
func TestGEMVxRatesAreTheProfiles(t *testing.T) {
	recs, err := measured.Read(filepath.Join("..", "..", "testdata", "measured", "h200_sxm_llama7b_decode_b8_kernels.csv.gz"), "spec,i,kernel,us")
	if err != nil {
		t.Fatal(err)
	}
	var us [2][]float64
	for _, rec := range recs {
		if !strings.Contains(rec[2], "gemvx::kernel") {
			continue
		}
		v, err := strconv.ParseFloat(rec[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		i := (len(us[0]) + len(us[1])) % 2
		us[i] = append(us[i], v)
	}
	h200, err := hwdb.Lookup("H200-SXM-141GB")
	if err != nil {
		t.Fatal(err)
	}
	cacheBytes := 2.0 * 8 * 32 * 1025 * 128 // one layer's keys (or values), fp16, batch 8
	perCycle := float64(h200.SMs) * h200.BoostClockMHz * 1e6
	// The stream is what the kernel's duration holds beyond its fill and
	// ramp, which run in series with it (BodyS); the profile is of an
	// eager call, whose kernels pay a stream launch's ramp.
	p := PlanOptions().Params
	inSeries := fillS(launchOverhead(h200, p), p, InPlan) + KernelRamp(h200, testRT(t, "pytorch"), p)
	for i, want := range []float64{gemvxShortDotBytesPerSMCycle, gemvxLongDotBytesPerSMCycle} {
		if len(us[i]) != 32 {
			t.Fatalf("%d gemvx kernels of kind %d, want one per layer (32)", len(us[i]), i)
		}
		slices.Sort(us[i])
		got := cacheBytes / (us[i][16]*1e-6 - inSeries) / perCycle
		if math.Abs(got/want-1) > 0.02 {
			t.Errorf("kind %d: the profile streams %.2f bytes per SM cycle, the constant says %.2f", i, got, want)
		}
	}
}

func testRT(t *testing.T, name string) *hwdb.Runtime {
	r, err := hwdb.LookupRuntime(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
