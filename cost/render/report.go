package render

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Options select what a rendering shows.
type Options struct {
	Top  int  // show only the N costliest nodes (by time), 0 = all
	ByOp bool // totals per op type instead of per node
}

// OpTotal aggregates the nodes of one op type.
type OpTotal struct {
	OpType       string  `json:"op_type"`
	Count        int     `json:"count"`
	MACs         float64 `json:"macs"`
	FLOPs        float64 `json:"flops"`
	BytesRead    float64 `json:"bytes_read"`
	BytesWritten float64 `json:"bytes_written"`
	Launches     float64 `json:"launches"`
	TimeS        float64 `json:"time_s"`
	Share        float64 `json:"share"`
}

// topOps is ByOp cut to the n costliest op types (n ≤ 0: all), with the
// op types left out.
func topOps(r *report.Report, n int, perGPU bool) (shown, rest []OpTotal) {
	ops := byOp(r, perGPU)
	if n <= 0 || n >= len(ops) {
		return ops, nil
	}
	return ops[:n], ops[n:]
}

// ByOp sums nodes per op type, costliest first (ties by name).
func ByOp(r *report.Report) []OpTotal { return byOp(r, false) }

// byOp is ByOp; perGPU sums each node's FLOPs and bytes as one GPU runs
// them (share), to sit beside one GPU's time.
func byOp(r *report.Report, perGPU bool) []OpTotal {
	idx := map[string]int{}
	var out []OpTotal
	for _, n := range r.Nodes {
		key := ir.QualifiedOp(n.Domain, n.OpType)
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, OpTotal{OpType: key})
		}
		t := &out[i]
		f := 1.0
		if perGPU {
			f = gpuShare(&n)
		}
		t.Count++
		t.MACs += n.MACs * f
		t.FLOPs += n.FLOPs * f
		t.BytesRead += n.BytesRead * f
		t.BytesWritten += n.BytesWritten * f
		t.Launches += n.Launches
		t.TimeS += n.TimeS
	}
	for i := range out {
		if r.Totals.TimeS > 0 {
			out[i].Share = out[i].TimeS / r.Totals.TimeS
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].TimeS != out[j].TimeS {
			return out[i].TimeS > out[j].TimeS
		}
		return out[i].OpType < out[j].OpType
	})
	return out
}

// selectNodes returns the nodes to show: all in topological order, or the
// top N by time (ties broken by position, so output is deterministic).
func selectNodes(r *report.Report, top int) (shown []report.NodeCost, rest []report.NodeCost) {
	if top <= 0 || top >= len(r.Nodes) {
		return r.Nodes, nil
	}
	order := make([]int, len(r.Nodes))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return r.Nodes[order[a]].TimeS > r.Nodes[order[b]].TimeS })
	for k, i := range order {
		if k < top {
			shown = append(shown, r.Nodes[i])
		} else {
			rest = append(rest, r.Nodes[i])
		}
	}
	return shown, rest
}

// Under tensor parallelism (--gpus N) a node's time is one GPU's, while
// its FLOPs and bytes in the report are the whole model's arithmetic; a
// table row that put the two side by side would imply N times the GPU's
// rates (LLaMA-7B decode on 4 H100s read as 15 TB/s). The human tables
// therefore show one GPU's share of the FLOPs and bytes, and say so in
// their headers; JSON and CSV keep the model's counts with gpu_share.

// gpuShare is the share of n's FLOPs and bytes one GPU runs.
func gpuShare(n *report.NodeCost) float64 {
	if n.GPUShare > 0 {
		return n.GPUShare
	}
	return 1
}

// tensorParallel reports whether r is one GPU of several.
func tensorParallel(r *report.Report) bool { return r.Totals.GPUs > 1 }

// countHeaders are the FLOPs, read and written column titles: per GPU
// under tensor parallelism.
func countHeaders(r *report.Report) (flops, read, written string) {
	if tensorParallel(r) {
		return "FLOPs/GPU", "read/GPU", "written/GPU"
	}
	return "FLOPs", "read", "written"
}

