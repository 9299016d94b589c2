package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/sweep"
)

// sweepJSON is what these tests decode `sweep --format json` into.
type sweepJSON = sweep.Result

// sweepOut runs `sweep ... --format json` and decodes it.
func sweepOut(t *testing.T, args ...string) *sweepJSON {
	t.Helper()
	var res sweepJSON
	runJSON(t, &res, append([]string{"sweep"}, append(args, "--format", "json")...)...)
	return &res
}

// gpuWithMemory writes a GPU file: V100's figures under the name name,
// with memBytes of memory.
// The board is given the default runtime's memory floor on top, and a
// CUDA-visible total equal to its size, so that exactly memBytes is
// usable by the model.
func gpuWithMemory(t *testing.T, name string, memBytes float64) string {
	t.Helper()
	var g map[string]any
	runJSON(t, &g, "gpus", "show", "V100", "--format", "json")
	rt, err := hwdb.LookupRuntime(hwdb.DefaultRuntime)
	if err != nil {
		t.Fatal(err)
	}
	total := memBytes + rt.MemoryFloor()
	g["name"], g["mem_bytes"], g["cuda_mem_bytes"] = name, total, total
	delete(g, "aliases")
	data, _ := json.Marshal(g)
	p := filepath.Join(t.TempDir(), "gpu.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSweepFindMaxBatchExact: with a GPU whose memory is exactly the peak
// at batch B, --find-max-batch returns B (it fits at B, not at B+1), for
// a file model with a symbolic batch and for a zoo model.
func TestSweepFindMaxBatchExact(t *testing.T) {
	for _, tc := range []struct {
		model string
		B     int64
	}{{fixture(t, "gpt_small.onnx"), 37}, {"zoo:resnet18", 100}} {
		at := sweepOut(t, tc.model, "--gpu", "V100", "--batch", "100,37")
		var peak, next float64
		for _, r := range at.Rows {
			if r.Batch == tc.B {
				peak = r.PeakMemoryBytes
			}
		}
		after := sweepOut(t, tc.model, "--gpu", "V100", "--batch", itoa64(tc.B+1))
		next = after.Rows[0].PeakMemoryBytes
		if !(next > peak) {
			t.Fatalf("%s: peak at B+1 (%v) not above peak at B (%v)", tc.model, next, peak)
		}
		gf := gpuWithMemory(t, "Exact", peak)
		res := sweepOut(t, tc.model, "--gpu", "Exact", "--gpu-file", gf, "--batch", "1.."+itoa64(256), "--find-max-batch")
		mb := res.MaxBatch["Exact"]
		if mb == nil || *mb != tc.B {
			t.Errorf("%s: max batch %v, want %d", tc.model, mb, tc.B)
		}
		// Rows past the limit are kept and marked.
		var over int
		for _, r := range res.Rows {
			if r.Batch > tc.B && r.Fits || r.Batch <= tc.B && !r.Fits {
				t.Errorf("%s: batch %d fits=%v with max %d", tc.model, r.Batch, r.Fits, tc.B)
			}
			if !r.Fits {
				over++
			}
		}
		if over == 0 || len(res.Rows) != 9 {
			t.Errorf("%s: %d rows, %d past the limit; want 9 rows, some past it", tc.model, len(res.Rows), over)
		}
		// One byte less and batch B no longer fits.
		gf = gpuWithMemory(t, "Exact", peak-1)
		res = sweepOut(t, tc.model, "--gpu", "Exact", "--gpu-file", gf, "--find-max-batch")
		if mb := res.MaxBatch["Exact"]; mb == nil || *mb != tc.B-1 {
			t.Errorf("%s: one byte short: max batch %v, want %d", tc.model, mb, tc.B-1)
		}
	}
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

// TestSweepRowsAndKnee: rows come per GPU in the order asked, throughput
// is batch / time, and the knee is the smallest batch at 90% of the best.
func TestSweepRowsAndKnee(t *testing.T) {
	res := sweepOut(t, "zoo:resnet18", "--gpu", "T4,V100", "--batch", "1..64")
	if len(res.Rows) != 14 || res.Rows[0].GPU != "T4" || res.Rows[7].GPU != "V100-SXM2-16GB" {
		t.Fatalf("rows: %d, first %s", len(res.Rows), res.Rows[0].GPU)
	}
	for _, g := range []string{"T4", "V100-SXM2-16GB"} {
		best := 0.0
		for _, r := range res.Rows {
			if r.GPU == g {
				if d := r.ThroughputPerS - float64(r.Batch)/r.TimeS; d > 1e-9*r.ThroughputPerS || d < -1e-9*r.ThroughputPerS {
					t.Errorf("%s batch %d: throughput %v, batch/time %v", g, r.Batch, r.ThroughputPerS, float64(r.Batch)/r.TimeS)
				}
				best = max(best, r.ThroughputPerS)
			}
		}
		k := res.Knee[g]
		if k == nil {
			t.Fatalf("%s: no knee", g)
		}
		for _, r := range res.Rows {
			if r.GPU != g {
				continue
			}
			if r.Batch == *k && r.ThroughputPerS < 0.9*best || r.Batch < *k && r.ThroughputPerS >= 0.9*best {
				t.Errorf("%s: knee %d wrong at batch %d (%v of best %v)", g, *k, r.Batch, r.ThroughputPerS, best)
			}
		}
	}
}

// TestSweepJSONSchema: sweep output validates against sweep.schema.json,
// with and without --find-max-batch, --param and --fit.
func TestSweepJSONSchema(t *testing.T) {
	rs := resolveSchema(t, sweep.Schema)
	for _, args := range [][]string{
		{"zoo:alexnet", "--gpu", "V100,P4", "--batch", "1,4", "--find-max-batch"},
		{"zoo:lstm-ptb", "--gpu", "V100", "--param", "hidden=128,256,512", "--param", "embed=hidden", "--fit", "quadratic"},
		{fixture(t, "lstm_ptb_dyn.onnx"), "--gpu", "T4", "--dim", "batch=1,2", "--dim", "seq=4"},
		{"zoo:alexnet", "zoo:vgg11", "--gpu", "T4", "--batch", "1,2", "--train"},
	} {
		checkOutput(t, rs, "sweep/sweep.schema.json", append(append([]string{"sweep"}, args...), "--format", "json")...)
	}
}

// TestSweepDeterministic: the same sweep twice gives byte-identical JSON,
// text and SVG.
func TestSweepDeterministic(t *testing.T) {
	dir := t.TempDir()
	var outs [2]string
	var svgs [2][]byte
	for i := range outs {
		p := filepath.Join(dir, "s"+itoa64(int64(i))+".svg")
		code, out, errs := runCLI(t, "sweep", "zoo:resnet18", "--gpu", "V100,P4", "--batch", "1..4096", "--find-max-batch", "-o", p)
		if code != 0 {
			t.Fatal(errs)
		}
		outs[i] = out
		svgs[i], _ = os.ReadFile(p)
	}
	if outs[0] != outs[1] || !bytes.Equal(svgs[0], svgs[1]) || len(svgs[0]) == 0 {
		t.Fatal("two runs differ (or no chart)")
	}
	if !strings.Contains(outs[0], "NO") || !strings.Contains(outs[0], "largest batch that fits") {
		t.Errorf("text output lacks the past-the-limit mark or the max batch:\n%s", outs[0])
	}
}

// TestSweepBadInput: bad lists, flags and models are one-line errors,
// exit 2, no output.
func TestSweepBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"zoo:alexnet", "--gpu", "V100", "--batch", "3..8"},
		{"zoo:alexnet", "--gpu", "V100", "--batch", "0"},
		{"zoo:alexnet", "--batch", "1"},
		{"zoo:alexnet", "--gpu", "V100,nope"},
		{"zoo:alexnet", "--gpu", "V100,V100"},
		{"zoo:alexnet?batch=2", "--gpu", "V100", "--batch", "1,2"},
		{fixture(t, "alexnet.onnx"), "--gpu", "V100", "--param", "hidden=1,2"},
		{"zoo:lstm-ptb", "--gpu", "V100", "--param", "hidden=1,2", "--param", "embed=nosuch"},
		{"zoo:lstm-ptb", "--gpu", "V100", "--param", "hidden=1,2", "--batch", "1,2", "--fit", "linear"},
		{"zoo:lstm-ptb", "--gpu", "V100", "--param", "hidden=1,2", "--fit", "cubic"},
		{"zoo:alexnet", "--gpu", "V100", "--fit", "linear", "--fit-x", "batch"},
		{"zoo:alexnet", "--gpu", "V100", "-o", "x.gif"},
		{"zoo:alexnet", "--gpu", "V100", "--dim", "seq=1,2", "--batch", "1,2", "--find-max-batch"},
		{"zoo:synthetic", "--gpu", "V100", "--batch", "1,2"},
		{fixture(t, "bert_base.onnx"), "--gpu", "V100", "--dim", "sequence=64,128"},
	} {
		code, out, errs := runCLI(t, append([]string{"sweep"}, args...)...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, one line", args, code, out, errs)
		}
	}
}

