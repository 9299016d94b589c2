package main

import (
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/sweep"
)

// Tests for issue 27 item 3 (per-item figures at the model's own batch,
// no knee unless batch is swept) and the report flags sweep and gpus
// compare share (item 9).

// convModel writes x → Conv(3→4, 3×3) → Relu with input x of the given
// shape to dir/name: a static batch is ir.D(n), a symbolic one ir.S(sym).
func convModel(t *testing.T, dir, name string, batch ir.Dim) string {
	b := newTestGraph(t, false)
	x := b.input("x", batch, ir.D(3), ir.D(32), ir.D(32))
	y := b.node("Conv", "", "conv", []*ir.Value{x, b.weight("w", 4, 3, 3, 3)}, pads1)
	return b.write(dir, name, b.node("Relu", "", "relu", []*ir.Value{y}))
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestPerItemUsesModelBatch: without --batch, sweep and gpus compare
// divide by the batch the model runs (its static batch, wherever it sits;
// a zoo model's batch parameter; a batch symbol bound by --dim, whatever
// it is called), never by 1.
func TestPerItemUsesModelBatch(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		what  string
		args  []string
		batch int64
	}{
		{"static [4,3,32,32]", []string{convModel(t, dir, "static4.onnx", ir.D(4))}, 4},
		{"symbol N bound by --dim", []string{convModel(t, dir, "n.onnx", ir.S("N")), "--dim", "N=8"}, 8},
		{"zoo batch parameter (default 128)", []string{"zoo:lstm-ptb"}, 128},
		{"zoo batch=-1 bound by --dim", []string{"zoo:lstm-ptb?batch=-1&layers=1", "--dim", "batch=16"}, 16},
		{"static seq-first [32,128] tokens", []string{fixture(t, "lstm_ptb.onnx")}, 128},
		{"static seq-first [20,4,64] into an LSTM", []string{fixture(t, "bilstm.onnx")}, 4},
		{"static [10,2,256] and [7,2,256]", []string{fixture(t, "transformer_seq2seq.onnx")}, 2},
	} {
		var sw sweepJSON
		runJSON(t, &sw, append(append([]string{"sweep"}, tc.args...), "--gpu", "T4", "--format", "json")...)
		var gc sweep.Comparison
		runJSON(t, &gc, append(append([]string{"gpus", "compare"}, tc.args...), "--gpu", "T4", "--price", "T4=0.5", "--format", "json")...)
		if len(sw.Rows) != 1 || len(gc.Rows) != 1 {
			t.Fatalf("%s: %d sweep rows, %d compare rows", tc.what, len(sw.Rows), len(gc.Rows))
		}
		s, c := sw.Rows[0], gc.Rows[0]
		if s.Batch != tc.batch || !near(s.ThroughputPerS, float64(tc.batch)/s.TimeS) {
			t.Errorf("%s: sweep batch %d, throughput %v; want batch %d, %v", tc.what, s.Batch, s.ThroughputPerS, tc.batch, float64(tc.batch)/s.TimeS)
		}
		tp := float64(tc.batch) / c.TimeS
		if gc.Batch != tc.batch || !near(c.ThroughputPerS, tp) || !near(c.EnergyPerItemJ, c.EnergyJ/float64(tc.batch)) ||
			c.USDPerMillion == nil || !near(*c.USDPerMillion, 0.5/3600/tp*1e6) {
			t.Errorf("%s: gpus compare batch %d %+v; want batch %d, throughput %v", tc.what, gc.Batch, c, tc.batch, tp)
		}
	}
	// A lone static rank-3 input is [seq, batch, …] or [batch, seq, …]:
	// the one taken is said, with the other.
	code, out, errs := runCLI(t, "sweep", fixture(t, "transformer_encoder.onnx"), "--gpu", "T4")
	if code != 0 || !strings.Contains(errs, "leading dim of input src [30,1,512] as the batch (30); a sequence-first model's batch is its second dim (1)") ||
		!strings.Contains(out, " 30 ") {
		t.Errorf("seq-first transformer: exit %d, stderr %q\n%s", code, errs, out)
	}
	// The figures at the model's own batch are those --batch gives.
	var own, given sweep.Comparison
	runJSON(t, &own, "gpus", "compare", "zoo:resnet18?batch=4", "--gpu", "T4", "--format", "json")
	runJSON(t, &given, "gpus", "compare", "zoo:resnet18", "--batch", "4", "--gpu", "T4", "--format", "json")
	if own.Batch != 4 || own.Rows[0].ThroughputPerS != given.Rows[0].ThroughputPerS || own.Rows[0].EnergyPerItemJ != given.Rows[0].EnergyPerItemJ {
		t.Errorf("batch=4 in the path %+v, --batch 4 %+v", own.Rows[0], given.Rows[0])
	}
}

