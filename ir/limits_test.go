package ir

import (
	"strings"
	"testing"
)

// TestCountedShapesAccepted: a shape that is only counted may hold far
// more than MaxElements elements (LLaMA-70B at batch 64 and 2^20 tokens
// has 2^52-element attention scores); it is inferred, and nothing of that
// size is materialised.
func TestCountedShapesAccepted(t *testing.T) {
	b := newTB(t, 17)
	q := b.in(Float32, 64, 64, 1<<20, 128)
	k := b.in(Float32, 64, 64, 128, 1<<20)
	scores := b.op1("MatMul", []*Value{q, k})
	// A constant expanded to 2^90 elements would be folded if it were
	// small; at this size it must stay a counted shape.
	huge := b.op1("Expand", []*Value{b.floats([]int64{1}, 1.5), b.vec(1<<30, 1<<30, 1<<30)})
	filled := b.op1("ConstantOfShape", []*Value{b.vec(1<<30, 1<<30, 1<<30)})
	b.mustInfer()
	if got := tbType(scores); got != "float32[64,64,1048576,1048576]" {
		t.Errorf("scores: %s", got)
	}
	for _, v := range []*Value{huge, filled} {
		if got := tbType(v); got != "float32["+strings.Repeat("1073741824,", 2)+"1073741824]" {
			t.Errorf("%s: %s", v.Name, got)
		}
		if v.Const != nil || v.SymInts != nil {
			t.Errorf("%s: a 2^90-element value was materialised", v.Name)
		}
	}
}

// TestHostileShapesRefused: what would be materialised, or a count past
// float64's comfortable range, is still refused with the node's name.
func TestHostileShapesRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(b *tbModel)
		want  string
	}{
		{"2^62 dim from a constant", func(b *tbModel) {
			b.op1("Expand", []*Value{b.floats([]int64{1}, 1), b.vec(1 << 62)})
		}, "exceeds the limit"},
		{"2^62 ConstantOfShape", func(b *tbModel) {
			b.op1("ConstantOfShape", []*Value{b.vec(4, 1<<62)})
		}, "exceeds the limit"},
		{"count past MaxCountedElements", func(b *tbModel) {
			b.op1("ConstantOfShape", []*Value{b.vec(1<<40, 1<<40, 1<<40)})
		}, "elements"},
		{"negative dim", func(b *tbModel) {
			b.op1("ConstantOfShape", []*Value{b.vec(3, -2)})
		}, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newTB(t, 17)
			tc.build(b)
			err := b.infer()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "node ") {
				t.Errorf("error %q does not name the node", err)
			}
		})
	}
}

// TestReaderStillBoundsFileTensors: a tensor in the file is bounded by
// MaxElements even though inferred shapes are not.
func TestReaderStillBoundsFileTensors(t *testing.T) {
	r := &reader{lim: &DefaultLimits}
	r.push("initializer", 0)
	if _, err := r.checkDims([]int64{1 << 30, 1 << 30}); err == nil || !strings.Contains(err.Error(), "elements") {
		t.Fatalf("2^60-element file tensor: got %v, want refused", err)
	}
}
