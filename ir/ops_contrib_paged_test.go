package ir

import (
	"strings"
	"testing"
)

// TestPagedAttentionInfer: a LLaMA-3-8B-shaped PagedAttention (32 query
// heads, 8 KV heads of 128, 16-token blocks), with Q, K and V apart or
// packed, its caches passed through, and its refusals.
func TestPagedAttentionInfer(t *testing.T) {
	const ms = "com.microsoft::"
	f16 := Float16
	cache := faInput(f16, faShape("blocks", 16, 8, 128))
	meta := []faIn{faInput(Int32, faShape("b1")), faInput(Int32, faShape("b")), faInput(Int32, faShape("b", "max_blocks"))}
	attrs := []*Attribute{IntAttr("num_heads", 32), IntAttr("kv_num_heads", 8)}
	ins := append([]faIn{faInput(f16, faShape("t", 4096)), faInput(f16, faShape("t", 1024)), faInput(f16, faShape("t", 1024)), cache, cache}, meta...)
	want := []TypeInfo{{DType: f16, Shape: faShape("t", 4096)}, {DType: f16, Shape: faShape("blocks", 16, 8, 128)}, {DType: f16, Shape: faShape("blocks", 16, 8, 128)}}
	runFAOutputs(t, "separate", ms+"PagedAttention", 1, ins, attrs, want)
	packed := append([]faIn{faInput(f16, faShape("t", 6144)), {omitted: true}, {omitted: true}, cache, cache}, meta...)
	runFAOutputs(t, "packed", ms+"PagedAttention", 1, packed, attrs, want[:1])
	for _, c := range []struct {
		ins   []faIn
		attrs []*Attribute
		want  string
	}{
		{ins, []*Attribute{IntAttr("num_heads", 32)}, "kv_num_heads 0"},
		{append([]faIn{faInput(f16, faShape("t", 4001))}, ins[1:]...), attrs, "does not split"},
		{append(append([]faIn{}, ins[:3]...), append([]faIn{faInput(f16, faShape(16, 8, 128)), cache}, meta...)...), attrs, "key_cache has rank 3"},
	} {
		if _, err := runFAOp(t, ms+"PagedAttention", 1, c.ins, c.attrs, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
	}
}
