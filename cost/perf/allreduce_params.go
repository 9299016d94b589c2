package perf

import (
	"math"

	"github.com/onnxcost/onnxcost/internal/detmath"
)

// AllReduceFit is the all-reduce time of one link kind:
//
//	t(N, B) = α(N) + 2(N−1)/N · B / (f(N) · link)
//
// with link the hwdb per-direction bandwidth that GPU.PeerBW(N) gives,
// α(N) = Alpha0S + Alpha1S·(N−1) (a ring's per-hop latency; log2 N fits
// no better, internal/calibrate/CALIBRATION.md) and f(N) the
// effective bus bandwidth as a fraction of the link, interpolated in
// log2 N between the fitted GPU counts.
type AllReduceFit struct {
	Alpha0S, Alpha1S float64
	// Fraction is f at N = 2, 4, 8.
	Fraction [3]float64
}

// The fitted all-reduce models. Data: Vidur NCCL all_reduce profiles
// (A100 and H100 DGX, one node, N = 2, 4, 8; 4-GPU A100 PCIe and H100 NVL
// nodes for PCIe) and APEX+ H100 SXM and H200 all_reduce (N = 2, 4, 8),
// every 4th size held out; go run ./internal/collective/cmd/allreducefit
// refits and prints these (internal/calibrate/CALIBRATION.md, "All-reduce").
var (
	AllReduceNVLink = AllReduceFit{Alpha0S: 6.23e-06, Alpha1S: 1.8e-06, Fraction: [3]float64{0.523, 0.608, 0.656}}
	// PCIe: 4-GPU nodes only, so α0 is held at 0 and f is one figure.
	AllReducePCIe = AllReduceFit{Alpha0S: 0, Alpha1S: 8.63e-06, Fraction: [3]float64{0.735, 0.735, 0.735}}
)

// Latency is α(n), the time of an all-reduce of no bytes over n GPUs.
func (m AllReduceFit) Latency(n int) float64 {
	if n < 2 {
		return 0
	}
	return m.Alpha0S + m.Alpha1S*float64(n-1)
}

// BusFraction is f(n). It is held at or below 1 so that an all-reduce of B
// bytes never beats B over the link: 2(n−1)/n ≥ 1 for n ≥ 2.
func (m AllReduceFit) BusFraction(n int) float64 {
	x := detmath.Log2(float64(max(n, 2)))
	var f float64
	switch {
	case x <= 1:
		f = m.Fraction[0]
	case x <= 2:
		f = m.Fraction[0] + (x-1)*(m.Fraction[1]-m.Fraction[0])
	case x <= 3:
		f = m.Fraction[1] + (x-2)*(m.Fraction[2]-m.Fraction[1])
	default:
		f = m.Fraction[2]
	}
	return math.Min(f, 1)
}

// Time is the all-reduce of bytes over n GPUs joined at linkBW bytes/s per
// direction; 0 for one GPU, and +Inf with no link to cost it over.
func (m AllReduceFit) Time(n int, bytes, linkBW float64) float64 {
	if n < 2 {
		return 0
	}
	if linkBW <= 0 {
		return math.Inf(1)
	}
	f := float64(n)
	return m.Latency(n) + 2*(f-1)/f*math.Max(bytes, 0)/(m.BusFraction(n)*linkBW)
}
