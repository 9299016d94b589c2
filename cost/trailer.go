package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// A node whose kernels run at two precisions carries the second as its
// Trailer (QAttention: an 8-bit projection GEMM, then attention in float
// over the dequantized result). The node's counts are both kernels';
// its own kernel is priced at the node's compute path, the trailer at
// the float type of the node's output, each under the time model as any
// kernel of the plan.

// withTrailer is e, the node's own kernel, carrying t as its Trailer:
// the counts, parameters, launches and dequantization of both kernels.
func (e NodeEstimate) withTrailer(t NodeEstimate) NodeEstimate {
	e.fillExecuted()
	t.fillExecuted()
	e.Counts.Add(t.Counts)
	e.Params += t.Params
	e.Launches += t.Launches
	e.DequantFLOPs += t.DequantFLOPs
	e.Trailer = &t
	return e
}

// lessTrailer is e's own kernel: e without what withTrailer added.
func (e NodeEstimate) lessTrailer() NodeEstimate {
	t := e.Trailer
	if t == nil {
		return e
	}
	neg := t.Counts
	neg.Scale(-1)
	e.Counts.Add(neg)
	e.Params -= t.Params
	e.Launches -= t.Launches
	e.DequantFLOPs -= t.DequantFLOPs
	e.Trailer = nil
	return e
}

// trailerDType is the compute dtype name of n's trailer t: a float
// --dtype or autocast's when one is in force, else the float type the
// rule gave the trailer (t.FloatDType: a kernel that dequantizes to fp16
// whatever its output; ruleType is then true), else the float type of
// n's output.
func (a *analyzer) trailerDType(n *ir.Node, t *NodeEstimate) (name string, ruleType bool) {
	name, _ = a.computeFor(n)
	if floatCompute(name) {
		return name, false
	}
	if f, ok := floatDTypeName(t.FloatDType); ok && f != "fp8" {
		return f, true
	}
	if out := n.Out(0); out != nil {
		if f, ok := floatDTypeName(out.DType); ok && f != "fp8" {
			return f, false
		}
	}
	return "fp32", false
}

// priceTrailer adds the time and energy of est's trailer to agg and, where
// it runs on another path than the node's own kernel (own), names that
// path in the row's note (its counts are already est's). Under tensor
// parallelism (split: the node's own kernel was sharded) a GEMM-like
// trailer is sharded the same way.
func (a *analyzer) priceTrailer(nc *report.NodeCost, n *ir.Node, est *NodeEstimate, own hwdb.Precision, split bool, agg *aggregate) {
	t := est.Trailer
	if t == nil {
		return
	}
	name, ruleType := a.trailerDType(n, t)
	prec := a.precisionNamed(name, t.Class)
	sizer := a.sizer(n)
	elem := 4.0
	sizer.inFloat(func() { elem = sizer.elemBytes(n.Out(0)) })
	if ruleType {
		elem = float64(t.FloatDType.Bits()) / 8
	}
	k := t.Kernel(prec, elem, t.Bytes(), false)
	if split && t.Class.GEMMLike() {
		a.tp.shardKernel(&k)
	}
	pk := a.underControl(k)
	pk = a.calibrated(pk, k, t.Class, n.OpType, kernelShape(k, t.RowInSample))
	kt := pk.KernelTime
	agg.add(aggregate{ComputeS: kt.ComputeS, LatencyS: kt.LatencyS, MemoryS: kt.MemoryS, RampS: kt.RampS, LaunchS: kt.LaunchS,
		TimeS: kt.TimeS, EnergyJ: pk.EnergyJ()})
	if t.Class.GEMMLike() {
		agg.GEMMTimeS += kt.TimeS
	}
	if prec == own {
		return
	}
	nc.Note = appendNote(nc.Note, "its "+string(t.Class)+" kernel at "+string(prec))
}

// appendNote is a row's note with more added after it, "; "-separated.
func appendNote(note, more string) string {
	if note == "" {
		return more
	}
	return note + "; " + more
}

// precisionNamed picks the compute path of a kernel of class cl at the
// compute dtype name on the analyzer's GPU, counting a fallback for
// finishWarnings.
func (a *analyzer) precisionNamed(name string, cl perf.KernelClass) hwdb.Precision {
	want := perf.WantedPrecision(name, cl)
	got := perf.ResolvePrecision(a.gpu, want)
	if got != want {
		a.fallbacks[string(want)+"->"+string(got)]++
	}
	return got
}

// floatCompute reports whether a compute dtype name (--dtype, autocast)
// is a float one, which prices a node's float kernels, its trailer's
// included.
func floatCompute(name string) bool {
	switch name {
	case "fp32", "tf32", "fp16", "bf16":
		return true
	}
	return false
}
