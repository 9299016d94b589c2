package ir

import "testing"

// TestPartCountExpr: a part's count is written over the fused node's own
// dims, so it follows a re-binding; what no input or output carries is
// "?" rather than a frozen number.
func TestPartCountExpr(t *testing.T) {
	x := &Value{Shape: RankedShape(S("batch"), S("seq"), D(768))}
	y := &Value{Shape: RankedShape(S("batch"), S("seq"), D(768))}
	ins, outs := []*Value{x}, []*Value{y}
	cases := []struct {
		s    Shape
		want string
	}{
		{RankedShape(S("batch"), S("seq"), D(1)), "1*i0.0*i0.1"},                  // a ReduceMean row
		{RankedShape(S("batch*12"), S("seq"), D(64)), "768*i0.0*i0.1"},            // a head-split reshape
		{RankedShape(S("batch"), D(12), S("seq"), S("seq")), "12*i0.0*i0.1*i0.1"}, // scores
		{KnownShape(2, 3), "6"},
		{Unranked(), "?"},
		{RankedShape(S("?nonzero_0")), "?"},
		{RankedShape(S("seq+1")), "?"},
	}
	for _, c := range cases {
		got := PartCountExpr(c.s, ins, outs)
		if got != c.want {
			t.Errorf("PartCountExpr(%s) = %q, want %q", c.s, got, c.want)
		}
	}
	// Re-bound: the same expressions on a node whose dims are now known.
	n := &Node{Inputs: []*Value{{Shape: KnownShape(8, 128, 768)}}, Outputs: []*Value{{Shape: KnownShape(8, 128, 768)}}}
	for expr, want := range map[string]int64{"1*i0.0*i0.1": 1024, "12*i0.0*i0.1*i0.1": 12 * 8 * 128 * 128, "6": 6, "1*o0.2": 768} {
		if got, ok := PartCount(expr, n); !ok || got != want {
			t.Errorf("PartCount(%q) = %d, %v; want %d", expr, got, ok, want)
		}
	}
	for _, bad := range []string{"?", "", "i1.0", "o0.3", "ix.0", "1*i0"} {
		if got, ok := PartCount(bad, n); ok {
			t.Errorf("PartCount(%q) = %d, want not ok", bad, got)
		}
	}
}
