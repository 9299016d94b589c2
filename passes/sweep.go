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
// any domain) is one of ops, the ones a recogniser can start at. A fused
// plan runs about 60 sweeps (21 passes, 3 fixpoint rounds on a
// LLaMA-shaped graph), most of which find nothing, and each tested every
// node; ir's op-type index (ir/opindex.go), rebuilt only after a pass
// edited the graph (about 10 times), took the fused plan of a 112k-node
// LLaMA-shaped graph from 236 to 180 ms.
func nodesOfType(g *ir.Graph, ops ...string) iter.Seq[*ir.Node] {
	return sweep(func(dst []*ir.Node) []*ir.Node { return appendOfType(dst, g, ops...) })
}

// appendOfType appends g's nodes of the op types ops, in graph order: the
// candidates of a sweep, which still tests each one.
func appendOfType(dst []*ir.Node, g *ir.Graph, ops ...string) []*ir.Node {
	if fullSweeps {
		return append(dst, g.Nodes...)
	}
	return g.AppendNodesOfType(dst, ops...)
}

// fullSweeps makes every sweep visit every node, as before the op-type
// index: TestSweepsByTypeMissNothing runs the passes both ways to check
// that each sweep's op types cover everything its test accepts.
var fullSweeps bool

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

// positions numbers the live nodes of g by their place in g.Nodes when a
// sweep run inside g.Batch began: as ir's Graph.Position, which a Batch
// keeps exact (nothing moves), except that a node the sweep itself
// created (added) has none. Only live nodes are asked about (a replaced
// node has none either). A map of every node's position, built by the
// first sweep that needed one, was 2.3 MB of the fused plan's
// allocations on a 112k-node LLaMA-shaped graph.
type positions struct {
	g     *ir.Graph
	added map[*ir.Node]bool
}

// of is n's position, or -1 for a node that was not in g.
func (p *positions) of(n *ir.Node) int {
	if p.added[n] {
		return -1
	}
	return p.g.Position(n)
}

// add records a node the sweep created.
func (p *positions) add(n *ir.Node) {
	if p.added == nil {
		p.added = map[*ir.Node]bool{}
	}
	p.added[n] = true
}