// TestSweepStaticBatch: a static batch-1 export sweeps by batch as
// report --batch prices it (its leading 1 rewritten), with the rewrite's
// warning said once for every batch.
func TestSweepStaticBatch(t *testing.T) {
	model := fixture(t, "alexnet.onnx")
	code, out, errs := runCLI(t, "sweep", model, "--gpu", "V100", "--batch", "1,2,4", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(errs, "static batch dim of 1"); n != 1 || !strings.Contains(errs, "rewrote it to each batch") {
		t.Errorf("want the rewrite said once for every batch, got %d times:\n%s", n, errs)
	}
	var res struct {
		Rows []struct {
			Batch int64   `json:"batch"`
			TimeS float64 `json:"time_s"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 || !(res.Rows[2].TimeS > res.Rows[0].TimeS) {
		t.Fatalf("rows %+v: want three, time growing with batch", res.Rows)
	}
	code, rout, rerrs := runCLI(t, "report", model, "--gpu", "V100", "--batch", "4", "--format", "json")
	if code != 0 {
		t.Fatalf("report exit %d: %s", code, rerrs)
	}
	var rep struct {
		Totals struct {
			TimeS float64 `json:"time_s"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(rout), &rep); err != nil {
		t.Fatal(err)
	}
	if res.Rows[2].Batch != 4 || res.Rows[2].TimeS != rep.Totals.TimeS {
		t.Errorf("sweep batch %d: %g s; report --batch 4: %g s", res.Rows[2].Batch, res.Rows[2].TimeS, rep.Totals.TimeS)
	}
	// Loaded at its own batch first, the export still sweeps.
	if code, out, errs := runCLI(t, "sweep", model, "--gpu", "V100", "--find-max-batch"); code != 0 || !strings.Contains(out, "largest batch that fits") {
		t.Errorf("--find-max-batch: exit %d\n%s%s", code, out, errs)
	}
}

// TestSweepProgressSilentInPipes: a sweep's captured stderr (a pipe or
// CI log) holds no progress text.
func TestSweepProgressSilentInPipes(t *testing.T) {
	code, _, errs := runCLI(t, "sweep", "zoo:alexnet", "--gpu", "V100", "--batch", "1,2")
	if code != 0 || strings.Contains(errs, "\r") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

// TestSweepAllGPUs: `--gpu all` sweeps every GPU of the database, in its
// order, as `gpus compare --gpu all` compares them, and the warning every
// fp32-to-TF32 board repeats is said once.
func TestSweepAllGPUs(t *testing.T) {
	res := sweepOut(t, "zoo:resnet18", "--gpu", "all", "--batch", "1")
	all := hwdb.All()
	if len(res.Rows) != len(all) {
		t.Fatalf("%d rows, want one per GPU (%d)", len(res.Rows), len(all))
	}
	for i, g := range all {
		if res.Rows[i].GPU != g.Name {
			t.Fatalf("row %d is %s, want %s", i, res.Rows[i].GPU, g.Name)
		}
	}
	n := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, "TF32") {
			n++
			if !strings.Contains(w, "(the same on ") {
				t.Errorf("TF32 warning not merged: %q", w)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d TF32 warnings, want 1: %q", n, res.Warnings)
	}
}

// TestSweepAllLeavesOutWhatACapExcludes: with --gpu all, a power cap or
// clock lock that some GPUs cannot be set to leaves those out, named in
// one warning, and prices the rest under it; a cap no GPU takes, a value
// no GPU takes and a named GPU that cannot take it stay errors.
func TestSweepAllLeavesOutWhatACapExcludes(t *testing.T) {
	res := sweepOut(t, "zoo:resnet18", "--gpu", "all", "--batch", "1", "--power-cap", "300")
	var left []string
	for _, g := range hwdb.All() {
		if g.TDPWatts < 300 || g.MinPowerW > 300 {
			left = append(left, g.Name)
		}
	}
	if len(left) == 0 || len(res.Rows) != len(hwdb.All())-len(left) {
		t.Fatalf("%d rows, %d GPUs left out of %d", len(res.Rows), len(left), len(hwdb.All()))
	}
	for _, r := range res.Rows {
		if slices.Contains(left, r.GPU) {
			t.Errorf("%s priced at 300 W", r.GPU)
		}
	}
	n := 0
	for _, w := range res.Warnings {
		if strings.HasPrefix(w, "--gpu all: --power-cap 300 W") {
			n++
			if !strings.HasSuffix(w, "left out: "+strings.Join(left, ", ")) {
				t.Errorf("warning %q: want it to name %v", w, left)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d warnings about the cap, want 1: %q", n, res.Warnings)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--gpu", "all", "--power-cap", "5000"}, "--gpu all: --power-cap 5000 W fits none of the"},
		{[]string{"--gpu", "all", "--power-cap", "-5"}, "--power-cap -5: want a positive number of watts"},
		{[]string{"--gpu", "T4,H100-SXM5-80GB", "--power-cap", "300"}, "--power-cap 300 W: outside T4's power limit range"},
	} {
		code, out, errs := runCLI(t, append([]string{"sweep", "zoo:resnet18", "--batch", "1"}, c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want 2 and %q", c.args, code, out, errs, c.want)
		}
	}
}