// tableTotals is the totals row's FLOPs, read and written: the model's,
// or under tensor parallelism the sum of one GPU's shares.
func tableTotals(r *report.Report) (flops, read, written float64) {
	if !tensorParallel(r) {
		return r.Totals.FLOPs, r.Totals.BytesRead, r.Totals.BytesWritten
	}
	for i := range r.Nodes {
		f := gpuShare(&r.Nodes[i])
		flops += r.Nodes[i].FLOPs * f
		read += r.Nodes[i].BytesRead * f
		written += r.Nodes[i].BytesWritten * f
	}
	return flops, read, written
}

// Header is the one-paragraph context every human rendering starts with.
func Header(r *report.Report) string {
	var b strings.Builder
	gpu := "GPU " + r.GPU
	if n := r.Totals.GPUs; n > 1 {
		gpu = fmt.Sprintf("tensor-parallel over %d × %s", n, r.GPU)
	}
	fmt.Fprintf(&b, "onnxcost %s · %s · %s · dtype %s%s · %s%s", r.ToolVersion, r.Model, gpu, r.DType, quantizedText(r), RuntimePlan(r),
		PowerSetting(r.Totals.PowerCapW, r.Totals.SMClockCapMHz, " · "))
	if len(r.Bindings) > 0 {
		keys := make([]string, 0, len(r.Bindings))
		for k := range r.Bindings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " · %s=%d", k, r.Bindings[k])
		}
	}
	if name := r.CalibrationName(); name != "" {
		// Never silently: the time lines below are the calibration's.
		fmt.Fprintf(&b, " · calibrated by %s", name)
	}
	return b.String()
}

// PowerSetting is a header's note of the power setting every estimate
// under it was priced at, each part after sep: with " · ", " · power cap
// 150 W", " · SM clock ≤ 900 MHz"; "" at the GPU's default.
func PowerSetting(capW, smClockMHz float64, sep string) string {
	var s string
	if capW > 0 {
		s += fmt.Sprintf("%spower cap %g W", sep, capW)
	}
	if smClockMHz > 0 {
		s += fmt.Sprintf("%sSM clock ≤ %g MHz", sep, smClockMHz)
	}
	return s
}

// TrainingSetting is a header's note that every time under it is one
// training step, after sep: " · training step (optimizer adam,
// checkpoint none, grad-accum 4, data-parallel 2)"; "" for inference
// (nil).
func TrainingSetting(t *report.TrainSetting, sep string) string {
	if t == nil {
		return ""
	}
	s := fmt.Sprintf("%straining step (optimizer %s, checkpoint %s", sep, t.Optimizer, t.Checkpoint)
	if t.GradAccum > 1 {
		s += fmt.Sprintf(", grad-accum %d", t.GradAccum)
	}
	if t.DataParallel > 1 {
		s += fmt.Sprintf(", data-parallel %d", t.DataParallel)
	}
	return s + ")"
}

// WarmSetting is a header's note that every estimate under it prices a
// call repeated back to back (--warm), after sep; "" for first calls.
func WarmSetting(warm bool, sep string) string {
	if !warm {
		return ""
	}
	return sep + "repeated calls (warm L2)"
}

// RuntimeKernels names a runtime and the plan of kernels it runs, and a
// warm call: "pytorch (eager kernels)", "graph (eager kernels) ·
// repeated calls (warm L2)".
func RuntimeKernels(runtime, plan string, warm bool) string {
	return fmt.Sprintf("%s (%s kernels)%s", runtime, plan, WarmSetting(warm, " · "))
}

// PricedText names everything a report's times were priced under, for a
// line that stands for the report elsewhere (a check's model line, a
// drawing's legend): the runtime and its kernels (PlanText, a warm
// call), and where set the power setting, the training step and the
// tensor-parallel group, each after sep.
func PricedText(r *report.Report, sep string) string {
	s := PlanText(r)
	if r.Runtime != nil {
		s += PowerSetting(r.Totals.PowerCapW, r.Totals.SMClockCapMHz, sep)
	}
	s += TrainingSetting(r.Totals.Train.Setting(), sep)
	if n := r.Totals.GPUs; n > 1 {
		s += fmt.Sprintf("%stensor-parallel over %d GPUs", sep, n)
	}
	return s
}

// PlanText names what a rendering's times are for: the runtime and the
// plan of kernels it runs (RuntimePlan), or the plan alone ("fused
// plan") for a report priced without a runtime.
func PlanText(r *report.Report) string {
	if r.Runtime == nil {
		return r.Plan + " plan"
	}
	return RuntimePlan(r)
}

