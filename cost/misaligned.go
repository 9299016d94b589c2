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
// the granule N must be a multiple of.
type misalignedGEMM struct {
	name       string
	n, granule int64
}

// padded is the N the node's rows would be aligned at.
func (m misalignedGEMM) padded() int64 { return (m.n + m.granule - 1) / m.granule * m.granule }

// noteMisaligned records node nc, whose kernel k took timeS at the
// fallback, and says on the node what it would take at the padded N
// (both uncalibrated).
func (a *analyzer) noteMisaligned(nc *report.NodeCost, k perf.Kernel, timeS float64) {
	m := misalignedGEMM{name: nc.Name, n: k.N, granule: perf.AlignmentGranule(a.gpu, k)}
	p := k
	p.N = m.padded()
	a.misaligned = append(a.misaligned, m)
	note := fmt.Sprintf("cuBLAS's alignment-1 fallback: N=%d is not a multiple of %d (16-byte rows), %s; at N=%d about %s", m.n, m.granule, render.Seconds(timeS), m.padded(), render.Seconds(a.underControl(p).TimeS))
	nc.Note = strings.TrimPrefix(nc.Note+"; "+note, "; ")
}

// alignmentAdvice adds one warning naming the GEMMs priced at the
// fallback and the N that would align them. It holds no time, so that the
// warning of every step of a generation or point of a sweep is the same
// line, said once; each node's note gives its time both ways.
func (a *analyzer) alignmentAdvice() {
	if len(a.misaligned) == 0 {
		return
	}
	var ns, names []string
	for _, m := range a.misaligned {
		if s := fmt.Sprintf("N=%d → %d", m.n, m.padded()); !slices.Contains(ns, s) {
			ns = append(ns, s)
		}
		if !slices.Contains(names, m.name) { // a subgraph's node may be priced more than once
			names = append(names, m.name)
		}
	}
	slices.Sort(ns)
	first := names[0]
	if len(names) > 1 {
		first += ", …"
	}
	a.warnf("%d GEMM node(s) (%s) run cuBLAS's slow alignment-1 fallback on %s: their output rows are not whole 16-byte vectors, which its TMA kernels need; padded (%s), they would run the fast kernels (each node's note gives its time both ways: the report's node notes, or --format json)",
		len(names), first, a.gpu.Name, strings.Join(ns, ", "))
}
