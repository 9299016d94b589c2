package cost

import (
	"fmt"
	"slices"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// A decoder exported with a key/value cache (the zoo's decode=1 graphs,
// Optimum and other Hugging Face exports) writes each layer's cache as
// present = Concat(past, new): as exported, every step copies the whole
// cache. A serving runtime (vLLM, TensorRT-LLM, ONNX Runtime GenAI)
// allocates the cache once at its final length and writes only the new
// positions. Options.AppendKVCache prices a generation loop that way:
//
//   - the Concat reads the new entries and writes them, nothing more (the
//     past is not re-read by the append; attention still reads it);
//   - present lives in past's buffer, sized for present from the start,
//     so peak memory holds the cache once, not past and present.
//
// The default prices the graph as exported, which is what running the
// ONNX file step by step in a runtime without cache sharing costs.

// cacheAppends finds the cache appends of g: Concats of two inputs whose
// first input is a graph input (the past cache, not a weight) and whose
// output is a graph output (present). Nil when there are none.
func cacheAppends(g *ir.Graph) map[*ir.Node]bool {
	if g == nil {
		return nil
	}
	ins := map[*ir.Value]bool{}
	for _, v := range g.Inputs {
		if v != nil && !v.IsInitializer && v.Const == nil {
			ins[v] = true
		}
	}
	outs := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		if v != nil {
			outs[v] = true
		}
	}
	var found map[*ir.Node]bool
	for _, n := range g.Nodes {
		if n.Domain != "" || n.OpType != "Concat" || len(n.Inputs) != 2 || len(n.Outputs) != 1 {
			continue
		}
		if !ins[n.In(0)] || !outs[n.Out(0)] || n.In(1) == nil {
			continue
		}
		if found == nil {
			found = map[*ir.Node]bool{}
		}
		found[n] = true
	}
	return found
}

// appendRule prices a cache append written in place: one kernel reading
// the new entries (input 1) and writing as many bytes into the cache.
func appendRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := NodeEstimate{Class: perf.ClassData, Launches: 1, Note: "KV-cache append in place: new entries only"}
	c.Read(n, &e, 1)
	e.BytesWritten = c.Bytes(n.In(1))
	return e, nil
}

// foldAppends makes each cache append's output live in its past input's
// buffer, grown to the output's size from the start (the cache allocated
// at its final length), when nothing reads past after the append. It
// returns the bytes the grown buffers add to what is live at the start.
func (l *liveness) foldAppends(appends map[*ir.Node]bool) (grown float64) {
	if len(appends) == 0 {
		return 0
	}
	for i, n := range l.g.Nodes {
		if !appends[n] {
			continue
		}
		bin, bout := l.bufOf[n.In(0)].root(), l.bufOf[n.Out(0)].root()
		if bin == nil || bout == nil || bin == bout || bin.lastUse != i || n.Out(0).Producer != n || l.bufOf[n.In(1)].root() == bin {
			continue
		}
		if bout.bytes > bin.bytes {
			grown += bout.bytes - bin.bytes
			bin.bytes = bout.bytes
		}
		bout.into = bin
		bin.lastUse = bout.lastUse
		if l.inPlaceAt == nil {
			l.inPlaceAt = map[int]bool{}
		}
		l.inPlaceAt[i] = true
	}
	return grown
}

// CacheBytes is the size of the KV cache g's appends write (their present
// outputs, Concat(past, new) as above) with float tensors stored at
// compute dtype ("" for the model's own; under autocast, fp16-amp and
// bf16-amp, the half dtype the projections write it in: newAutocastFlow);
// 0 when g has none. Shapes must be inferred.
func CacheBytes(g *ir.Graph, dtype string) (float64, error) {
	c := RuleCtx{unknown: true}
	if dtype != "" {
		dt, ok := computeDType(dtype)
		if !ok {
			return 0, fmt.Errorf("unknown dtype %q (want fp32, tf32, fp16, bf16, fp8 or int8)", dtype)
		}
		if half, ok := autocastHalf[dtype]; ok {
			dt = half
		}
		c.DType = dt
	}
	appends := cacheAppends(g)
	var total float64
	for _, n := range g.Nodes { // graph order: the same sum every run
		if appends[n] {
			total += c.Bytes(n.Out(0))
			continue
		}
		for _, v := range presentOutputs(g, n) {
			total += c.Bytes(v)
		}
	}
	return total, nil
}

// presentOutputs are the cache outputs of an attention kernel that keeps
// its own KV cache (GroupQueryAttention, MultiHeadAttention with past):
// the outputs its schema pairs in place with a past input the graph is
// fed, when the graph returns them as its present cache.
func presentOutputs(g *ir.Graph, n *ir.Node) []*ir.Value {
	var out []*ir.Value
	for _, p := range inPlaceCaches(g, n) {
		out = append(out, p.present)
	}
	return out
}

// cachePair is a past input an attention kernel updates in place and the
// present output it writes.
type cachePair struct{ past, present *ir.Value }

// inPlaceCaches are node n's in-place cache pairs (presentOutputs).
func inPlaceCaches(g *ir.Graph, n *ir.Node) []cachePair {
	s := ir.LookupOp(n.Domain, n.OpType)
	if s == nil || !s.Traits.Has(ir.InPlace) {
		return nil
	}
	var out []cachePair
	for _, p := range s.InPlaceIO() {
		o, in := n.Out(p[0]), n.In(p[1])
		if o != nil && in != nil && slices.Contains(g.Inputs, in) && slices.Contains(g.Outputs, o) {
			out = append(out, cachePair{past: in, present: o})
		}
	}
	return out
}

// CacheAppends counts g's cache appends (see cacheAppends).
func CacheAppends(g *ir.Graph) int { return len(cacheAppends(g)) }
