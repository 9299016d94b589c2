package cost

import "github.com/onnxcost/onnxcost/hwdb"

// KernelClass groups kernels whose achievable efficiency behaves alike.
type KernelClass string

const (
	ClassGEMM        KernelClass = "gemm"        // Gemm, MatMul, fused GEMM
	ClassConv        KernelClass = "conv"        // direct/implicit-GEMM convolution
	ClassWinograd    KernelClass = "winograd"    // Winograd convolution
	ClassRNN         KernelClass = "rnn"         // LSTM/GRU/RNN (per-step GEMMs + gates)
	ClassAttention   KernelClass = "attention"   // fused attention
	ClassElementwise KernelClass = "elementwise" // pointwise and broadcast
	ClassReduction   KernelClass = "reduction"   // reductions, softmax, norms, pooling
	ClassData        KernelClass = "data"        // copies, gathers, concat, transpose
)

// Kernel is what the time model needs to know about one kernel launch
// (or a group of identical launches).
type Kernel struct {
	Class KernelClass
	FLOPs float64
	Bytes float64 // bytes read + written at the kernel boundary
	// Precision is the compute path (tensor cores or vector units); the
	// rules pick it from the dtype and whether the op can use tensor cores.
	Precision hwdb.Precision
	// GEMM view for efficiency modelling (conv as implicit GEMM:
	// M = N·P·Q, N = K, K = C/group·R·S), with Batch independent GEMMs.
	// Zero when not a GEMM-like kernel.
	M, N, K, Batch int64
	// Steps is the number of dependent sequential steps (RNN time steps ×
	// layers); each step pays its own launch/sync latency.
	Steps int64
	// WorkingSet is the bytes that must stay resident for the kernel; when
	// it fits in L2 the L2 bandwidth bounds memory time.
	WorkingSet float64
	// Launches is the number of kernel launches (usually 1).
	Launches float64
}

// KernelTime is the time model's estimate for a Kernel.
type KernelTime struct {
	ComputeS float64 // FLOPs / attainable compute rate
	MemoryS  float64 // bytes / attainable bandwidth
	LaunchS  float64 // launch overhead, all launches
	TimeS    float64 // max(ComputeS, MemoryS) + LaunchS
	Bound    string  // "compute", "memory" or "launch"
	// AttainableFLOPS is the compute rate used (peak × efficiency).
	AttainableFLOPS float64
	// Bandwidth is the bandwidth used (HBM or L2).
	Bandwidth float64
	Level     string // "hbm" or "l2"
}