// RuntimePlan names what the times are for: the runtime and the plan of
// kernels it runs ("runtime pytorch (eager kernels)"), or the plan alone
// when counting.
func RuntimePlan(r *report.Report) string {
	if r.Runtime == nil {
		return "plan " + r.Plan + WarmSetting(r.Warm, " · ")
	}
	return "runtime " + RuntimeKernels(r.Runtime.Name, r.Plan, r.Warm)
}

// IntervalText is the line that says how far to trust the time: its 80%
// interval and the calibration in force. "" when the report has none.
func IntervalText(r *report.Report) string {
	iv := r.Totals.TimeIntervalS
	if len(iv) != 2 || !(r.Totals.TimeS > 0) {
		return ""
	}
	cal := "uncalibrated: from the held-out error of each kernel class on this GPU's family; 'onnxcost calibrate' narrows it"
	if r.Totals.IntervalBasis != "" {
		cal = "uncalibrated: " + r.Totals.IntervalBasis // a family with no measured kernels here
	}
	if rt := r.Runtime; rt != nil && rt.WaitS > r.Totals.TimeS/2 {
		// Most of such a call is the GPU waiting on the host, and the
		// interval's width is then the host's: no kernel band says
		// that, and a user's CPU and Python decide it. A runtime that
		// dispatches nothing per kernel waits on its per-call work.
		if rt.DispatchS > 0 {
			cal = fmt.Sprintf("uncalibrated: %.0f%% of the call waits on the host's dispatch, whose spread is that of our two machines' eager calls; your CPU and Python set it, and 'onnxcost calibrate' with calls timed on them fits it",
				100*rt.WaitS/r.Totals.TimeS)
		} else {
			cal = fmt.Sprintf("uncalibrated: %.0f%% of the call waits on the runtime's fixed per-call work (call_us: enqueue or graph launch, and synchronise), which outlasts its kernels; 'onnxcost calibrate' with calls timed on your machine fits it",
				100*rt.WaitS/r.Totals.TimeS)
		}
	}
	if r.Calibration != "" {
		cal = r.Calibration
	}
	return fmt.Sprintf("time %s, 80%% interval %s – %s (−%.0f%% +%.0f%%; %s)", Seconds(r.Totals.TimeS), Seconds(iv[0]), Seconds(iv[1]),
		100*(1-iv[0]/r.Totals.TimeS), 100*(iv[1]/r.Totals.TimeS-1), cal)
}

// quantizedText says when the model is quantized, and when --dtype made
// it run at another type than its own.
func quantizedText(r *report.Report) string {
	switch r.Quantized {
	case "":
		return ""
	case r.DType:
		return " (quantized model)"
	}
	return fmt.Sprintf(" (quantized model, %s; costed at %s as asked)", r.Quantized, r.DType)
}

// opName is the op column: the op, and how many nodes a fused one
// replaced.
func opName(n *report.NodeCost) string {
	return string(appendFusedCount([]byte(ir.QualifiedOp(n.Domain, n.OpType)), n))
}

// appendOpName appends Clean(opName(n)) to b (the count needs no cleaning).
func appendOpName(b []byte, n *report.NodeCost) []byte {
	return appendFusedCount(appendClean(b, ir.QualifiedOp(n.Domain, n.OpType)), n)
}

// appendFusedCount appends " (k fused)" for a node that replaced k nodes.
func appendFusedCount(b []byte, n *report.NodeCost) []byte {
	if len(n.FusedFrom) == 0 {
		return b
	}
	b = append(b, " ("...)
	b = strconv.AppendInt(b, int64(len(n.FusedFrom)), 10)
	return append(b, " fused)"...)
}

// outShape is the output column: the first output's shape as JSON writes it.
func outShape(n *report.NodeCost) string {
	if len(n.Outputs) == 0 {
		return ""
	}
	return string(n.Outputs[0].Shape.AppendJSON(nil))
}

