package ir

import "slices"

// opIndex groups a graph's nodes by op type, each group in graph order,
// for AppendNodesOfType. The fusion passes sweep the node list about 60
// times per fused plan, and most sweeps look for one or two op types that
// a few thousand of a 112k-node graph's nodes have; one grouping serves
// every sweep until the graph is next edited (about 10 groupings per
// plan on a LLaMA-shaped graph).
//
// The index is valid while g.edits, len(g.Nodes) and the first and last
// nodes are as they were when it was built: every method that adds,
// removes or moves a node counts an edit, and the list's ends catch most
// direct assignments to g.Nodes. A node's OpType must not change while it
// is in a graph (no code does). Its buffers are kept and reused by the
// next build.
type opIndex struct {
	edits       uint64
	n           int
	first, last *Node

	ids   map[string]int32 // op type -> group; kept across builds
	group []int32          // per position in g.Nodes: its group, -1 for a replaced node
	start []int32          // group k is pos[start[k]:start[k+1]]
	pos   []int32          // positions in g.Nodes, grouped, ascending in each group
}

// AppendNodesOfType appends to dst the nodes of g whose op type (in any
// domain) is one of ops, in graph order, and returns the extended slice.
// The result is the caller's: it stays as it is when g is edited. Like
// the editing methods, it is not safe to call concurrently on one graph
// (it builds the index on demand).
func (g *Graph) AppendNodesOfType(dst []*Node, ops ...string) []*Node {
	x := g.opIndex()
	// The groups of ops, merged by position (they are few: at most 3 op
	// types per sweep in the passes).
	var heads [][]int32
	for _, op := range ops {
		if k, ok := x.ids[op]; ok && x.start[k] < x.start[k+1] {
			heads = append(heads, x.pos[x.start[k]:x.start[k+1]])
		}
	}
	for len(heads) > 0 {
		m := 0
		for i := 1; i < len(heads); i++ {
			if heads[i][0] < heads[m][0] {
				m = i
			}
		}
		dst = append(dst, g.Nodes[heads[m][0]])
		if heads[m] = heads[m][1:]; len(heads[m]) == 0 {
			heads = slices.Delete(heads, m, m+1)
		}
	}
	return dst
}

// opIndex returns g's op index, built afresh when g was edited since.
func (g *Graph) opIndex() *opIndex {
	x := g.ops
	var first, last *Node
	if len(g.Nodes) > 0 {
		first, last = g.Nodes[0], g.Nodes[len(g.Nodes)-1]
	}
	if x != nil && x.edits == g.edits && x.n == len(g.Nodes) && x.first == first && x.last == last {
		return x
	}
	if x == nil {
		x = &opIndex{ids: map[string]int32{}}
		g.ops = x
	}
	x.edits, x.n, x.first, x.last = g.edits, len(g.Nodes), first, last
	x.group = slices.Grow(x.group[:0], len(g.Nodes))[:len(g.Nodes)]
	// Consecutive nodes often share an op type: remember the last one
	// rather than hash every node's.
	lastOp, lastID := "", int32(-1)
	for i, n := range g.Nodes {
		if n.graph != g {
			x.group[i] = -1 // replaced, left in place by a Batch
			continue
		}
		if n.OpType != lastOp || lastID < 0 {
			id, ok := x.ids[n.OpType]
			if !ok {
				id = int32(len(x.ids))
				x.ids[n.OpType] = id
			}
			lastOp, lastID = n.OpType, id
		}
		x.group[i] = lastID
	}
	// Counting sort of positions by group: start[k+1] counts group k,
	// then becomes its end.
	x.start = slices.Grow(x.start[:0], len(x.ids)+1)[:len(x.ids)+1]
	clear(x.start)
	for _, k := range x.group {
		if k >= 0 {
			x.start[k+1]++
		}
	}
	for k := 1; k < len(x.start); k++ {
		x.start[k] += x.start[k-1]
	}
	total := x.start[len(x.start)-1]
	x.pos = slices.Grow(x.pos[:0], int(total))[:total]
	next := slices.Clone(x.start[:len(x.start)-1])
	for i, k := range x.group {
		if k >= 0 {
			x.pos[next[k]] = int32(i)
			next[k]++
		}
	}
	return x
}
