package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/onnxcost/onnxcost/internal/console"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// hostileModel writes b's model to dir/name and returns the path.
func hostileModel(t *testing.T, b *irtest.Builder, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := ir.WriteFile(p, b.M); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantRefusal runs args and wants exit 2 with one stderr line of at most
// 1,000 bytes that names path and contains want.
func wantRefusal(t *testing.T, path, want string, args ...string) {
	t.Helper()
	code, _, errs := runCLI(t, args...)
	line := strings.TrimSuffix(errs, "\n")
	switch {
	case code != 2:
		t.Errorf("%s: exit %d, want 2 (stderr %.300q)", strings.Join(args, " "), code, errs)
	case strings.Contains(line, "\n") || len(errs) > 1000:
		t.Errorf("%s: stderr is not one bounded line (%d bytes): %.300q", strings.Join(args, " "), len(errs), errs)
	case !strings.Contains(line, filepath.Base(path)) || !strings.Contains(line, want):
		t.Errorf("%s: got %q, want the file and %q", strings.Join(args, " "), line, want)
	}
}

func TestErrorLineBounded(t *testing.T) {
	b := irtest.New(t, 17)
	x := b.Input("x", ir.Float32, 2, 3)
	n := b.Node("Relu", []*ir.Value{x, x, x}, 1)
	n.Name = strings.Repeat("N", 100_000)
	b.Output(n.Out(0))
	p := hostileModel(t, b, "longname.onnx")
	wantRefusal(t, p, "(100000 bytes): has 3 inputs", "report", p)

	// A 100 kB op type has no shape rule: warnings, each bounded.
	b = irtest.New(t, 17)
	b.Output(b.Op(strings.Repeat("O", 100_000), nil, b.Input("x", ir.Float32, 2, 3)))
	p = hostileModel(t, b, "longop.onnx")
	code, _, errs := runCLI(t, "report", p)
	if code != 0 {
		t.Fatalf("report of an unknown op: exit %d: %.300s", code, errs)
	}
	for _, line := range strings.Split(strings.TrimSuffix(errs, "\n"), "\n") {
		if len(line) > 1000 {
			t.Errorf("warning line of %d bytes: %.200s", len(line), line)
		}
	}

	// Whatever builds the message, the printed line is bounded, keeps
	// both ends and stays valid UTF-8.
	msg := "m.onnx: " + strings.Repeat("é", 60_000) + " (re-export it)"
	got := console.OneLine(msg)
	if len(got) > console.MaxLine || !strings.HasPrefix(got, "m.onnx: ") || !strings.HasSuffix(got, "(re-export it)") || !utf8.ValidString(got) {
		t.Errorf("OneLine of %d bytes: %d bytes, %.80q … %.80q", len(msg), len(got), got, got[max(0, len(got)-80):])
	}
	if short := "m.onnx: bad"; console.OneLine(short) != short {
		t.Errorf("a short line changed: %q", console.OneLine(short))
	}
}

// A static model that is also malformed is named as malformed: refusing
// --batch for being static would send the user to re-export it.
func TestStaticModelDefectFirst(t *testing.T) {
	for _, lead := range []int64{1, 4} {
		b := irtest.New(t, 17)
		b.Output(b.Op("MatMul", nil, b.Input("x", ir.Float32, lead, 3), b.Input("w", ir.Float32, 5, 7)))
		p := hostileModel(t, b, "static"+strconv.FormatInt(lead, 10)+".onnx")
		const want = `MatMul node "MatMul_1": inner dims differ`
		wantRefusal(t, p, want, "report", p, "--batch", "2")
		wantRefusal(t, p, want, "sweep", p, "--batch", "1,2", "--gpu", "A100-SXM4-80GB")
		budget := filepath.Join(filepath.Dir(p), "budget.yaml")
		yaml := "version: 1\ndefaults:\n  gpu: A100-SXM4-80GB\nmodels:\n  - path: " + filepath.Base(p) + "\n    batch: 1\n    budgets:\n      time: 1ms\n"
		if err := os.WriteFile(budget, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		wantRefusal(t, p, want, "check", "-c", budget)
	}
}

// --dim seq=N on a zoo model builds it at that length, so it must not
// also warn that the binding matched nothing.
func TestZooSeqDimApplies(t *testing.T) {
	code, out, errs := runCLI(t, "report", "zoo:gpt2-small", "--dim", "seq=64")
	if code != 0 || strings.Contains(errs, "matches no") || !strings.Contains(out, "seq=64") {
		t.Errorf("exit %d, stderr %q, header %.200q", code, errs, out)
	}
	code, _, errs = runCLI(t, "report", "zoo:gpt2-small?seq=128", "--dim", "seq=64")
	if code != 2 || !strings.Contains(errs, "--dim seq=64 conflicts with seq=128") {
		t.Errorf("conflicting seq: exit %d, stderr %q", code, errs)
	}
}

func TestIllTypedModelsRefused(t *testing.T) {
	relu := func(opset int64) *irtest.Builder {
		b := irtest.New(t, 17)
		b.M.Opsets = []ir.OpsetImport{{Domain: "", Version: opset}}
		b.Output(b.Op("Relu", nil, b.Input("x", ir.Float32, 2, 3)))
		return b
	}
	p := hostileModel(t, relu(0), "opset0.onnx")
	wantRefusal(t, p, "imports ai.onnx opset 0", "report", p)
	p = hostileModel(t, relu(99), "opset99.onnx")
	wantRefusal(t, p, "imports ai.onnx opset 99, newer than the newest opset known here", "report", p)
	for _, dt := range []ir.DType{ir.String, ir.Bool} {
		b := irtest.New(t, 17)
		b.Output(b.Op("MatMul", nil, b.Input("a", dt, 4, 4), b.Input("b", dt, 4, 4)))
		p := hostileModel(t, b, "matmul.onnx")
		wantRefusal(t, p, "is a "+dt.String()+" tensor; MatMul takes numbers", "report", p)
	}
}

// Drawings of a huge model degrade, say so once, and finish in seconds.
func TestHugeDrawingsDegrade(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 200,000-node model")
	}
	const n = 200_000
	b := irtest.New(t, 17)
	x := b.Input("x", ir.Float32, 1, 16)
	for i := 0; i < n; i++ {
		x = b.Op("Relu", nil, x)
	}
	b.Output(x)
	p := hostileModel(t, b, "chain.onnx")
	dir := filepath.Dir(p)
	for _, tc := range []struct {
		args    []string
		out     string
		note    string
		maxSize int64
	}{
		{[]string{"graph", "-o"}, "g.dot", "", 1 << 20},
		{[]string{"roofline", "-o"}, "r.svg", "--full draws both plans", 2 << 20},
		{[]string{"html", "-o"}, "h.html", "--full shows both plans", 4 << 20},
	} {
		out := filepath.Join(dir, tc.out)
		args := append([]string{tc.args[0], p, "--gpu", "A100-SXM4-80GB"}, tc.args[1:]...)
		args = append(args, out)
		start := time.Now()
		code, _, errs := runCLI(t, args...)
		took := time.Since(start)
		if code != 0 {
			t.Fatalf("%s: exit %d: %.300s", tc.args[0], code, errs)
		}
		if tc.note != "" && (strings.Count(errs, "onnxcost: note: the model has 200000 nodes") != 1 || !strings.Contains(errs, tc.note)) {
			t.Errorf("%s: want one note saying how to force the full view, got %q", tc.args[0], errs)
		}
		st, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > tc.maxSize {
			t.Errorf("%s: wrote %d bytes, want at most %d", tc.args[0], st.Size(), tc.maxSize)
		}
		if took > 30*time.Second {
			t.Errorf("%s took %v", tc.args[0], took)
		}
		t.Logf("%s: %v, %d bytes", tc.args[0], took.Round(time.Millisecond), st.Size())
	}
}

// A node with more outputs than the threshold is huge too: a
// 300,000-output Split took html 78 s and 1.85 GB.
func TestWideSplitDegrades(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 25,000-output model")
	}
	const n = 25_000
	b := irtest.New(t, 17)
	split := b.Node("Split", []*ir.Value{b.Input("x", ir.Float32, n, 4)}, n)
	b.Output(split.Outputs...)
	p := hostileModel(t, b, "split.onnx")
	out := filepath.Join(filepath.Dir(p), "s.html")
	code, _, errs := runCLI(t, "html", p, "--gpu", "A100-SXM4-80GB", "-o", out)
	if code != 0 || !strings.Contains(errs, "writing 25000 tensors") || !strings.Contains(errs, "--full") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if st, err := os.Stat(out); err != nil {
		t.Error(err)
	} else if st.Size() > 4<<20 {
		t.Errorf("page of %d bytes", st.Size())
	}
	code, dot, _ := runCLI(t, "graph", p, "--gpu", "A100-SXM4-80GB")
	if code != 0 || len(dot) > 1<<20 || !strings.Contains(dot, "more graph outputs") {
		t.Errorf("graph: exit %d, %d bytes of DOT", code, len(dot))
	}
}
