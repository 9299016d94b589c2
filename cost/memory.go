package cost

import "github.com/onnxcost/onnxcost/ir"

// Peak activation memory. Walking the nodes in topological order (one
// stream, no reordering), a tensor's buffer is allocated when its producer
// runs and freed after its last consumer has run; graph inputs are live
// from the start, graph outputs to the end. A view's output shares its
// input's buffer (the buffer lives until the last use of either). Weights
// (initializers) and constants are excluded: they are reported as
// param_bytes and added once to peak_memory_bytes. While a node runs its
// inputs and outputs are live together, and a control-flow node adds its
// body's own peak on top.

// aliases reports whether n is a view whose output is its input's buffer
// seen with another shape (ir.Alias). Other no-kernel ops (Shape, Size,
// Optional and sequence bookkeeping) produce small host-side values that
// get their own buffer.
func aliases(n *ir.Node) bool { return ir.OpHas("", n.OpType, ir.Alias) }

// buffer is one allocation shared by a value and its views.
type buffer struct {
	bytes   float64
	lastUse int // index of the last node reading it; len(nodes) = graph output
	// listed is set once the buffer is in its last reader's free list.
	listed bool
}

// peakActivations returns the peak of live activation bytes in g. views
// marks nodes (by position in g.Nodes) that alias instead of allocating;
// subPeak adds a control-flow node's body peak while it runs.
func (a *analyzer) peakActivations(g *ir.Graph, views []bool, subPeak []float64) float64 {
	bufOf := map[*ir.Value]*buffer{}
	c := RuleCtx{DType: a.dtype, unknown: true} // sizes only; shape warnings come from the rules
	isActivation := func(v *ir.Value) bool {
		return v != nil && !v.IsInitializer && v.Const == nil && v.Kind == ir.TensorValue
	}
	// Buffers come from one array with room for every input and output
	// (pointers into it stay valid: it never grows): one allocation
	// instead of one per tensor (23k on a 112k-node graph).
	room := 0
	for _, v := range g.Inputs {
		if isActivation(v) {
			room++
		}
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if isActivation(o) {
				room++
			}
		}
	}
	slab := make([]buffer, 0, room)
	newBuf := func(v *ir.Value, at int) *buffer {
		slab = append(slab, buffer{bytes: c.Bytes(v), lastUse: at})
		b := &slab[len(slab)-1]
		bufOf[v] = b
		return b
	}
	// Graph inputs are live from the start.
	var live float64
	for _, v := range g.Inputs {
		if isActivation(v) && bufOf[v] == nil {
			live += newBuf(v, -1).bytes
		}
	}
	// Each node's outputs: a new buffer, or its input's for a view.
	for i, n := range g.Nodes {
		for _, o := range n.Outputs {
			if !isActivation(o) {
				continue
			}
			if views[i] && aliases(n) {
				if b := bufOf[n.In(0)]; b != nil {
					bufOf[o] = b
					continue
				}
			}
			newBuf(o, i)
		}
	}
	// Last uses: direct consumers in g, and values read by subgraphs of a
	// node of g count as read by that node.
	use := func(v *ir.Value, i int) {
		if b := bufOf[v]; b != nil && i > b.lastUse {
			b.lastUse = i
		}
	}
	for i, n := range g.Nodes {
		for _, in := range n.Inputs {
			use(in, i)
		}
		for _, sg := range n.Subgraphs() {
			for _, v := range sg.OuterReads() {
				use(v, i)
			}
		}
	}
	for _, o := range g.Outputs {
		use(o, len(g.Nodes))
	}
	// Walk: allocate, take the peak, free what this node read last.
	//
	// A node's free list is in the order its buffers' values come in g
	// (inputs, then each node's outputs): fixed by the graph, so the float
	// sums are the same on every run. (They were in order of the values'
	// names, which on a graph whose names point into the model file read
	// back 19 MB of its dropped pages; the sums are of byte counts, exact
	// in any order below 2^53.) Values not registered in g free
	// nothing.
	frees := make([][]*buffer, len(g.Nodes)+1)
	list := func(v *ir.Value) {
		b := bufOf[v]
		if b == nil || b.listed || !g.Holds(v) {
			return
		}
		b.listed = true
		if b.lastUse >= 0 && b.lastUse < len(g.Nodes) {
			frees[b.lastUse] = append(frees[b.lastUse], b)
		}
	}
	for _, v := range g.Inputs {
		if v != nil {
			list(v)
		}
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o != nil {
				list(o)
			}
		}
	}
	// Inputs never read are freed at once (but were live at the start).
	peak := live
	for _, v := range g.Inputs {
		if b := bufOf[v]; b != nil && b.lastUse < 0 {
			live -= b.bytes
			b.lastUse = -2
		}
	}
	for i, n := range g.Nodes {
		for _, o := range n.Outputs {
			if b := bufOf[o]; b != nil && o.Producer == n && !(views[i] && aliases(n) && bufOf[n.In(0)] == b) {
				live += b.bytes
			}
		}
		peak = max(peak, live+subPeak[i])
		for _, b := range frees[i] {
			live -= b.bytes
		}
	}
	return peak
}
