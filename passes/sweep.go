package passes

import (
	"iter"
	"sync"

	"github.com/onnxcost/onnxcost/ir"
)

// nodesAtStart yields the nodes g has when the loop starts, in order,
// whatever the loop body does to g: a sweep that fuses as it goes must
// neither visit the nodes it creates (a fused node takes an old node's
// slot in g.Nodes) nor skip nodes when the list is compacted. Nodes the
// body removes are still yielded; callers skip them (live).
func nodesAtStart(g *ir.Graph) iter.Seq[*ir.Node] {
	return sweep(func(dst []*ir.Node) []*ir.Node { return append(dst, g.Nodes...) })
}

// nodesOfType is nodesAtStart restricted to the nodes whose op type (in
// any domain) is one of ops, the ones a recogniser can start at. A sweep
// of every node to test each one's op type was most of the time of the
// sweeps that find nothing to fuse, and a fused plan runs about 60 sweeps
// (21 passes, 3 fixpoint rounds on a LLaMA-shaped graph); ir's op-type
// index (ir/opindex.go) is built once per edit of the graph instead.
func nodesOfType(g *ir.Graph, ops ...string) iter.Seq[*ir.Node] {
	return sweep(func(dst []*ir.Node) []*ir.Node { return g.AppendNodesOfType(dst, ops...) })
}

// sweep yields the nodes fill appends to an empty list, a copy taken
// before the loop body runs. The copy lives in a pooled buffer: every
// pass sweeps the graph once per fixpoint iteration, and a fresh copy per
// sweep was a quarter of the fused plan's allocated bytes on a 112k-node
// LLaMA-shaped graph (22 MB of 84 MB).
func sweep(fill func(dst []*ir.Node) []*ir.Node) iter.Seq[*ir.Node] {
	return func(yield func(*ir.Node) bool) {
		buf := snapshots.Get().(*[]*ir.Node)
		nodes := fill((*buf)[:0])
		defer func() {
			clear(nodes) // hold no removed node alive in the pool
			*buf = nodes[:0]
			snapshots.Put(buf)
		}()
		for _, n := range nodes {
			if !yield(n) {
				return
			}
		}
	}
}

// snapshots pools nodesAtStart's buffers: a pool rather than one package
// buffer, so that a sweep run inside another, or on another goroutine,
// never shares one.
var snapshots = sync.Pool{New: func() any { return new([]*ir.Node) }}

// positions numbers the nodes of g by their place in g.Nodes, as the list
// stands when a position is first asked for; the caller must ask before
// it edits g. Built on demand, because a pass that finds nothing to
// rewrite needs none (fuse-qkv's maps were 5 MB over the fused plan of a
// 112k-node graph; only its first sweep needs one).
type positions struct {
	g  *ir.Graph
	at map[*ir.Node]int
}

// of is n's position, or -1 for a node that was not in g.
func (p *positions) of(n *ir.Node) int {
	if p.at == nil {
		p.at = make(map[*ir.Node]int, len(p.g.Nodes))
		for i, m := range p.g.Nodes {
			p.at[m] = i
		}
	}
	if i, ok := p.at[n]; ok {
		return i
	}
	return -1
}
