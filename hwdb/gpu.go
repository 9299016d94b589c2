package hwdb

import "strings"

// Precision names a compute path: a dtype and whether it runs on tensor
// cores (matrix units). Peaks are dense (never the 2:4-sparse figure).
type Precision string

const (
	FP64       Precision = "fp64"        // vector FP64
	FP64Tensor Precision = "fp64_tensor" // FP64 on tensor cores (A100+)
	FP32       Precision = "fp32"        // vector FP32 (CUDA cores)
	FP16       Precision = "fp16"        // vector FP16 (non-tensor)
	BF16       Precision = "bf16"        // vector BF16 (non-tensor)
	TF32Tensor Precision = "tf32_tensor"
	FP16Tensor Precision = "fp16_tensor" // FP16 inputs, FP32 accumulate where the vendor quotes both
	BF16Tensor Precision = "bf16_tensor"
	FP8Tensor  Precision = "fp8_tensor"
	INT8Tensor Precision = "int8_tensor"
	INT8       Precision = "int8" // vector INT8 (dp4a) where there are no tensor cores
)

// GPU is one accelerator's figures. Rates are per second in base units
// (FLOP/s, bytes/s); sizes in bytes; power in watts; times in seconds.
type GPU struct {
	Name    string   `json:"name"`              // canonical id, e.g. "A100-SXM4-80GB"
	Aliases []string `json:"aliases,omitempty"` // other accepted names, e.g. "a100"
	Vendor  string   `json:"vendor"`
	Arch    string   `json:"arch"`
	Year    int      `json:"year,omitempty"`

	SMs           int     `json:"sms"` // SMs (NVIDIA) or CUs (AMD)
	BaseClockMHz  float64 `json:"base_clock_mhz,omitempty"`
	BoostClockMHz float64 `json:"boost_clock_mhz"`
	// SustainedClockMHz is the SM clock measured under sustained dense
	// compute at the default power limit, where it is known to fall below
	// the boost clock (power-capped parts); 0 = not measured. The time
	// model then scales compute peaks by SustainedClockMHz/BoostClockMHz
	// instead of estimating the clock from TDP and SM count.
	SustainedClockMHz float64 `json:"sustained_clock_mhz,omitempty"`
	// ClockPowerW is the board power per SM per GHz of boost clock,
	// W/(SM·GHz), that dense compute needs to hold the boost clock on this
	// board, where its process differs from the parts the time model's
	// default (perf Params.FullClockPower) was set on (12 nm Turing, 8 nm
	// GA102); 0 = that default. It sets the clock a power-limited board
	// sustains and the dynamic power the power-cap model charges.
	ClockPowerW float64 `json:"clock_power_w,omitempty"`
	// StreamEff is the fraction of MemBW a plain stream from DRAM (a
	// contiguous elementwise kernel: read, combine, write) sustains on this
	// board, where measured for its memory system; 0 = the time model's
	// fitted MemEff. HBM's bandwidth is not lost to refresh and bus
	// turnarounds the way the GDDR boards that dominate the fit lose it.
	StreamEff float64 `json:"stream_eff,omitempty"`
	// VectorGEMMScale is the time a matrix product's main loop takes on
	// this board's CUDA cores (FP32 arithmetic) over the time the model
	// gives it, where measured (above 1: slower); 0 = 1. What sets it is
	// the clock the board holds under a dense FP32 load (a power limit the
	// datasheet does not state, GPU Boost above the rated clock) and its
	// library's SIMT kernels, neither derivable from the entry's figures.
	// Tensor-core products and recurrent steps keep the model's rate;
	// forward convolutions take VectorConvScale.
	VectorGEMMScale float64 `json:"vector_gemm_scale,omitempty"`
	// VectorConvScale is VectorGEMMScale for a forward convolution's main
	// loop on the CUDA cores (FP32 arithmetic: implicit GEMM, Winograd),
	// where measured; 0 = 1. It is the board's own figure, not its
	// products': the convolution library's kernels and their clock share
	// differ from the BLAS's (DeepBench: the GTX 1080 Ti's products run at
	// 0.89 of the model's time and its convolutions at 0.80, the P100's at
	// 0.86 and 1.02). Gradient convolutions keep the model's rate.
	VectorConvScale float64 `json:"vector_conv_scale,omitempty"`
	// StreamRWEff is the share of StreamEff that a stream writing as many
	// bytes as it reads keeps (a copy, an in-place activation; StreamEff
	// is measured on a triad, two reads a write), where it was measured
	// to differ: the DRAM bus turns between reads and writes more often.
	// 0 = 1.
	StreamRWEff float64 `json:"stream_rw_eff,omitempty"`
	// MemPJPerByte is the energy, in pJ per byte, of moving data between
	// DRAM and the SMs (the DRAM core, its PHY, L2 and the on-chip path),
	// which sets what a memory-bound kernel draws: bytes per second times
	// this; 0 = a fixed share of TDP above idle (perf's memoryActivity).
	MemPJPerByte float64 `json:"mem_pj_per_byte,omitempty"`

	// Peak is the dense peak rate per precision; a missing key means the
	// GPU has no such path (e.g. no fp8 before Hopper/Ada).
	Peak map[Precision]float64 `json:"peak_flops"`

	MemBytes float64 `json:"mem_bytes"`
	MemBW    float64 `json:"mem_bw"` // HBM/GDDR bytes/s
	L2Bytes  float64 `json:"l2_bytes"`
	L2BW     float64 `json:"l2_bw,omitempty"` // bytes/s; 0 = unknown (a multiple of MemBW is assumed)
	// L2Partitions is the number of L2 partitions that each cache data
	// for the SMs connected to them (GA100, GH100: two), so that a line
	// read by SMs on both sides is held in both; 0 or 1 = one shared L2.
	L2Partitions int     `json:"l2_partitions,omitempty"`
	TDPWatts     float64 `json:"tdp_w"`
	IdleWatts    float64 `json:"idle_w,omitempty"`
	LaunchS      float64 `json:"launch_s"` // per-kernel launch overhead

	// CUDAMemBytes is the device memory CUDA reports as the board's total
	// (cudaMemGetInfo's total: deviceQuery's "Total amount of global
	// memory", torch's total_memory and its out-of-memory message's "total
	// capacity"), below MemBytes by what the driver reserves and, on GDDR
	// boards that ship with ECC on, the ECC share (about 1/16). Nothing a
	// process allocates can use the difference. nvidia-smi's memory.total
	// is not this figure: recent drivers count the reserved part in it (an
	// A100 80GB shows 81920 MiB there and about 81050 MiB to CUDA; sources
	// in gpus.yaml). 0 = not known (a user entry): CUDAMem falls back to
	// MemBytes.
	CUDAMemBytes float64 `json:"cuda_mem_bytes,omitempty"`

	// Power and clock controls, as `nvidia-smi -q` reports them: the range
	// a power cap (`nvidia-smi -pl`) may be set in, and the clocks an SM
	// clock lock may use. TDPWatts is the default power limit. 0 = not
	// known; a caller sweeping caps must then fall back to its own range.
	MinPowerW     float64 `json:"min_power_w,omitempty"`      // "Min Power Limit"
	MaxPowerW     float64 `json:"max_power_w,omitempty"`      // "Max Power Limit" (≥ TDP; above it on boards that allow raising the cap)
	MinSMClockMHz float64 `json:"min_sm_clock_mhz,omitempty"` // lowest supported SM clock
	MemClockMHz   float64 `json:"mem_clock_mhz,omitempty"`    // "Max Clocks: Memory", in the driver's own unit (not the data rate)

	// Interconnect for multi-GPU cost. Bandwidths are bytes/s in ONE
	// direction for one GPU: NVLinkBW is the sum over all of its links
	// (A100 SXM: 12 links x 25 GB/s = 300e9, quoted by NVIDIA as "600 GB/s"
	// bidirectional); PCIeBW is the x16 host link. Vendors usually quote
	// both directions added; the loader rejects a figure above what the
	// stated generation can carry one way, which catches that slip.
	NVLinkGen int     `json:"nvlink_gen,omitempty"`
	NVLinkBW  float64 `json:"nvlink_bw,omitempty"`
	// NVLinkDomain is the most GPUs of this kind one NVLink fabric joins:
	// 2 for a bridged pair of PCIe cards, 8 for an HGX/DGX baseboard.
	NVLinkDomain int     `json:"nvlink_domain,omitempty"`
	PCIeGen      int     `json:"pcie_gen,omitempty"`
	PCIeBW       float64 `json:"pcie_bw,omitempty"`

	// Sources maps a figure's JSON name ("mem_bw", "peak_flops.fp16_tensor")
	// to where it comes from (document title, table, URL).
	Sources map[string]string `json:"sources"`
	// Notes records caveats (e.g. "boost clock varies by SKU").
	Notes []string `json:"notes,omitempty"`
}

