package passes

import (
	"slices"
	"sync"

	"github.com/onnxcost/onnxcost/ir"
)

// Elementwise-chain fusion (XLA's loop fusion): a connected run of
// elementwise and broadcast ops, each intermediate read by exactly one
// node of the run and not a graph output, becomes one FusedElementwise
// kernel. Its FLOPs are the sum of its parts (recorded as part
// attributes); its bytes are what crosses its boundary: the run's
// external inputs (side inputs such as a bias or a mask included, each
// once) and its one output.
//
// Shape of a group: every edge inside it is a value with a single reader,
// so a group is an in-tree whose root is its only node read from outside.
// Fusing an in-tree cannot create a cycle: a path leaving the group starts
// at the root, and no group node is reachable from the root.
//
// Views (Reshape, Squeeze, Unsqueeze, Flatten) are not crossed: a chain
// broken by a view becomes two kernels. Views cost no bytes and no launch
// in the cost model, so crossing them would only save one launch and the
// intermediate's round trip; not crossing keeps every fused node's inputs
// and output in the layouts the graph declares.

// The ops a chain may contain are those whose schema has the
// ir.Elementwise trait: pointwise maps and numpy-broadcast binary ops of
// the default domain, and the onnxcost ops that are themselves pointwise
// (FusedElementwise, Gelu; their parts are flattened into the chain's).
// Comparisons and logical ops have bool outputs and no trait.

// chainable reports whether n may be part of an elementwise chain: a
// pointwise op with one floating-point output whose contents are not
// already known and that the engine does not compute at build time (a
// folded constant costs nothing and must stay so).
func chainable(n *ir.Node) bool {
	if !ir.NodeHas(n, ir.Elementwise) || n.BuildTime() {
		return false
	}
	if len(n.Outputs) != 1 || len(n.Subgraphs()) > 0 {
		return false
	}
	out := n.Out(0)
	if !floatTensor(out) || ir.Known(out) != nil {
		return false
	}
	for _, in := range n.Inputs {
		if in != nil && in.Kind != ir.TensorValue {
			return false
		}
	}
	return true
}

// elementwiseOps lists the op types that have the ir.Elementwise trait in
// some domain: every node chainable accepts has one of them.
var elementwiseOps = sync.OnceValue(func() []string {
	var ops []string
	for _, s := range ir.Ops() {
		if s.Traits.Has(ir.Elementwise) && !slices.Contains(ops, s.Name) {
			ops = append(ops, s.Name)
		}
	}
	return ops
})

// fuseElementwise groups chainable nodes joined by single-reader edges
// and replaces every group of two or more with one FusedElementwise.
func fuseElementwise(g *ir.Graph) (bool, error) {
	// Only chainable nodes join groups, so only they are numbered: on a
	// 112k-node LLaMA-shaped graph position maps of every node were 4 MB
	// of the fused plan's allocations, and most nodes are not chainable.
	// Candidates come from the op-type index (ir/opindex.go) rather than
	// a scan of every node: the scan's trait lookup per node made this
	// pass, which rewrites nothing on that graph, 30 ms of its fused plan.
	chain := appendOfType(nil, g, elementwiseOps()...)
	chain = slices.DeleteFunc(chain, func(n *ir.Node) bool { return !chainable(n) })
	at := make(map[*ir.Node]int, len(chain))
	for i, n := range chain {
		at[n] = i
	}
	uf := newUnionFind(len(chain))
	for i, n := range chain {
		// Join n to its reader when n's output has exactly one reader,
		// which is chainable too, and is not a graph output.
		if r := singleReader(g, n.Out(0)); r != nil {
			if j, in := at[r]; in {
				uf.union(i, j)
			}
		}
	}
	// Each group lists its nodes in graph order, the order chain has.
	groups := make([][]*ir.Node, len(chain))
	var roots []int
	for i, n := range chain {
		root := uf.find(i)
		if groups[root] == nil {
			roots = append(roots, root)
		}
		groups[root] = append(groups[root], n)
	}
	changed := false
	err := g.Batch(func() error { // one compaction for all groups
		for _, root := range roots {
			nodes := groups[root]
			if len(nodes) < 2 {
				continue
			}
			f := elementwiseFusion(nodes)
			if _, err := f.Apply(g); err != nil {
				return err
			}
			changed = true
		}
		return nil
	})
	return changed, err
}

// elementwiseFusion builds the fusion of a group in topological order:
// inputs are the values the group reads but does not write, each once, in
// first-read order; the output is the last node's (the in-tree's root).
func elementwiseFusion(nodes []*ir.Node) Fusion {
	inGroup := make(map[*ir.Node]bool, len(nodes))
	for _, n := range nodes {
		inGroup[n] = true
	}
	var inputs []*ir.Value
	seen := map[*ir.Value]bool{}
	for _, n := range nodes {
		for _, v := range n.Inputs {
			if v == nil || seen[v] || (v.Producer != nil && inGroup[v.Producer]) {
				continue
			}
			seen[v] = true
			inputs = append(inputs, v)
		}
	}
	last := nodes[len(nodes)-1]
	return Fusion{
		Nodes: nodes, OpType: ir.OpFusedElementwise,
		Inputs: inputs, Outputs: []*ir.Value{last.Out(0)},
		Attrs: newParts(inputs, []*ir.Value{last.Out(0)}, nodes...).attrs(),
	}
}

// unionFind is a disjoint-set forest over 0..n-1 (path halving, union by
// size).
type unionFind struct{ parent, size []int }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int, n), size: make([]int, n)}
	for i := range u.parent {
		u.parent[i], u.size[i] = i, 1
	}
	return u
}

func (u *unionFind) find(i int) int {
	for u.parent[i] != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = u.parent[i]
	}
	return i
}

func (u *unionFind) union(a, b int) {
	a, b = u.find(a), u.find(b)
	if a == b {
		return
	}
	if u.size[a] < u.size[b] {
		a, b = b, a
	}
	u.parent[b] = a
	u.size[a] += u.size[b]
}
