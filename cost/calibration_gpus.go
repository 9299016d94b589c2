package cost

import (
	"fmt"

	"github.com/onnxcost/onnxcost/hwdb"
)

// deepBenchFallbackGPUs are datasheet figures for the DeepBench GPUs, used
// by the calibration only when hwdb does not (yet) know a GPU. Boost-clock
// peaks from the vendors' launch specifications (NVIDIA/AMD product pages
// as summarised in /work/shared/research/gpu-specs.md §1 where covered;
// the rest from the vendors' datasheets as commonly quoted). LaunchS is
// left 0 so the model's fitted launch overhead applies.
var deepBenchFallbackGPUs = []hwdb.GPU{
	{Name: "P100", Vendor: "NVIDIA", Arch: "Pascal", SMs: 56, BoostClockMHz: 1303,
		Peak:  map[hwdb.Precision]float64{hwdb.FP32: 9.3e12, hwdb.FP16: 18.7e12, hwdb.FP64: 4.7e12},
		MemBW: 732e9, L2Bytes: 4 << 20, TDPWatts: 250},
	{Name: "T4", Vendor: "NVIDIA", Arch: "Turing", SMs: 40, BoostClockMHz: 1590,
		Peak:  map[hwdb.Precision]float64{hwdb.FP32: 8.1e12, hwdb.FP16Tensor: 65e12, hwdb.INT8Tensor: 130e12},
		MemBW: 320e9, L2Bytes: 4 << 20, TDPWatts: 70},
	{Name: "GTX-1080-Ti", Vendor: "NVIDIA", Arch: "Pascal", SMs: 28, BoostClockMHz: 1582,
		Peak:  map[hwdb.Precision]float64{hwdb.FP32: 11.34e12, hwdb.INT8: 45.4e12},
		MemBW: 484e9, L2Bytes: 2816 << 10, TDPWatts: 250},
	{Name: "Titan-X-Pascal", Vendor: "NVIDIA", Arch: "Pascal", SMs: 28, BoostClockMHz: 1531,
		Peak:  map[hwdb.Precision]float64{hwdb.FP32: 10.97e12, hwdb.INT8: 43.9e12},
		MemBW: 480e9, L2Bytes: 3 << 20, TDPWatts: 250},
	{Name: "Titan-Xp", Vendor: "NVIDIA", Arch: "Pascal", SMs: 30, BoostClockMHz: 1582,
		Peak:  map[hwdb.Precision]float64{hwdb.FP32: 12.15e12, hwdb.INT8: 48.6e12},
		MemBW: 547.6e9, L2Bytes: 3 << 20, TDPWatts: 250},
	{Name: "Titan-X-Maxwell", Vendor: "NVIDIA", Arch: "Maxwell", SMs: 24, BoostClockMHz: 1075,
		Peak:  map[hwdb.Precision]float64{hwdb.FP32: 6.6e12},
		MemBW: 336.5e9, L2Bytes: 3 << 20, TDPWatts: 250},
	{Name: "M40", Vendor: "NVIDIA", Arch: "Maxwell", SMs: 24, BoostClockMHz: 1114,
		Peak:  map[hwdb.Precision]float64{hwdb.FP32: 6.84e12},
		MemBW: 288e9, L2Bytes: 3 << 20, TDPWatts: 250},
	{Name: "MI25", Vendor: "AMD", Arch: "Vega", SMs: 64, BoostClockMHz: 1500,
		Peak:  map[hwdb.Precision]float64{hwdb.FP32: 12.29e12, hwdb.FP16: 24.6e12},
		MemBW: 484e9, L2Bytes: 4 << 20, TDPWatts: 300},
}

// FallbackGPU returns the calibration's own figures for a DeepBench GPU.
func FallbackGPU(name string) (*hwdb.GPU, error) {
	for i := range deepBenchFallbackGPUs {
		if deepBenchFallbackGPUs[i].Name == name {
			g := deepBenchFallbackGPUs[i]
			return &g, nil
		}
	}
	return nil, fmt.Errorf("no fallback figures for GPU %q", name)
}

// CalibrationGPU resolves a DeepBench GPU from hwdb, and from the
// fallback table only where hwdb lacks it.
func CalibrationGPU(name string) (*hwdb.GPU, error) {
	if g, err := hwdb.Lookup(name); err == nil && g != nil {
		return g, nil
	}
	return FallbackGPU(name)
}
