package render

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// NeedGPULine says what a count-only report leaves out and how to get it.
const NeedGPULine = "times, memory level and energy need a GPU: add --gpu NAME (see 'onnxcost gpus')"

// CountText writes a count-only report (no GPU): the text report's
// header and table with the priced columns left out, nodes (or op types,
// byOp) in order or, with top, the top by FLOPs, then the totals and
// NeedGPULine.
func CountText(w io.Writer, r *report.Report, top int, byOp bool) error {
	fmt.Fprintln(w, Clean(countOnlyHeader(r)))
	fmt.Fprintf(w, "%s\n\n", ConventionSummary)
	var rows [][]string
	var restFLOPs float64
	rest := 0
	if byOp {
		ops := ByOp(r)
		sort.SliceStable(ops, func(i, j int) bool { return ops[i].FLOPs > ops[j].FLOPs })
		rows = append(rows, []string{"op", "nodes", "FLOPs", "read", "written", "launches"})
		for i, o := range ops {
			if top > 0 && i >= top {
				rest++
				restFLOPs += o.FLOPs
				continue
			}
			rows = append(rows, []string{Clean(o.OpType), Count(float64(o.Count)), FLOPs(o.FLOPs), Bytes(o.BytesRead), Bytes(o.BytesWritten), Count(o.Launches)})
		}
		if rest > 0 {
			rows = append(rows, []string{fmt.Sprintf("… %d more op types", rest), "", FLOPs(restFLOPs), "", "", ""})
		}
		rows = append(rows, []string{"total", Count(float64(len(r.Nodes))), FLOPs(r.Totals.FLOPs), Bytes(r.Totals.BytesRead), Bytes(r.Totals.BytesWritten), Count(r.Totals.Launches)})
	} else {
		order := make([]int, len(r.Nodes))
		for i := range order {
			order[i] = i
		}
		if top > 0 {
			sort.SliceStable(order, func(a, b int) bool { return r.Nodes[order[a]].FLOPs > r.Nodes[order[b]].FLOPs })
		}
		rows = append(rows, []string{"node", "op", "output", "FLOPs", "read", "written", "AI", "launches"})
		for k, i := range order {
			n := &r.Nodes[i]
			if top > 0 && k >= top {
				rest++
				restFLOPs += n.FLOPs
				continue
			}
			op := ir.QualifiedOp(n.Domain, n.OpType)
			if len(n.FusedFrom) > 0 {
				op += fmt.Sprintf(" (%d fused)", len(n.FusedFrom))
			}
			out := ""
			if len(n.Outputs) > 0 {
				out = string(n.Outputs[0].Shape.AppendJSON(nil))
			}
			ai := "-"
			if n.ArithmeticIntensity > 0 {
				ai = sig(n.ArithmeticIntensity)
			}
			rows = append(rows, []string{Clean(n.Name), Clean(op), Clean(out), FLOPs(n.FLOPs), Bytes(n.BytesRead), Bytes(n.BytesWritten), ai, Count(n.Launches)})
		}
		if rest > 0 {
			rows = append(rows, []string{fmt.Sprintf("… %d more nodes", rest), "", "", FLOPs(restFLOPs), "", "", "", ""})
		}
		rows = append(rows, []string{"total", "", "", FLOPs(r.Totals.FLOPs), Bytes(r.Totals.BytesRead), Bytes(r.Totals.BytesWritten), "", Count(r.Totals.Launches)})
	}
	left := 1 // name columns left-aligned, numbers right-aligned
	if !byOp {
		left = 3
	}
	writeAligned(w, rows, left)
	t := r.Totals
	executed := ""
	if t.ExecutedFLOPs != t.FLOPs {
		executed = " (executes " + FLOPs(t.ExecutedFLOPs) + ")"
	}
	fmt.Fprintf(w, "\n%s MACs · %s%s · params %s (%s) · %s launches · peak activations %s\n",
		Count(t.MACs), FLOPs(t.FLOPs), executed, ParamsCount(t), Bytes(t.ParamBytes), Count(t.Launches), Bytes(t.PeakActivationBytes))
	if len(r.UnsupportedOps) > 0 || t.Partial != nil {
		fmt.Fprintln(w, "the totals are partial: some nodes were not counted in full (see the warnings)")
	}
	_, err := fmt.Fprintln(w, NeedGPULine)
	return err
}

// countOnlyHeader is the text report's header line for a count-only report:
// "no GPU" where the GPU would be.
func countOnlyHeader(r *report.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "onnxcost %s · %s · no GPU (counts only) · dtype %s", r.ToolVersion, r.Model, r.DType)
	if r.Quantized != "" && r.Quantized != r.DType {
		fmt.Fprintf(&b, " (quantized model, %s)", r.Quantized)
	}
	fmt.Fprintf(&b, " · plan %s", r.Plan)
	keys := make([]string, 0, len(r.Bindings))
	for k := range r.Bindings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " · %s=%d", k, r.Bindings[k])
	}
	return b.String()
}

// writeAligned writes rows as columns two spaces apart, the first left
// columns aligned left and the rest (numbers) right.
func writeAligned(w io.Writer, rows [][]string, left int) {
	var width []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	var line []byte
	for _, row := range rows {
		line = line[:0]
		for i, cell := range row {
			if i > 0 {
				line = append(line, "  "...)
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell))
			if i < left {
				line = append(append(line, cell...), pad...)
			} else {
				line = append(append(line, pad...), cell...)
			}
		}
		line = append(bytes.TrimRight(line, " "), '\n')
		w.Write(line)
	}
}

// ParamsCount is the parameter count as the reports print it: Params,
// with the elements of a tied weight's transposed copy in the file
// (report.Totals.TiedParams) said beside it rather than added.
func ParamsCount(t report.Totals) string {
	if t.TiedParams > 0 {
		return Count(t.Params) + " + " + Count(t.TiedParams) + " tied copy"
	}
	return Count(t.Params)
}
