package ir

import (
	"strings"
	"testing"
)

// TestSymbolicExprCapped: Concat(x, x) doubles its dim's expression text
// ("n" -> "n+n"), so a chain of them grew the symbol exponentially (40
// nodes took 35 s and 23 GB before the cap). Every inferred symbol must
// stay short, and two dims built by the same arithmetic must stay equal:
// the Add of a tensor with itself still infers.
func TestSymbolicExprCapped(t *testing.T) {
	const doublings = 24 // 2^24 terms uncapped: a 30 MB string
	b := newTB(t, 13)
	y := b.in(Float32, "n")
	for range doublings {
		y = b.op1("Concat", []*Value{y, y}, tbI("axis", 0))
	}
	z := b.op1("Add", []*Value{y, y})
	b.mustInfer()
	for _, v := range []*Value{y, z} {
		if v.Shape.Rank() != 1 {
			t.Fatalf("%s: %s, want rank 1", v.Name, tbType(v))
		}
		if s := v.Shape.Dims[0].Sym; s == "" || len(s) > maxSymLen {
			t.Errorf("%s: dim symbol of %d bytes, want 1 to %d", v.Name, len(s), maxSymLen)
		}
	}
	if !y.Shape.Equal(z.Shape) {
		t.Errorf("Add of y with itself: %s, want y's %s", tbType(z), tbType(y))
	}
	// Short expressions are unchanged: readable as before.
	if d := AddDim(S("n"), S("n")); d.Sym != "n+n" {
		t.Errorf("AddDim(n, n) = %s, want n+n", d)
	}
	if d := AddDim(S(strings.Repeat("a", maxSymLen)), D(1)); !strings.HasPrefix(d.Sym, "?expr_") {
		t.Errorf("AddDim of a %d-byte symbol = %q, want a ?expr_ stand-in", maxSymLen, d.Sym)
	}
}