// appendOutShape appends Clean(outShape(n)) to b.
func appendOutShape(b []byte, n *report.NodeCost) []byte {
	if len(n.Outputs) == 0 {
		return b
	}
	start := len(b)
	b = n.Outputs[0].Shape.AppendJSON(b)
	if bytes.ContainsFunc(b[start:], unsafeRune) { // a symbol JSON leaves alone (C1 controls, U+FEFF)
		s := string(b[start:])
		b = appendClean(b[:start], s)
	}
	return b
}

func share(t, total float64) string { return string(appendShare(nil, t, total)) }

func appendShare(b []byte, t, total float64) []byte {
	if total <= 0 {
		return append(b, '-')
	}
	return appendPercent(b, t/total)
}

func intensity(ai float64) string { return string(appendIntensity(nil, ai)) }

func appendIntensity(b []byte, ai float64) []byte {
	if ai == 0 {
		return append(b, '-')
	}
	return appendSig(b, ai)
}

// nodeRow appends node n's row of the text report, formatting each cell
// straight into the table (see table).
func nodeRow(t *table, n *report.NodeCost, totalS float64) {
	t.text = appendClean(t.text, n.Name)
	t.endCell()
	t.text = appendOpName(t.text, n)
	t.endCell()
	t.text = appendOutShape(t.text, n)
	t.endCell()
	f := gpuShare(n) // 1 on one GPU: the counts as they are
	t.text = appendFLOPs(t.text, n.FLOPs*f)
	t.endCell()
	t.text = appendBytes(t.text, n.BytesRead*f)
	t.endCell()
	t.text = appendBytes(t.text, n.BytesWritten*f)
	t.endCell()
	t.text = appendIntensity(t.text, n.ArithmeticIntensity)
	t.endCell()
	t.text = append(t.text, dash(n.Bound)...)
	t.endCell()
	t.text = appendSeconds(t.text, n.TimeS)
	t.endCell()
	t.text = appendShare(t.text, n.TimeS, totalS)
	t.endCell()
	t.endRow()
}

// ConventionSummary states the FLOP convention once in human renderings;
// the full text is the report's flop_convention field (JSON).
const ConventionSummary = "FLOPs: 1 multiply-accumulate = 2 FLOPs; bias, activation, normalisation and pooling counted separately (full convention: flop_convention in --format json)."

// Text writes an aligned table with human units, a totals row and the
// FLOP convention stated once.
func Text(w io.Writer, r *report.Report, opt Options) error {
	fmt.Fprintln(w, Clean(Header(r)))
	fmt.Fprintln(w, Clean(FitLine(r)))
	if l := RuntimeLine(r); l != "" {
		fmt.Fprintln(w, Clean(l))
	}
	fmt.Fprintf(w, "%s\n\n", ConventionSummary)
	if r.Totals.Train != nil && !opt.ByOp {
		return trainText(w, r, opt)
	}
	var t *table
	if opt.ByOp {
		shown, rest := topOps(r, opt.Top, true)
		fh, rh, wh := countHeaders(r)
		t = newTable(len(shown)+2, []string{"op", "nodes", fh, rh, wh, "launches", "time", "share"}, false, true, true, true, true, true, true, true)
		for _, o := range shown {
			t.add(Clean(o.OpType), Count(float64(o.Count)), FLOPs(o.FLOPs), Bytes(o.BytesRead), Bytes(o.BytesWritten), Count(o.Launches), Seconds(o.TimeS), Percent(o.Share))
		}
		if len(rest) > 0 {
			var rt float64
			for _, o := range rest {
				rt += o.TimeS
			}
			t.add(fmt.Sprintf("… %d more op types", len(rest)), "", "", "", "", "", Seconds(rt), share(rt, r.Totals.TimeS))
		}
		tf, tr, tw := tableTotals(r)
		t.add("total", Count(float64(len(r.Nodes))), FLOPs(tf), Bytes(tr), Bytes(tw), Count(r.Totals.Launches), Seconds(r.Totals.TimeS), "100%")
	} else {
		shown, rest := selectNodes(r, opt.Top)
		fh, rh, wh := countHeaders(r)
		t = newTable(len(shown)+2, []string{"node", "op", "output", fh, rh, wh, "AI", "bound", "time", "share"}, false, false, false, true, true, true, true, false, true, true)
		for i := range shown {
			nodeRow(t, &shown[i], r.Totals.TimeS)
		}
		if len(rest) > 0 {
			var rt float64
			for _, n := range rest {
				rt += n.TimeS
			}
			t.add(fmt.Sprintf("… %d more nodes", len(rest)), "", "", "", "", "", "", "", Seconds(rt), share(rt, r.Totals.TimeS))
		}
		tf, tr, tw := tableTotals(r)
		t.add("total", "", "", FLOPs(tf), Bytes(tr), Bytes(tw), "", "", Seconds(r.Totals.TimeS), "100%")
	}
	if err := t.write(w); err != nil {
		return err
	}
	tt := r.Totals
	fmt.Fprintf(w, "\n%s MACs%s · params %s (%s) · %s launches%s · peak memory %s · energy %s · GEMM/conv %s of time\n",
		Count(tt.MACs), executedText(tt.Counts), ParamsCount(tt), Bytes(tt.ParamBytes), Count(tt.Launches), kernelSumText(r), Bytes(tt.PeakMemoryBytes), EnergyText(tt), Percent(tt.GEMMConvTimeShare))
	fmt.Fprintf(w, "power: average %.0f W%s · energy-delay product %.4g J·s · %s\n", tt.AvgPowerW, perGPU(GPUsRunning(tt)), tt.EDPJS, powerSetting(tt))
	if line := IntervalText(r); line != "" {
		fmt.Fprintln(w, line)
	}
	writeUnsupported(w, r)
	writePartial(w, r)
	writeNodeNotes(w, r)
	return nil
}

