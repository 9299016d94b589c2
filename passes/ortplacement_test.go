package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestORTPlacement holds the session view's placement to onnxruntime's CUDA
// provider's rules (fallback_cpu_capability.cc, transformer_memcpy.cc) on a
// graph with a symbolic batch: a torch.onnx-style reshape target runs on
// the host, a Range of it and a ConstantOfShape on the GPU (their kernels
// read those inputs on the host), a node that also reads an initializer
// of more than 100 elements on the GPU; a host scalar a GPU kernel reads is
// copied up once before its first reader, and a target computed on the
// GPU copied down for the Reshape that reads it. With the batch static
// there is no session: everything is folded as before.
func TestORTPlacement(t *testing.T) {
	for _, dynamic := range []bool{true, false} {
		b := newBuilder(t)
		x := b.Input("x", ir.Float32, 2, 4, 8)
		if dynamic {
			x.Declared.Shape = ir.RankedShape(ir.S("batch"), ir.D(4), ir.D(8))
		}
		gather := func(v *ir.Value, i int64) *ir.Value {
			return b.op("Gather", []*ir.Attribute{ir.IntAttr("axis", 0)}, v, b.intsOf("i"+string(rune('0'+i)), ir.Int64, []int64{}, []int64{i}))
		}
		axes := b.int64s("axes", 0)
		n := gather(b.op("Shape", nil, x), 0)
		target := b.op("Concat", []*ir.Attribute{ir.IntAttr("axis", 0)}, b.op("Unsqueeze", nil, n, axes), b.int64s("rest", 32))
		flat := b.op("Reshape", nil, x, target)
		scale := b.op("Cast", []*ir.Attribute{ir.IntAttr("to", int64(ir.Float32))}, n)
		scaled := b.op("Mul", nil, flat, scale)
		twice := b.op("Mul", nil, scaled, scale)
		rng := b.op("Range", nil, b.intsOf("zero", ir.Int64, []int64{}, []int64{0}), n, b.intsOf("one", ir.Int64, []int64{}, []int64{1}))
		zeros := b.op("ConstantOfShape", nil, target)
		big := b.op("Add", nil, b.op("Unsqueeze", nil, n, axes), b.intsOf("big", ir.Int64, []int64{200}, make([]int64, 200)))
		down := b.op("Concat", []*ir.Attribute{ir.IntAttr("axis", 0)}, b.op("Unsqueeze", nil, gather(rng, 1), axes), b.int64s("rest2", -1))
		again := b.op("Reshape", nil, twice, down)
		b.output(again, zeros, big)
		bound := ir.InferOptions{Bindings: map[string]int64{}}
		if dynamic {
			bound.Bindings["batch"] = 2
		}
		inferORTSession(t, b.M, bound)
		g := b.M.Graph
		if !dynamic {
			if g.Session != nil {
				t.Fatal("static batch: a session view was recorded")
			}
			continue
		}
		s := g.Session
		for _, c := range []struct {
			name string
			v    *ir.Value
			host bool
		}{
			{"the batch", n, true}, {"the reshape target", target, true}, {"the cast scale", scale, true},
			{"the reshaped input", flat, false}, {"the Range", rng, false}, {"the ConstantOfShape", zeros, false},
			{"an Add with a 200-element initializer", big, false}, {"a Concat of the Range's element", down, false},
		} {
			if s.Host[c.v] != c.host {
				t.Errorf("%s: on the host %v, want %v", c.name, s.Host[c.v], c.host)
			}
		}
		ORTCopies(g, 13)
		if got := s.Uploads[scaled.Producer]; len(got) != 1 || got[0] != scale {
			t.Errorf("uploads before the first Mul %v, want the cast scale", names(got))
		}
		if got := s.Uploads[twice.Producer]; len(got) != 0 {
			t.Errorf("uploads before the second Mul %v, want none (one copy a value)", names(got))
		}
		if got := s.Uploads[big.Producer]; len(got) != 1 || got[0] != big.Producer.In(0) {
			t.Errorf("uploads before the Add %v, want its host operand", names(got))
		}
		if got := s.Downloads[again.Producer]; len(got) != 1 || got[0] != down {
			t.Errorf("downloads for the last Reshape %v, want its target computed on the GPU", names(got))
		}
		if len(s.Uploads) != 2 || len(s.Downloads) != 1 {
			t.Errorf("copies before %d nodes and for %d, want 2 and 1", len(s.Uploads), len(s.Downloads))
		}
	}
}

// names lists the values' names.
func names(vs []*ir.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}
