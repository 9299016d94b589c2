package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
)

// Kernel is the kernel the time model prices for the estimate: its counts
// and views at precision prec, operands of elemBytes each, dramBytes of
// its traffic from DRAM (the rest resident in L2; all of it for a kernel
// run on its own), and vectorized for an op whose library kernel issues
// vector loads (VectorizedOp). Analyze and the kernel benchmarks
// (internal/kernelrows) both build their kernels here, so a view a rule
// adds reaches both.
func (e *NodeEstimate) Kernel(prec hwdb.Precision, elemBytes, dramBytes float64, vectorized bool) perf.Kernel {
	k := perf.Kernel{
		Class: e.Class, FLOPs: e.ExecutedFLOPs, Bytes: e.Bytes(),
		Precision: prec, M: e.M, N: e.N, K: e.K, Batch: e.Batch,
		Steps: e.Steps, WorkingSet: e.Bytes(), Launches: e.Launches,
		InputK: e.InputK, ElemBytes: elemBytes,
		Rows: e.Rows, RowLen: e.RowLen, RowPasses: e.RowPasses, RowShared: e.RowShared,
		WinogradFused: e.WinogradFused, DequantFLOPs: e.DequantFLOPs,
		Indexed:  e.Indexed,
		Decode:   e.Decode,
		Resident: true, DRAMBytes: dramBytes,
		Vectorized: vectorized, ConvChannels: e.ConvChannels,
	}
	if b := e.Bytes(); b > 0 {
		k.WriteShare = e.BytesWritten / b
	}
	if e.Class == perf.ClassRNN {
		// The time model prices per-step latency itself (RNNStepLaunches).
		k.Launches = 1
	}
	return k
}