// kernelSumText is ", kernel sum T": the kernels' own time, what a
// profiler's kernel summary should read against it; "" without a runtime
// and for a training step (the runtime's figure is its forward call's).
func kernelSumText(r *report.Report) string {
	if r.Runtime == nil || !(r.Runtime.KernelS > 0) || r.Totals.Train != nil {
		return ""
	}
	return ", kernel sum " + Seconds(r.Runtime.KernelS)
}

// executedText names what the plan executes when it is not the model's
// arithmetic (Winograd convolutions: fewer products plus transforms), so
// the MAC count beside it reads as the model's; "" when the two agree.
func executedText(c report.Counts) string {
	if c.ExecutedFLOPs == c.FLOPs && c.ExecutedMACs == c.MACs {
		return ""
	}
	return fmt.Sprintf(" (the plan executes %s MACs, %s)", Count(c.ExecutedMACs), FLOPs(c.ExecutedFLOPs))
}

// powerSetting names the power cap or clock lock a report was priced under.
func powerSetting(tt report.Totals) string {
	var parts []string
	if tt.PowerCapW > 0 {
		parts = append(parts, fmt.Sprintf("power cap %.0f W", tt.PowerCapW))
	}
	if tt.SMClockCapMHz > 0 {
		parts = append(parts, fmt.Sprintf("SM clock locked at %.0f MHz", tt.SMClockCapMHz))
	}
	if len(parts) == 0 {
		return "default power limit"
	}
	return strings.Join(parts, ", ")
}

func writeUnsupported(w io.Writer, r *report.Report) {
	if len(r.UnsupportedOps) == 0 {
		return
	}
	parts := make([]string, 0, len(r.UnsupportedOps))
	for _, u := range r.UnsupportedOps {
		parts = append(parts, fmt.Sprintf("%s (%d)", ir.QualifiedOp(u.Domain, u.OpType), u.Count))
	}
	fmt.Fprintf(w, "unsupported ops, not counted in any total: %s\n", Clean(strings.Join(parts, ", ")))
}

// maxPartialNames is how many unsized nodes the partial-totals line names
// before "… N more": enough to find where the unknown shapes start.
const maxPartialNames = 5

// writePartial says, under the totals, that they are a lower bound and
// how many nodes they miss (report.Partial); nothing when none.
func writePartial(w io.Writer, r *report.Report) {
	p := r.Totals.Partial
	if p == nil {
		return
	}
	var parts []string
	if p.UncostedNodes > 0 {
		parts = append(parts, fmt.Sprintf("%d without a cost rule", p.UncostedNodes))
	}
	if p.UnsizedNodes > 0 {
		names := p.UnsizedNodeNames
		more := ""
		if len(names) > maxPartialNames {
			more = fmt.Sprintf(", … %d more", len(names)-maxPartialNames)
			names = names[:maxPartialNames]
		}
		parts = append(parts, fmt.Sprintf("%d with tensors of unknown shape (%s%s)", p.UnsizedNodes, strings.Join(names, ", "), more))
	}
	fmt.Fprintf(w, "partial totals: %d of %d nodes (%s) not costed in full: %s; every total above is a lower bound\n",
		p.UncostedNodes+p.UnsizedNodes, r.Totals.Nodes, Percent(p.ShareOfNodes), Clean(strings.Join(parts, ", ")))
}

