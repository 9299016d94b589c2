package passes

import (
	"slices"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// padOpts builds a Pad read by one reader; each field breaks one guard.
type padOpts struct {
	reader     string  // "AveragePool" (default), "Conv", "MaxPool"
	pads       []int64 // default: 1 on each side of H and W
	value      float64
	mode       string
	readerPads []int64 // the reader's own pads (default 0)
	countPad   int64   // AveragePool's count_include_pad
	ceil       bool    // AveragePool's ceil_mode 1
	twoReaders bool
	asOutput   bool
	noPadsAttr bool // the reader has no pads attribute
}

// padGraph is torch.onnx's avg_pool2d(x, 3, 1, padding=1): a zero Pad of
// H and W, then an AveragePool without pads (or the reader o names).
func padGraph(b *builder, o padOpts) *ir.Value {
	if o.pads == nil {
		o.pads = []int64{0, 0, 1, 1, 0, 0, 1, 1}
	}
	if o.readerPads == nil {
		o.readerPads = []int64{0, 0, 0, 0}
	}
	x := b.input("x", 2, 3, 6, 6)
	pads := b.value("pads")
	b.g.AddInitializer(pads, ir.IntTensor([]int64{8}, o.pads))
	ins := []*ir.Value{x, pads}
	if o.value != 0 {
		ins = append(ins, b.constant("value", nil, []float64{o.value}))
	}
	var attrs []*ir.Attribute
	if o.mode != "" {
		attrs = append(attrs, ir.StringAttr("mode", o.mode))
	}
	p := b.op("Pad", attrs, ins...)
	window := []*ir.Attribute{ir.IntsAttr("kernel_shape", 3, 3), ir.IntsAttr("strides", 1, 1)}
	if !o.noPadsAttr {
		window = append(window, ir.IntsAttr("pads", o.readerPads...))
	}
	var y *ir.Value
	switch o.reader {
	case "Conv":
		y = b.op("Conv", window[2:], p, b.weight("w", 4, 3, 3, 3))
	case "MaxPool":
		y = b.op("MaxPool", window, p)
	default:
		if o.countPad != 0 {
			window = append(window, ir.IntAttr("count_include_pad", o.countPad))
		}
		if o.ceil { // a stride-2 window over 8 padded columns hangs past them
			window[1] = ir.IntsAttr("strides", 2, 2)
			window = append(window, ir.IntAttr("ceil_mode", 1))
		}
		y = b.op("AveragePool", window, p)
	}
	b.output(y)
	if o.twoReaders {
		b.output(b.op("Relu", nil, p))
	}
	if o.asOutput {
		b.output(p)
	}
	return y
}

// TestFoldPad: each variant takes the Pad into the readers its runtime
// folds it into, the reader's output unchanged (the reference evaluator's
// numbers before and after), and leaves the others.
func TestFoldPad(t *testing.T) {
	for _, c := range []struct {
		pass, reader string
		folds        bool
	}{
		{"fold-pad", "AveragePool", true},
		{"fold-pad", "Conv", true},
		{"fold-pad", "MaxPool", false}, // its padding is −∞, not 0
		{"fold-pad-ort", "AveragePool", true},
		{"fold-pad-ort", "Conv", true},
		{"fold-pad-ort", "MaxPool", true}, // onnxruntime's PadFusion takes it
		{"fold-pad-pool", "AveragePool", true},
		{"fold-pad-pool", "Conv", false}, // an F.pad kernel in PyTorch
	} {
		t.Run(c.pass+"/"+c.reader, func(t *testing.T) {
			b := newBuilder(t)
			padGraph(b, padOpts{reader: c.reader})
			g := b.infer()
			if c.folds && c.reader != "MaxPool" {
				checkPreservesExact(t, g, c.pass)
			} else {
				runPasses(t, g, c.pass)
			}
			if got := find(g, "Pad") == nil; got != c.folds {
				t.Fatalf("folded %v, want %v: %s", got, c.folds, ops(g))
			}
			r := find(g, c.reader)
			if pads, _ := r.AttrInts("pads"); c.folds && !slices.Equal(pads, []int64{1, 1, 1, 1}) {
				t.Errorf("%s pads %v, want the Pad's [1 1 1 1]", c.reader, pads)
			}
			if c.folds && c.reader == "AveragePool" && r.AttrInt("count_include_pad", 0) != 1 {
				t.Errorf("AveragePool count_include_pad %d, want 1: the folded zeros count", r.AttrInt("count_include_pad", 0))
			}
		})
	}
}

// TestFoldPadDeclines: a Pad that is not the reader's own zero padding
// stays a kernel.
func TestFoldPadDeclines(t *testing.T) {
	cases := guardCases(padGraph, map[string]padOpts{
		"nonzero value":                 {value: 1},
		"reflect mode":                  {mode: "reflect"},
		"channel axis padded":           {pads: []int64{0, 1, 1, 1, 0, 0, 1, 1}},
		"negative pad (a crop)":         {pads: []int64{0, 0, -1, 0, 0, 0, 1, 1}},
		"another reader":                {twoReaders: true},
		"graph output":                  {asOutput: true},
		"pool pads excluded from count": {readerPads: []int64{1, 1, 1, 1}},
		// count_include_pad 1 would count a ceil_mode window's overhang
		// too under onnxruntime, not under PyTorch (TestRefEvalAveragePoolCeilOverhang).
		"ceil-mode pool counting no padding": {ceil: true},
		"pool without a pads attribute":      {noPadsAttr: true, reader: "MaxPool"},
		"maxpool under the exact fold":       {reader: "MaxPool"},
		"conv under the PyTorch plans":       {reader: "Conv"},
	})
	for _, pass := range []string{"fold-pad", "fold-pad-ort", "fold-pad-pool"} {
		t.Run(pass, func(t *testing.T) {
			checkGuards(t, cases, []string{pass}, func(t *testing.T, g *ir.Graph) {
				name := t.Name()
				switch {
				case pass == "fold-pad-ort" && (slices.Contains([]string{"maxpool_under_the_exact_fold", "conv_under_the_PyTorch_plans"}, lastPart(name))),
					pass == "fold-pad" && lastPart(name) == "conv_under_the_PyTorch_plans":
					return // these do fold under this variant (TestFoldPad)
				}
				if find(g, "Pad") == nil {
					t.Errorf("%s folded the Pad: %s", pass, ops(g))
				}
			})
		})
	}
}

// lastPart is the last element of a subtest name.
func lastPart(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[i+1:]
		}
	}
	return name
}
