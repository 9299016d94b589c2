package passes

import (
	"slices"
	"strings"
	"testing"
)

// The table's ordering constraints are data, checked here: names are
// unique, every After and Before names a pass on the right side; every
// pass is documented and runnable.
func TestTableOrder(t *testing.T) {
	if err := CheckOrder(table); err != nil {
		t.Error(err)
	}
	for _, p := range table {
		if p.Doc == "" || p.Run == nil {
			t.Errorf("pass %q has no Doc or Run", p.Name)
		}
	}
}

// The run order is fixed: requirements are checked against it, never used
// to reorder, so adding Before/After to a line cannot move a pass.
func TestTableRunOrder(t *testing.T) {
	want := "cleanup cleanup-ort eliminate-cast-ort eliminate-noop-ort eliminate-common-ort fold-constants split-conv-bias fold-bn fold-pad fold-pad-ort fold-pad-pool bn-pointwise fuse-layernorm fuse-rmsnorm fuse-layernorm-ort fuse-rmsnorm-ort fuse-rotary fuse-gelu fuse-gelu-eager fuse-gelu-ort fuse-softmax fuse-attention fuse-attention-ort fuse-attention-sdpa fuse-attention-heads fuse-attention-seqfirst fuse-attention-packed fuse-attention-sink fuse-attention-layout fuse-bias-softmax fuse-rsqrt fuse-silu fuse-quickgelu-ort fuse-slice-split-ort fuse-qdq fuse-qdq-add fold-conv-add fuse-conv-act fuse-conv fuse-gemm-bias fuse-gemm-bias-ort fuse-bias-gelu-ort fuse-matmul-scale fuse-gemm fuse-qkv fuse-qkv-ort fuse-skip-layernorm fuse-skip-layernorm-ort fuse-elementwise winograd"
	if got := strings.Join(Names(), " "); got != want {
		t.Errorf("run order changed:\n got %s\nwant %s", got, want)
	}
}

// CheckOrder must refuse each way a table can be wrong; a checker that
// accepted everything would pass TestTableOrder too.
func TestCheckOrderFails(t *testing.T) {
	p := func(name string, after, before []string) Pass {
		return Pass{Name: name, After: after, Before: before}
	}
	for name, tc := range map[string]struct {
		ps   []Pass
		want string
	}{
		"duplicate":       {[]Pass{p("a", nil, nil), p("a", nil, nil)}, `"a" listed twice`},
		"unknown after":   {[]Pass{p("a", []string{"nope"}, nil)}, `After names unknown pass "nope"`},
		"unknown before":  {[]Pass{p("a", nil, []string{"nope"})}, `Before names unknown pass "nope"`},
		"after violated":  {[]Pass{p("a", []string{"b"}, nil), p("b", nil, nil)}, `"a" must come after "b"`},
		"before violated": {[]Pass{p("a", nil, nil), p("b", nil, []string{"a"})}, `"b" must come before "a"`},
		"self after":      {[]Pass{p("a", []string{"a"}, nil)}, `"a" must come after "a"`},
	} {
		err := CheckOrder(tc.ps)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %s", name, err, tc.want)
		}
	}
	if err := CheckOrder([]Pass{p("a", nil, []string{"b"}), p("b", []string{"a"}, nil)}); err != nil {
		t.Errorf("a consistent pair refused: %v", err)
	}
}

func TestInferenceOnly(t *testing.T) {
	if got, want := InferenceOnly(), []string{"fold-constants", "fold-bn", "bn-pointwise"}; !slices.Equal(got, want) {
		t.Errorf("InferenceOnly() = %v, want %v", got, want)
	}
}

func TestSelectedUnknownPass(t *testing.T) {
	if _, err := Selected(Options{Disable: []string{"no-such-pass"}}); err == nil {
		t.Error("unknown pass accepted")
	}
}
