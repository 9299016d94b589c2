package ir

// CompactNodes moves g's nodes, with their input and output lists, into
// fresh storage sized to what is left, so that the storage the reader and
// the passes allocated them in can be freed.
//
// Why: the reader allocates a graph's nodes in one slab and their lists
// in a few more, and fusion removes most nodes while the survivors stay
// scattered through those slabs, which then can be neither freed nor
// reused. In `report`'s fused plan of the 112k-node graph of
// scripts/bench_vs_onnx.sh, a quarter of the nodes survive and the node
// slab alone holds 18.8 MB; the cost model's allocations came on top.
//
// Values stay where they are: moving one means storing it again in g's
// name table, which hashes its name, and names point into the model file,
// whose pages a command drops after reading (a pass over every name read
// 19 MB of them back). Attributes and FusedFrom lists are shared.
//
// Every pointer to a node of g held by g and by the values its nodes read
// and write is updated; a caller must hold none across the call. Nodes of
// subgraphs stay where they are (they are in their own graphs' storage).
// Inside a Batch it does nothing.
func (g *Graph) CompactNodes() {
	if g.batch > 0 || len(g.Nodes) == 0 {
		return
	}
	g.ReleaseRemoved()
	refs := 0
	for i, n := range g.Nodes {
		n.pos = i
		refs += len(n.Inputs) + len(n.Outputs)
	}
	nodes := make([]Node, len(g.Nodes))
	moved := func(n *Node) *Node {
		if n != nil && n.graph == g && n.pos < len(nodes) && g.Nodes[n.pos] == n {
			return &nodes[n.pos]
		}
		return n // not a node of g (a subgraph's reading a value of g): kept
	}
	// Lists keep capacity equal to length, as the reader's: a pass that
	// appends to one copies it rather than overwriting the next.
	refSlab := make([]*Value, 0, refs)
	relist := func(list []*Value) []*Value {
		if list == nil {
			return nil
		}
		start := len(refSlab)
		refSlab = append(refSlab, list...)
		return refSlab[start:len(refSlab):len(refSlab)]
	}
	remapConsumers := func(v *Value) {
		for j, c := range v.Consumers {
			v.Consumers[j] = moved(c)
		}
		// A slot past the end of a list the collector still scans (a
		// consumer removed by an older version of removeConsumer) would
		// keep a whole old slab alive.
		clear(v.Consumers[len(v.Consumers):cap(v.Consumers)])
	}
	// Each value's consumers once: from its producer when a node of g
	// writes it (below), else from its first reader in g (a graph input,
	// an initializer, a value of an enclosing graph).
	others := map[*Value]bool{}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			if v != nil && moved(v.Producer) == v.Producer && !others[v] {
				others[v] = true
				remapConsumers(v)
			}
		}
	}
	for i, n := range g.Nodes {
		nn := &nodes[i]
		*nn = *n
		nn.Inputs, nn.Outputs = relist(n.Inputs), relist(n.Outputs)
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			if o.Producer == n {
				o.Producer = nn
			}
			remapConsumers(o)
		}
	}
	for i := range nodes {
		g.Nodes[i] = &nodes[i]
	}
	clear(g.Nodes[len(g.Nodes):cap(g.Nodes)])
	// The op index holds nodes (and would pin the old storage).
	g.ops = nil
	g.edits++
}