// Joules renders energy (µJ, mJ, J).
// EnergyText is a report's energy as text: on several GPUs (tensor
// parallelism, a training step's data-parallel replicas) energy_j is one
// GPU's, as its power is, and the text says so and gives all of theirs
// ("3.01 J per GPU (6.02 J for the 2)").
func EnergyText(tt report.Totals) string { return allGPUs(tt.EnergyJ, GPUsRunning(tt)) }

// GPUsRunning is how many GPUs one call or training step runs on: the
// tensor-parallel group, times a training step's data-parallel replicas.
// A report's energy and power are one GPU's of them.
func GPUsRunning(tt report.Totals) int {
	n := max(tt.GPUs, 1)
	if tr := tt.Train; tr != nil {
		n *= max(tr.DataParallel, 1)
	}
	return n
}

// perGPU marks a figure that is one GPU's of a tensor-parallel group.
func perGPU(gpus int) string {
	if gpus > 1 {
		return " per GPU"
	}
	return ""
}

func Joules(j float64) string {
	switch {
	case j == 0:
		return "0 J"
	case j < 1e-3:
		return sig(j*1e6) + " µJ"
	case j < 1:
		return sig(j*1e3) + " mJ"
	}
	return sig(j) + " J"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// CSV writes one row per node (or per op type) with raw numbers in base
// units, for spreadsheets and scripts.
func CSV(w io.Writer, r *report.Report, opt Options) error {
	if r.Totals.Train != nil && !opt.ByOp {
		return trainCSV(w, r, opt)
	}
	cw := csv.NewWriter(w)
	f := csvNumber
	if opt.ByOp {
		cw.Write([]string{"op_type", "count", "macs", "flops", "bytes_read", "bytes_written", "launches", "time_s", "share"})
		shown, _ := topOps(r, opt.Top, false) // the model's counts, as JSON
		for _, t := range shown {
			cw.Write([]string{Clean(t.OpType), strconv.Itoa(t.Count), f(t.MACs), f(t.FLOPs), f(t.BytesRead), f(t.BytesWritten), f(t.Launches), f(t.TimeS), f(t.Share)})
		}
	} else {
		cw.Write([]string{"name", "op_type", "domain", "fused_from", "output_shape", "macs", "flops", "executed_flops", "transcendentals", "bytes_read", "bytes_written", "params", "launches", "arithmetic_intensity", "bound", "compute_s", "memory_s", "launch_s", "time_s", "energy_j"})
		shown, _ := selectNodes(r, opt.Top)
		for _, n := range shown {
			cw.Write([]string{Clean(n.Name), Clean(n.OpType), Clean(n.Domain), Clean(strings.Join(n.FusedFrom, ";")), Clean(outShape(&n)), f(n.MACs), f(n.FLOPs), f(n.ExecutedFLOPs), f(n.Transcendentals), f(n.BytesRead), f(n.BytesWritten), f(n.Params), f(n.Launches), f(n.ArithmeticIntensity), n.Bound, f(n.ComputeS), f(n.MemoryS), f(n.LaunchS), f(n.TimeS), f(n.EnergyJ)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvNumber is CSVNumber.
func csvNumber(v float64) string { return CSVNumber(v) }

// CSVNumber writes a number for a CSV column in one notation: plain
// decimals, the shortest that read back exactly (115605504, not
// 1.15605504e+08; 14630.5 beside 5444, not 1.46305e+04), with an
// exponent only far outside what a cost can be (below 1e-12 or from
// 1e21 up), so that a column never mixes the two.
func CSVNumber(v float64) string {
	if a := math.Abs(v); a == 0 || (a >= 1e-12 && a < 1e21) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Markdown writes a GitHub-flavoured table with human units. Model-supplied
// strings are escaped so that they cannot break the table.
func Markdown(w io.Writer, r *report.Report, opt Options) error {
	fmt.Fprintf(w, "**%s**\n\n%s\n\n", MarkdownEscape(Header(r)), MarkdownEscape(FitLine(r)))
	if l := RuntimeLine(r); l != "" {
		fmt.Fprintf(w, "%s\n\n", MarkdownEscape(l))
	}
	if l := IntervalText(r); l != "" {
		fmt.Fprintf(w, "%s\n\n", MarkdownEscape(l))
	}
	tt := r.Totals
	if tt.Train != nil {
		// The totals row is the forward's counts beside the step's time,
		// memory and energy; the phase table after it splits the step.
		fmt.Fprintf(w, "| step time | forward FLOPs | forward MACs | forward bytes read | forward bytes written | params | forward launches | peak memory | step energy | GEMM/conv share |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	} else {
		fmt.Fprintf(w, "| time | FLOPs | MACs | bytes read | bytes written | params | launches | peak memory | energy | GEMM/conv share |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	}
	fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n\n", Seconds(tt.TimeS), FLOPs(tt.FLOPs), Count(tt.MACs), Bytes(tt.BytesRead), Bytes(tt.BytesWritten), ParamsCount(tt), Count(tt.Launches), Bytes(tt.PeakMemoryBytes), EnergyText(tt), Percent(tt.GEMMConvTimeShare))
	if tt.Train != nil {
		trainMarkdown(w, r)
	}
	if opt.ByOp {
		fh, rh, wh := countHeaders(r)
		fmt.Fprintf(w, "| op | nodes | %s | %s | %s | launches | time | share |\n|---|---:|---:|---:|---:|---:|---:|---:|\n", fh, rh, wh)
		shown, rest := topOps(r, opt.Top, true)
		for _, t := range shown {
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", MarkdownEscape(t.OpType), t.Count, FLOPs(t.FLOPs), Bytes(t.BytesRead), Bytes(t.BytesWritten), Count(t.Launches), Seconds(t.TimeS), Percent(t.Share))
		}
		if len(rest) > 0 {
			fmt.Fprintf(w, "| … %d more op types | | | | | | | |\n", len(rest))
		}
	} else {
		shown, rest := selectNodes(r, opt.Top)
		fh, rh, wh := countHeaders(r)
		fmt.Fprintf(w, "| node | op | output | %s | %s | %s | AI | bound | time | share |\n|---|---|---|---:|---:|---:|---:|---|---:|---:|\n", fh, rh, wh)
		for _, n := range shown {
			f := gpuShare(&n)
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", MarkdownEscape(n.Name), MarkdownEscape(opName(&n)), MarkdownEscape(outShape(&n)), FLOPs(n.FLOPs*f), Bytes(n.BytesRead*f), Bytes(n.BytesWritten*f), intensity(n.ArithmeticIntensity), dash(n.Bound), Seconds(n.TimeS), share(n.TimeS, r.Totals.TimeS))
		}
		if len(rest) > 0 {
			fmt.Fprintf(w, "| … %d more nodes | | | | | | | | | |\n", len(rest))
		}
	}
	fmt.Fprintf(w, "\n%s\n", MarkdownEscape(ConventionSummary))
	if len(r.UnsupportedOps) > 0 {
		fmt.Fprintln(w)
		var sb strings.Builder
		writeUnsupported(&sb, r)
		fmt.Fprint(w, MarkdownEscape(sb.String()))
	}
	if r.Totals.Partial != nil {
		// A paragraph of its own (MarkdownEscape joins lines).
		var sb strings.Builder
		writePartial(&sb, r)
		fmt.Fprintf(w, "\n\n%s\n", MarkdownEscape(strings.TrimSuffix(sb.String(), "\n")))
	}
	writeNodeNotesMarkdown(w, r)
	return nil
}

// MarkdownEscape makes a model-supplied string safe inside a Markdown table
// cell or paragraph: no pipes, no HTML, no code spans, no line breaks.
func MarkdownEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '|', '\\', '`', '*', '_', '[', ']', '#', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\n', '\r', '\u2028', '\u2029':
			b.WriteByte(' ')
		default:
			if unsafeRune(r) {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}
