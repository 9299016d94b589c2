package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// lmHead is GPT-2's LM head over m tokens as a GEMM kernel of vocabulary
// n in precision pr.
func lmHead(m, n int64, pr hwdb.Precision, class KernelClass) Kernel {
	return Kernel{Class: class, Precision: pr, M: m, N: n, K: 256, Batch: 1,
		FLOPs: FMAFLOPs * float64(m*n*256), Bytes: 2 * float64(m*256+256*n+m*n), Launches: 1}
}

// On Hopper a GEMM whose rows are not 16-byte aligned runs at the
// fallback kernels' rate per SM cycle (the H200 traces: 634 µs for the
// fp16 head at batch 32); padded to 50,304 it is the tiled kernel again,
// several times faster. Before Hopper, for convolutions and for GEMV-like
// kernels nothing changes.
func TestMisalignedGEMMOnHopper(t *testing.T) {
	o := PlanOptions()
	h200, err := hwdb.Lookup("H200-SXM-141GB")
	if err != nil {
		t.Fatal(err)
	}
	a100, err := hwdb.Lookup("A100-SXM4-80GB")
	if err != nil {
		t.Fatal(err)
	}
	odd := EstimateKernel(h200, lmHead(2048, 50257, hwdb.FP16Tensor, ClassGEMM), o)
	padded := EstimateKernel(h200, lmHead(2048, 50304, hwdb.FP16Tensor, ClassGEMM), o)
	if odd.ComputeS < 550e-6 || odd.ComputeS > 700e-6 {
		t.Errorf("fp16 head over 50,257 on the H200: main loop %.0f µs, want the fallback rate's ~640 µs (634 µs measured)", odd.ComputeS*1e6)
	}
	if odd.TimeS < 4*padded.TimeS {
		t.Errorf("misaligned %.0f µs against padded %.0f µs: want the fallback several times slower", odd.TimeS*1e6, padded.TimeS*1e6)
	}
	if tf := EstimateKernel(h200, lmHead(2048, 50257, hwdb.TF32Tensor, ClassGEMM), o); tf.ComputeS < 450e-6 || tf.ComputeS > 650e-6 {
		t.Errorf("TF32 head: %.0f µs, want ~560 µs (550 µs measured)", tf.ComputeS*1e6)
	}
	for name, k := range map[string]Kernel{
		"a GEMV-like head (8 tokens)": lmHead(8, 50257, hwdb.FP16Tensor, ClassGEMM),
		"a convolution":               lmHead(2048, 50257, hwdb.FP16Tensor, ClassConv),
		"fp32 on the CUDA cores":      lmHead(2048, 50257, hwdb.FP32, ClassGEMM),
	} {
		if s := misalignedGEMMS(h200, k, o.Params, nil); s != 0 {
			t.Errorf("%s: fallback floor %g s, want none", name, s)
		}
	}
	if s := misalignedGEMMS(a100, lmHead(2048, 50257, hwdb.FP16Tensor, ClassGEMM), o.Params, nil); s != 0 {
		t.Errorf("A100: fallback floor %g s, want none (its aligned kernels are mma.sync kernels too)", s)
	}
	if trt, err := hwdb.LookupRuntime("tensorrt"); err != nil || misalignedGEMMS(h200, lmHead(2048, 50257, hwdb.FP16Tensor, ClassGEMM), o.Params, trt) != 0 {
		t.Errorf("TensorRT (%v): a fallback floor, want none (it times its own tactics)", err)
	}
	// A weight gradient's K is batch × sequence: a misaligned K (batch 4)
	// is no slower than the next aligned one (batch 8).
	wgrad := func(k int64) float64 {
		// Its operands in L2 (Resident, no DRAM bytes), as LSTM-PTB's
		// step leaves them: the fallback's rate alone would bound it.
		return EstimateKernel(h200, Kernel{Class: ClassGEMM, Precision: hwdb.FP16Tensor, M: 4096, N: 1024, K: k, Batch: 1,
			FLOPs: FMAFLOPs * float64(4096*1024*k), Bytes: 2 * float64(4096*k+k*1024+4096*1024), Resident: true, Launches: 1}, o).TimeS
	}
	if wgrad(4) > wgrad(8) {
		t.Errorf("K = 4: %g s, above K = 8's %g s", wgrad(4), wgrad(8))
	}
	// More tokens never take less time across the GEMV boundary.
	prev := 0.0
	for m := int64(1); m <= 64; m++ {
		tm := EstimateKernel(h200, lmHead(m, 50257, hwdb.FP16Tensor, ClassGEMM), o).TimeS
		if tm < prev {
			t.Fatalf("%d tokens: %g s, below %g s for %d", m, tm, prev, m-1)
		}
		prev = tm
	}
}

// TestMisalignedGEMMDrawsLess: the alignment-1 fallback does the aligned
// kernel's tensor work over several times its time, so it draws less
// power than the aligned kernel (fallbackIssuePower) but, running far
// longer, more energy; and no more than a fallback drawing dense power
// throughout would.
func TestMisalignedGEMMDrawsLess(t *testing.T) {
	o := PlanOptions()
	h200, err := hwdb.Lookup("H200-SXM-141GB")
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range []hwdb.Precision{hwdb.FP16Tensor, hwdb.TF32Tensor} {
		odd := UnderControl(h200, lmHead(2048, 50257, pr, ClassGEMM), o, PowerControl{})
		padded := UnderControl(h200, lmHead(2048, 50304, pr, ClassGEMM), o, PowerControl{})
		if !odd.AlignmentFallback || padded.AlignmentFallback {
			t.Fatalf("%v: fallback %v over 50,257, %v over 50,304", pr, odd.AlignmentFallback, padded.AlignmentFallback)
		}
		idle := IdleW(h200)
		if !(odd.PowerW > idle && odd.PowerW-idle < 0.7*(padded.PowerW-idle)) {
			t.Errorf("%v: fallback %.0f W, padded %.0f W, idle %.0f W: want the fallback well below the aligned kernel's draw", pr, odd.PowerW, padded.PowerW, idle)
		}
		if !(odd.EnergyJ() > padded.EnergyJ()) {
			t.Errorf("%v: fallback %.3f J, padded %.3f J: want the slower kernel to cost more energy", pr, odd.EnergyJ(), padded.EnergyJ())
		}
	}
}
