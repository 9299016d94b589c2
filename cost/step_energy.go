package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
)

// stepKernel prices a training-step kernel that is not a forward node (a
// backward kernel, the loss head, the optimizer update) exactly as the
// forward's nodes are priced (analyze.go): the runtime profile's kernel
// gap, the report's power cap or clock lock (perf.UnderControl; at the
// default setting it is perf.EstimateKernel), and under tensor
// parallelism a GEMM-like kernel's share of one GPU (parallel.go), so
// that a step's time and energy answer to the same setting. It returns
// the kernel's time and energy, cleaned like a node's.
func (a *analyzer) stepKernel(k perf.Kernel) (timeS, energyJ float64) {
	if a.tp != nil && k.Class.GEMMLike() {
		a.tp.shardKernel(&k)
	}
	pk := a.underControl(k)
	timeS, _ = clean(pk.TimeS)
	energyJ, _ = clean(pk.EnergyJ())
	return timeS, energyJ
}

// setTimeEnergy sets a report's total time and energy and the figures
// derived from them: average power = energy / time and EDP = energy × time.
func setTimeEnergy(t *report.Totals, timeS, energyJ float64) {
	t.TimeS, t.EnergyJ = timeS, energyJ
	t.AvgPowerW = 0
	if timeS > 0 {
		t.AvgPowerW = energyJ / timeS
	}
	t.EDPJS = energyJ * timeS
}

// underControl prices kernel k with the report's runtime profile (kernel
// gap) under its power cap or clock lock, counting a kernel whose power
// does not fit even at the lowest clock: the one pricing of forward nodes
// (analyze.go) and training-step kernels (stepKernel).
func (a *analyzer) underControl(k perf.Kernel) perf.PoweredKernel {
	po := perf.PlanOptions()
	po.Runtime = a.runtime
	pk := perf.UnderControl(a.gpu, k, po, a.opt.Power)
	if pk.OverCap {
		a.overCap++
	}
	return pk
}
