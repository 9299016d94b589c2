package perf

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// floorClasses are the kernel classes FuzzKernelFloors builds.
var floorClasses = []KernelClass{ClassGEMM, ClassConv, ClassWinograd, ClassAttention, ClassRNN}

// satSize is the int64 view size a rule keeps of a float64 size (as
// cost.clampInt does): saturated at math.MaxInt64.
func satSize(f float64) int64 {
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(f)
}

// floorKernel builds a kernel of class cl over true sizes m, n, k, batch
// the way a rule does: FLOPs and bytes from the float64 sizes, the view
// from the same sizes saturated at int64. A recurrent kernel takes its
// sizes as hidden (m), batch (n), input (k) and steps (batch), through
// RNNKernel, whose counts must themselves not wrap.
func floorKernel(cl KernelClass, pr hwdb.Precision, m, n, k, batch, eb float64) Kernel {
	if cl == ClassRNN {
		return RNNKernel("LSTM", satSize(m), satSize(k), satSize(n), satSize(batch), 1, pr, eb)
	}
	bytes := batch * eb * (m*k + k*n + m*n)
	return Kernel{
		Class: cl, Precision: pr,
		FLOPs: FMAFLOPs * batch * m * n * k,
		Bytes: bytes, WorkingSet: bytes,
		M: satSize(m), N: satSize(n), K: satSize(k), Batch: satSize(batch),
		Launches: 1, ElemBytes: eb,
	}
}

// monotoneMinSide is the smallest size from which FuzzKernelFloors
// checks that doubling a size never speeds a kernel up. Smaller kernels
// switch between GEMV, skinny-tile and split-K kernels, as libraries do,
// and a doubled size may cross to a faster one: those steps (a few
// percent) are the model's choices, not wrapped sizes.
const monotoneMinSide = 1024

// FuzzKernelFloors prices kernels of random sizes, up to and past 2^63
// (where a rule's view saturates), on every GPU and precision, and checks
// the time model's own output, not a report's cleaned copy: every time is
// finite and not negative; the time is at least FLOPs over the path's
// peak and bytes over DRAM bandwidth (L2's when the working set fits
// there, the benchmark-loop rule); with residency, at least the DRAM
// bytes over DRAM bandwidth; and doubling M, N or K never makes the
// kernel faster. A wrapped int64 tile count breaks the floors, and its
// wrap-around the monotonicity.
func FuzzKernelFloors(f *testing.F) {
	for _, e := range []uint8{22, 24, 26, 28} {
		n := uint64(1) << e
		f.Add(n, n, n, uint64(1), uint8(0), uint8(0), uint8(2), uint8(0), false)
	}
	f.Add(uint64(math.MaxInt64), uint64(math.MaxInt64), uint64(math.MaxInt64), uint64(math.MaxInt64), uint8(7), uint8(3), uint8(4), uint8(3), true)
	f.Add(uint64(1)<<62, uint64(3), uint64(1)<<40, uint64(1), uint8(1), uint8(1), uint8(7), uint8(1), false)
	f.Add(uint64(1), uint64(4096), uint64(4096), uint64(1), uint8(2), uint8(4), uint8(5), uint8(0), true)
	f.Add(uint64(1)<<33, uint64(1)<<33, uint64(1), uint64(1)<<20, uint8(3), uint8(2), uint8(6), uint8(2), false)
	gpus := hwdb.All()
	o := PlanOptions()
	f.Fuzz(func(t *testing.T, m, n, k, batch uint64, gpu, class, prec, scale uint8, resident bool) {
		g := gpus[int(gpu)%len(gpus)]
		cl := floorClasses[int(class)%len(floorClasses)]
		pr := hwdb.Precisions[int(prec)%len(hwdb.Precisions)]
		// Sizes from 1 to 2^64·2^3: past int64, as dims multiplied by a
		// rule can be.
		up := math.Exp2(float64(scale % 4))
		sz := func(x uint64) float64 { return max(float64(x), 1) * up }
		fm, fn, fk, fb := sz(m), sz(n), sz(k), sz(batch)
		if cl == ClassRNN {
			// RNNKernel takes int64 sizes.
			fm, fn, fk, fb = min(fm, math.MaxInt64), min(fn, math.MaxInt64), min(fk, math.MaxInt64), min(fb, math.MaxInt64)
		}
		const eb = 2
		price := func(fm, fn, fk float64) (Kernel, KernelTime) {
			kk := floorKernel(cl, pr, fm, fn, fk, fb, eb)
			if resident {
				kk.Resident, kk.DRAMBytes = true, kk.Bytes
			}
			return kk, EstimateKernel(g, kk, o)
		}
		kk, kt := price(fm, fn, fk)
		for _, v := range []struct {
			name string
			x    float64
		}{{"total", kt.TimeS}, {"compute", kt.ComputeS}, {"latency", kt.LatencyS}, {"memory", kt.MemoryS}, {"launch", kt.LaunchS}} {
			if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
				t.Fatalf("%s %s on %s: %s time %g (M %d N %d K %d batch %d)", cl, pr, g.Name, v.name, v.x, kk.M, kk.N, kk.K, kk.Batch)
			}
		}
		const slack = 1 - 1e-9
		if peak, _ := peakFor(g, pr); peak > 0 && kk.FLOPs > 0 {
			if floor := kk.FLOPs / peak; kt.TimeS < floor*slack {
				t.Fatalf("%s %s on %s: %g s is below FLOPs/peak %g s (M %d N %d K %d batch %d)", cl, pr, g.Name, kt.TimeS, floor, kk.M, kk.N, kk.K, kk.Batch)
			}
		}
		bw := g.MemBW
		if !resident && kk.WorkingSet <= g.L2Bytes {
			bw = L2Bandwidth(g, o.Params)
		}
		if bw > 0 {
			if floor := kk.Bytes / bw; kt.TimeS < floor*slack {
				t.Fatalf("%s %s on %s: %g s is below bytes/bandwidth %g s (M %d N %d K %d batch %d)", cl, pr, g.Name, kt.TimeS, floor, kk.M, kk.N, kk.K, kk.Batch)
			}
		}
		if min(fm, fn, fk, fb) < monotoneMinSide {
			return
		}
		for i, name := range []string{"M", "N", "K"} {
			d := [3]float64{fm, fn, fk}
			d[i] *= 2
			if cl == ClassRNN {
				d[i] = min(d[i], math.MaxInt64)
			}
			k2, t2 := price(d[0], d[1], d[2])
			// A doubled size may become a multiple of the tensor-core
			// granule and run at the aligned rate: that step is the
			// model's, not a wrap. On Hopper it is the whole fallback
			// (misaligned.go): a row padded to 16 bytes runs far faster
			// although larger, as GPT-2's LM head padded from 50,257 to
			// 50,304 tokens does.
			if misalignedGEMMS(g, kk, o.Params, nil) > 0 && misalignedGEMMS(g, k2, o.Params, nil) == 0 {
				continue
			}
			if t2.TimeS < kt.TimeS*slack*o.Params.Unaligned {
				t.Fatalf("%s %s on %s: doubling %s (M %d N %d K %d batch %d -> M %d N %d K %d) cut the time from %g to %g s",
					cl, pr, g.Name, name, kk.M, kk.N, kk.K, kk.Batch, k2.M, k2.N, k2.K, kt.TimeS, t2.TimeS)
			}
		}
	})
}

