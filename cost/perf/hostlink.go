package perf

import "github.com/onnxcost/onnxcost/hwdb"

// HostLinkShare is the share of the host link's per-direction rate
// (hwdb.GPU.PCIeBW) that a large copy between host and device memory
// reaches through the copy engines: NVIDIA's nvbandwidth reads about
// 25 GB/s each way on A100-SXM4 boards over PCIe 4.0 x16 (31.5 GB/s;
// NVIDIA/nvbandwidth issues #42 and #53), 0.80 of the link, the rest
// the packets' and the DMA's overheads. Those are pinned buffers; a
// pageable array (a NumPy input) is staged through the driver's own
// pinned buffer and may be slower, which no measurement here says:
// priced at the pinned rate, a copy's time is a floor.
const HostLinkShare = 0.80

// HostCopyS is the time of one copy of b bytes between host memory and
// g's: the bytes at HostLinkShare of the link's rate, after a launch's
// gap (the copy is one more command on the stream, issued and awaited
// like a kernel). ok is false when g's entry has no host link figure.
func HostCopyS(g *hwdb.GPU, b float64, p Params) (s float64, ok bool) {
	if g.PCIeBW <= 0 {
		return 0, false
	}
	return launchOverhead(g, p) + b/(HostLinkShare*g.PCIeBW), true
}