// TestSweepKneeOnlyWhenBatchSwept: a sweep at one batch has no knee (JSON
// null, text saying why), also when another dim is swept; a batch swept
// by --batch or by --dim of the batch symbol has one.
func TestSweepKneeOnlyWhenBatchSwept(t *testing.T) {
	dyn := fixture(t, "lstm_ptb_dyn.onnx")
	for _, args := range [][]string{
		{"zoo:resnet18"},
		{convModel(t, t.TempDir(), "static4.onnx", ir.D(4))},
		{dyn, "--dim", "seq=4,8", "--dim", "batch=2"},
	} {
		res := sweepOut(t, append(args, "--gpu", "T4,V100")...)
		for g, k := range res.Knee {
			if k != nil {
				t.Errorf("%v: knee %d on %s with batch not swept", args, *k, g)
			}
		}
		code, out, errs := runCLI(t, append([]string{"sweep"}, append(args, "--gpu", "T4,V100")...)...)
		if code != 0 || strings.Contains(out, "knee at") || strings.Count(out, "no knee: batch not swept") != 2 {
			t.Errorf("%v: exit %d %s\n%s", args, code, errs, out)
		}
	}
	for _, args := range [][]string{
		{"zoo:resnet18", "--batch", "1,8"},
		{dyn, "--dim", "batch=1,8", "--dim", "seq=4"},
	} {
		res := sweepOut(t, append(args, "--gpu", "T4")...)
		if res.Knee["T4"] == nil {
			t.Errorf("%v: no knee with batch swept", args)
		}
	}
}

// TestSweepAndCompareTakeReportFlags: sweep takes report's --runtime,
// --gpus, --power-cap and --sm-clock, gpus compare the same, each giving
// the time report gives with that flag and moving it the way it should;
// bad values are refused as report refuses them.
func TestSweepAndCompareTakeReportFlags(t *testing.T) {
	const model, gpu = "zoo:resnet18", "A100-SXM4-80GB"
	reportTotals := func(args ...string) (time, energy float64) {
		var r struct {
			Totals struct {
				TimeS   float64 `json:"time_s"`
				EnergyJ float64 `json:"energy_j"`
			} `json:"totals"`
		}
		runJSON(t, &r, append([]string{"report", model, "--gpu", gpu, "--batch", "8", "--format", "json"}, args...)...)
		return r.Totals.TimeS, r.Totals.EnergyJ
	}
	base, _ := reportTotals()
	for _, tc := range []struct {
		flag   []string
		slower bool // else: faster
	}{
		{[]string{"--runtime", "pytorch"}, true},
		{[]string{"--power-cap", "150"}, true},
		{[]string{"--sm-clock", "600"}, true},
		{[]string{"--gpus", "2"}, false},
	} {
		want, energy := reportTotals(tc.flag...)
		if want > base != tc.slower || want == base {
			t.Fatalf("report %v: %v s against %v s by default", tc.flag, want, base)
		}
		sw := sweepOut(t, append([]string{model, "--gpu", gpu, "--batch", "8"}, tc.flag...)...)
		var gc sweep.Comparison
		runJSON(t, &gc, append([]string{"gpus", "compare", model, "--gpu", gpu, "--batch", "8", "--price", gpu + "=2", "--format", "json"}, tc.flag...)...)
		if sw.Rows[0].TimeS != want || gc.Rows[0].TimeS != want {
			t.Errorf("%v: sweep %v s, gpus compare %v s, report %v s", tc.flag, sw.Rows[0].TimeS, gc.Rows[0].TimeS, want)
		}
		// A tensor-parallel row is a group: its energy and price are
		// every GPU's (a report's energy_j is one GPU's).
		n := 1.0
		if tc.flag[0] == "--gpus" {
			n = 2
			if gc.GPUs != 2 {
				t.Errorf("--gpus 2: gpus compare says gpus %d", gc.GPUs)
			}
		}
		c := gc.Rows[0]
		if !near(c.EnergyJ, n*energy) || !near(*c.USDPerMillion, n*2/3600/(8/want)*1e6) {
			t.Errorf("%v: energy %v J (report %v J per GPU), USD per million %v", tc.flag, c.EnergyJ, energy, *c.USDPerMillion)
		}
	}
	for _, bad := range [][]string{{"--gpus", "0"}, {"--runtime", "nope"}, {"--power-cap", "5"}, {"--sm-clock", "99999"}} {
		for _, cmd := range [][]string{{"sweep", model, "--gpu", gpu + ",T4", "--batch", "1,2"}, {"gpus", "compare", model, "--gpu", gpu + ",T4"}} {
			code, out, errs := runCLI(t, append(cmd, bad...)...)
			if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, bad[0]) {
				t.Errorf("%v %v: exit %d, stdout %q, stderr %q; want exit 2, one line naming %s", cmd[:2], bad, code, out, errs, bad[0])
			}
		}
	}
}