// TestCubeMatMulT4 prices an n×n×n fp32 MatMul on a T4 at n = 2^22 to
// 2^28: the time must grow with n and stay at least 2n³ over the peak
// (int64 tile products once wrapped: 2^26 cost less than 2^22).
func TestCubeMatMulT4(t *testing.T) {
	g, err := hwdb.Lookup("T4")
	if err != nil {
		t.Fatal(err)
	}
	peak, _ := peakFor(g, hwdb.FP32)
	prev := 0.0
	for _, e := range []int{22, 24, 26, 28} {
		n := int64(1) << e
		k := GEMMKernel(n, n, n, 1, hwdb.FP32, 4, 4)
		got := EstimateKernel(g, k, PlanOptions()).TimeS
		floor := 2 * math.Pow(float64(n), 3) / peak
		if got < floor || got <= prev {
			t.Errorf("n = 2^%d: %g s, want at least 2n³/peak = %g s and more than n/4's %g s", e, got, floor, prev)
		}
		prev = got
	}
}

// TestSizeArithmetic pins the saturating helpers at the int64 edge.
func TestSizeArithmetic(t *testing.T) {
	if got, ok := mulSat(1<<32, 1<<30); !ok || got != 1<<62 {
		t.Errorf("2^32·2^30 = %d, %v; want 2^62, exact", got, ok)
	}
	if _, ok := mulSat(1<<32, 1<<32); ok {
		t.Error("2^32·2^32 should saturate")
	}
	if got, _ := mulSat(math.MaxInt64, 2); got != math.MaxInt64 {
		t.Errorf("MaxInt64·2 = %d, want saturated", got)
	}
	if got := ceilDiv(math.MaxInt64, 128); got != math.MaxInt64/128+1 {
		t.Errorf("ceilDiv(MaxInt64, 128) = %d", got)
	}
	if got := sizeProd(1<<40, 1<<40, 1<<40); got != math.Exp2(120) {
		t.Errorf("sizeProd past int64 = %g, want 2^120", got)
	}
	if got := satProd(1<<40, 1<<40); got != math.MaxInt64 {
		t.Errorf("satProd past int64 = %d", got)
	}
	if got := addSat(math.MaxInt64, 1); got != math.MaxInt64 {
		t.Errorf("addSat past int64 = %d", got)
	}
	if got := WinogradTiles(1<<40, 1<<40, 1<<40, 4); got != math.MaxInt64 {
		t.Errorf("WinogradTiles past int64 = %d", got)
	}
}
