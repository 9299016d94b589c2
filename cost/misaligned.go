package cost

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
)

// A GEMM whose output rows are not whole 16-byte vectors (GPT-2's LM head
// over 50,257 tokens in fp16) runs cuBLAS's alignment-1 fallback on a GPU
// whose fast kernels load tiles by TMA (perf/misaligned.go): on our H200
// the head took 640 µs of a 0.86 ms call (testdata/measured, gpt2_hf_small
// fp16 at batch 32). The time model prices the fallback; the report says
// which nodes pay it and what padding the dimension would buy, the one
// fix a user controls (nanoGPT pads its vocabulary to 50,304 for it).

// misalignedGEMM is one node priced at the fallback: its name, its N and
// the granule N must be a multiple of, and its time as priced and at the
// padded N (both before any calibration: the advice is their ratio).
type misalignedGEMM struct {
	name           string
	n, granule     int64
	timeS, paddedS float64
}

// padded is the N the node's rows would be aligned at.
func (m misalignedGEMM) padded() int64 { return (m.n + m.granule - 1) / m.granule * m.granule }

// noteMisaligned records node nc, whose kernel k took timeS at the
// fallback, with its time priced at the padded N, and says so on the node.
func (a *analyzer) noteMisaligned(nc *report.NodeCost, k perf.Kernel, timeS float64) {
	m := misalignedGEMM{name: nc.Name, n: k.N, granule: perf.AlignmentGranule(a.gpu, k), timeS: timeS}
	p := k
	p.N = m.padded()
	m.paddedS = a.underControl(p).TimeS
	a.misaligned = append(a.misaligned, m)
	note := fmt.Sprintf("cuBLAS's alignment-1 fallback: N=%d is not a multiple of %d (16-byte rows); at N=%d about %s", m.n, m.granule, m.padded(), render.Seconds(m.paddedS))
	nc.Note = strings.TrimPrefix(nc.Note+"; "+note, "; ")
}

// alignmentAdvice adds one warning naming the GEMMs priced at the
// fallback, the time they take and what padding their N would leave.
func (a *analyzer) alignmentAdvice(rep *report.Report) {
	if len(a.misaligned) == 0 {
		return
	}
	var at, padded float64
	var ns, names []string
	for _, m := range a.misaligned {
		at += m.timeS
		padded += m.paddedS
		if s := fmt.Sprintf("N=%d → %d", m.n, m.padded()); !slices.Contains(ns, s) {
			ns = append(ns, s)
		}
		if !slices.Contains(names, m.name) { // a subgraph's node may be priced more than once
			names = append(names, m.name)
		}
	}
	slices.Sort(ns)
	share := " in the forward pass" // a training step's backward GEMMs are priced apart
	if t := rep.Totals.TimeS; t > 0 && rep.Totals.Train == nil {
		share = fmt.Sprintf(" (%.0f%% of the call)", 100*min(at/t, 1))
	}
	first := names[0]
	if len(names) > 1 {
		first += ", …"
	}
	a.warnf("%d GEMM node(s) (%s) run cuBLAS's slow alignment-1 fallback on %s: their output rows are not whole 16-byte vectors, which its TMA kernels need; %s priced%s, about %s with the dimension padded (%s)",
		len(names), first, a.gpu.Name, render.Seconds(at), share, render.Seconds(padded), strings.Join(ns, ", "))
}