// CUDAMem returns the memory CUDA reports as the board's total
// (CUDAMemBytes), or the nominal size when that is not known.
func (g *GPU) CUDAMem() float64 {
	if g.CUDAMemBytes > 0 {
		return g.CUDAMemBytes
	}
	return g.MemBytes
}

// UsableMem returns what one process's tensors can occupy: the memory CUDA
// reports less floor, the device memory a runtime holds before any tensor
// (its CUDA context and library workspaces, Runtime.MemoryFloor). A model
// whose peak lies between this and the nominal size does not run.
func (g *GPU) UsableMem(floor float64) float64 { return max(g.CUDAMem()-floor, 0) }

// L2ReuseBytes is how much of the L2 can hold data one kernel writes for
// the next to read: all of it on a GPU with one shared L2; on one whose
// partitions each cache data for their own SMs (L2Partitions), a tensor
// written and read by all SMs is held once per partition, so the L2 keeps
// one partition's worth of it.
func (g *GPU) L2ReuseBytes() float64 {
	if g.L2Partitions > 1 {
		return g.L2Bytes / float64(g.L2Partitions)
	}
	return g.L2Bytes
}

// WithoutVectorGEMMScale is g as the time model priced it before its
// CUDA-core products were measured: a copy with VectorGEMMScale unset
// (what the scale is fitted against).
func (g *GPU) WithoutVectorGEMMScale() *GPU {
	c := *g
	c.VectorGEMMScale = 0
	return &c
}

// WithoutVectorConvScale is WithoutVectorGEMMScale for VectorConvScale.
func (g *GPU) WithoutVectorConvScale() *GPU {
	c := *g
	c.VectorConvScale = 0
	return &c
}

// HasVectorScales reports whether g carries a measured CUDA-core rate of
// its own (VectorGEMMScale or VectorConvScale).
func (g *GPU) HasVectorScales() bool { return g.VectorGEMMScale > 0 || g.VectorConvScale > 0 }

// WithoutVectorScales is g with neither measured CUDA-core rate: what a
// board of its family with no scales of its own is priced like.
func (g *GPU) WithoutVectorScales() *GPU {
	c := *g
	c.VectorGEMMScale, c.VectorConvScale = 0, 0
	return &c
}

// PeakFor returns the peak for p, or 0 when the GPU lacks that path.
func (g *GPU) PeakFor(p Precision) float64 { return g.Peak[p] }

// Family is the architecture family: Arch without the die in
// parentheses ("Ampere (GA100)" → "Ampere"); "" for a nil GPU.
func (g *GPU) Family() string {
	if g == nil {
		return ""
	}
	a, _, _ := strings.Cut(g.Arch, "(")
	return strings.TrimSpace(a)
}

// PeerBW returns the bytes/s one GPU can send in one direction to its
// peers when n GPUs of this kind work together: the NVLink figure while
// n fits in one NVLink domain, else the PCIe host link, which peer
// traffic between PCIe cards, beyond a bridged pair, or out of the node
// (through a NIC behind it, so at best this) crosses. 0 when n < 2 or
// the figure is unknown.
func (g *GPU) PeerBW(n int) float64 {
	switch {
	case n < 2:
		return 0
	case g.NVLinkBW > 0 && n <= g.NVLinkDomain:
		return g.NVLinkBW
	default:
		return g.PCIeBW
	}
}
