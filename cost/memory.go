package cost

import "github.com/onnxcost/onnxcost/ir"

// Peak activation memory. Walking the nodes in topological order (one
// stream, no reordering), a tensor's buffer is allocated when its producer
// runs and freed after its last consumer has run; graph outputs are live
// to the end. The main graph's inputs are live for the whole call: the
// caller owns them (a PyTorch caller's tensor, an onnxruntime OrtValue, a
// TensorRT binding) and frees nothing while the model runs; on our H100
// ResNet-50 rows the 74 MiB batch-128 image was missing from the peak.
// Under the eager plan a module's argument lives until the module
// returns (scopeHeld). A view's output shares its
// input's buffer (the buffer lives until the last use of either). Weights
// (initializers) and constants are excluded: they are reported as
// param_bytes and added once to peak_memory_bytes. While a node runs its
// inputs and outputs are live together, and a control-flow node adds its
// body's own peak on top. An in-place op (ir.InPlace: a scatter updating a
// KV cache, an attention op appending to its past_key/past_value) writes
// an output into its updated input's buffer when nothing reads that input
// afterwards, so that output then allocates nothing either.

// aliases reports whether n is a view whose output is its input's buffer
// seen with another shape (ir.Alias). Other no-kernel ops (Shape, Size,
// Optional and sequence bookkeeping) produce small host-side values that
// get their own buffer.
func aliases(n *ir.Node) bool { return ir.OpHas("", n.OpType, ir.Alias) }

// inPlacePairs are the {output, input} slots of n whose buffers n may
// share (ir.InPlace, OpSchema.InPlacePairs; a node its plan marked
// ir.Node.InPlace, output 0 into input 0; under onnxruntime, its kernels
// that may run in place); whether it does depends on the input being dead
// after n.
func (l *liveness) inPlacePairs(n *ir.Node) [][2]int {
	if n.InPlace() || l.ort && ortInPlace(n) {
		return firstInPlace
	}
	return ir.LookupOp(n.Domain, n.OpType).InPlaceIO()
}

// ortInPlaceOps are the activations whose onnxruntime CUDA kernels
// declare MayInplace(0, 0) (providers/cuda/activation/activations.cc;
// the binary elementwise kernels do not): the allocation planner gives
// the output the input's buffer when nothing else reads the input and
// it is not a graph input (the caller's).
var ortInPlaceOps = map[string]bool{"Elu": true, "HardSigmoid": true, "LeakyRelu": true, "Relu": true, "Selu": true,
	"Sigmoid": true, "Softplus": true, "Softsign": true, "Tanh": true, "ThresholdedRelu": true}

// ortInPlace reports whether onnxruntime may run n in place: one of
// ortInPlaceOps, or BiasGelu (contrib, MayInplace(0, 0)), over an input a
// node made.
func ortInPlace(n *ir.Node) bool {
	if x := n.In(0); x == nil || x.Producer == nil {
		return false
	}
	switch {
	case n.Domain == "":
		return ortInPlaceOps[n.OpType]
	case ir.IsFused(n, ir.OpFusedGelu):
		return len(n.Inputs) == 2 // the bias BiasGeluFusion took in
	}
	return false
}

// firstInPlace is the pair of a node marked ir.Node.InPlace.
var firstInPlace = [][2]int{{0, 0}}

// buffer is one allocation shared by a value and its views.
type buffer struct {
	bytes   float64
	lastUse int // index of the last node reading it; len(nodes) = graph output
	// listed is set once the buffer is in its last reader's free list.
	listed bool
	// into is the buffer this one was folded into by an in-place update.
	into *buffer
}

// root is the buffer b's values finally live in (nil for nil).
func (b *buffer) root() *buffer {
	for b != nil && b.into != nil {
		b = b.into
	}
	return b
}

// peakActivations returns the peak of live activation bytes in g. views
// marks nodes (by position in g.Nodes) that alias instead of allocating;
// subPeak adds a control-flow node's body peak while it runs.
func (a *analyzer) peakActivations(g *ir.Graph, views []bool, subPeak []float64, main bool) float64 {
	l := liveness{
		g:     g,
		views: views,
		ort:   a.opt.Plan == "onnxruntime",
		bufOf: map[*ir.Value]*buffer{},
		c:     RuleCtx{DType: a.dtype, unknown: true}, // sizes only; shape warnings come from the rules
	}
	l.c.flow, _ = a.flowDTypes(nil)
	if main && a.tracesArena() {
		l.events = &a.arenaEvents
	}
	live, inPlaceNodes := l.allocate()
	l.lastUses()
	live += l.foldAppends(a.appends)
	l.foldInPlace(inPlaceNodes)
	if main {
		l.holdInputs()
		if a.opt.Plan == "eager" {
			l.scopeHeld()
		}
	}
	return l.walk(live, l.freeLists(), subPeak)
}

// holdInputs keeps the graph inputs' buffers to the end of the call (the
// caller's), after the in-place folds: a KV cache the call appends to in
// place is the caller's buffer grown, already live to the end.
func (l *liveness) holdInputs() {
	for _, v := range l.g.Inputs {
		if b := l.bufOf[v].root(); b != nil {
			b.lastUse = max(b.lastUse, len(l.g.Nodes))
		}
	}
}

// liveness holds the buffers of one graph's activations while
// peakActivations works out when each is allocated and freed.
type liveness struct {
	g     *ir.Graph
	views []bool
	// ort prices onnxruntime's in-place kernels (ortInPlace).
	ort   bool
	c     RuleCtx
	bufOf map[*ir.Value]*buffer
	// slab backs every buffer (see allocate).
	slab []buffer
	// inPlaceOut marks the outputs folded into an updated input's buffer
	// (nil when none was); inPlaceAt marks the nodes whose output 0 was
	// (the cache appends of kvappend.go).
	inPlaceOut map[*ir.Value]bool
	inPlaceAt  map[int]bool
	// events, when set, records the walk's allocations and frees in
	// order (ortarena.go).
	events *[]arenaEvent
}

// isActivation reports whether v takes activation memory: weights and
// constants are counted as parameters instead.
func isActivation(v *ir.Value) bool {
	return v != nil && !v.IsInitializer && v.Const == nil && v.Kind == ir.TensorValue
}

// strideOps are the ops the analyzer may find to be their input read
// another way (noOpCast, strideView): then they share its buffer.
var strideOps = map[string]bool{"Cast": true, "CastLike": true, "Transpose": true, "Slice": true, "Gather": true}

// isView reports whether node i's outputs may share input 0's buffer: a
// view, or a cast, transpose, slice or select (Gather) the analyzer
// found runs no kernel.
func (l *liveness) isView(i int, n *ir.Node) bool {
	return l.views[i] && (aliases(n) || n.Domain == "" && strideOps[n.OpType])
}

// newBuf gives v a buffer of its own, last used (so far) at node at.
func (l *liveness) newBuf(v *ir.Value, at int) *buffer {
	l.slab = append(l.slab, buffer{bytes: l.c.Bytes(v), lastUse: at})
	b := &l.slab[len(l.slab)-1]
	l.bufOf[v] = b
	return b
}

// allocate maps every activation to its buffer and returns the bytes
// live at the start (the graph inputs) and the positions of the nodes
// that may update in place.
func (l *liveness) allocate() (live float64, inPlaceNodes []int) {
	g := l.g
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
	l.slab = make([]buffer, 0, room)
	for _, v := range g.Inputs {
		if isActivation(v) && l.bufOf[v] == nil {
			live += l.newBuf(v, -1).bytes
		}
	}
	for i, n := range g.Nodes {
		if l.inPlacePairs(n) != nil {
			inPlaceNodes = append(inPlaceNodes, i)
		}
		for _, o := range n.Outputs {
			if !isActivation(o) {
				continue
			}
			if l.isView(i, n) {
				if b := l.bufOf[n.In(0)]; b != nil {
					l.bufOf[o] = b
					continue
				}
			}
			l.newBuf(o, i)
		}
	}
	return live, inPlaceNodes
}

// use records that node i reads v.
func (l *liveness) use(v *ir.Value, i int) {
	if b := l.bufOf[v]; b != nil && i > b.lastUse {
		b.lastUse = i
	}
}

// lastUses sets each buffer's last reader. Values read by subgraphs of a
// node count as read by that node, and graph outputs are read after the
// last node.
func (l *liveness) lastUses() {
	g := l.g
	for i, n := range g.Nodes {
		for _, in := range n.Inputs {
			l.use(in, i)
		}
		for _, sg := range n.Subgraphs() {
			for _, v := range sg.OuterReads() {
				l.use(v, i)
			}
		}
	}
	for _, o := range g.Outputs {
		l.use(o, len(g.Nodes))
	}
}

// foldInPlace folds the buffer of each in-place output whose updated
// input is read by no later node (nor through another of the node's
// inputs, nor as a graph output) and has the output's size into that
// input's buffer, which then lives on as long as the output and its views
// are read. In graph order, so a cache updated twice stays one buffer.
func (l *liveness) foldInPlace(inPlaceNodes []int) {
	for _, i := range inPlaceNodes {
		n := l.g.Nodes[i]
		for _, p := range l.inPlacePairs(n) {
			l.foldPair(i, n, p[0], p[1])
		}
	}
}

// foldPair folds output out of node i into input in's buffer when the
// input dies at the node.
func (l *liveness) foldPair(i int, n *ir.Node, out, in int) {
	o := n.Out(out)
	bin, bout := l.bufOf[n.In(in)].root(), l.bufOf[o].root()
	if bin == nil || bout == nil || bin == bout || bin.lastUse != i || bin.bytes != bout.bytes || o.Producer != n {
		return
	}
	for j, v := range n.Inputs {
		if j != in && l.bufOf[v].root() == bin {
			return
		}
	}
	bout.into = bin
	bin.lastUse = bout.lastUse
	if l.inPlaceOut == nil {
		l.inPlaceOut = map[*ir.Value]bool{}
	}
	l.inPlaceOut[o] = true
}

// freeLists returns, for each node, the buffers it reads last.
//
// A node's free list is in the order its buffers' values come in g
// (inputs, then each node's outputs): fixed by the graph, so the float
// sums are the same on every run. (They were in order of the values'
// names, which on a graph whose names point into the model file read
// back 19 MB of its dropped pages; the sums are of byte counts, exact
// in any order below 2^53.) Values not registered in g free nothing.
func (l *liveness) freeLists() [][]*buffer {
	g := l.g
	frees := make([][]*buffer, len(g.Nodes)+1)
	list := func(v *ir.Value) {
		b := l.bufOf[v].root()
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
	return frees
}

// walk runs the nodes in order from live bytes at the start: allocate
// each node's outputs, take the peak, free what it read last.
func (l *liveness) walk(live float64, frees [][]*buffer, subPeak []float64) float64 {
	g := l.g
	rec := l.recorder()
	if l.events != nil {
		held := map[*buffer]bool{}
		for _, v := range g.Inputs {
			if b := l.bufOf[v].root(); b != nil && !held[b] {
				held[b] = true
				rec(b, false, true)
			}
		}
	}
	// Inputs never read are freed at once (but were live at the start).
	peak := live
	for _, v := range g.Inputs {
		if b := l.bufOf[v].root(); b != nil && b.lastUse < 0 {
			live -= b.bytes
			b.lastUse = -2
			rec(b, true, true)
		}
	}
	for i, n := range g.Nodes {
		for k, o := range n.Outputs {
			b := l.bufOf[o]
			if b == nil || o.Producer != n || l.isView(i, n) && l.bufOf[n.In(0)] == b || l.inPlaceOut[o] || k == 0 && l.inPlaceAt[i] {
				continue
			}
			live += b.bytes
			rec(b, false, false)
		}
		peak = max(peak, live+subPeak[i])
		if subPeak[i] > 0 && l.events != nil {
			// A body's own peak, taken and given back while it runs.
			id := -2 - i
			*l.events = append(*l.events, arenaEvent{id: id, bytes: subPeak[i]}, arenaEvent{id: id, bytes: subPeak[i], free: true})
		}
		for _, b := range frees[i] {
			live -= b.bytes
			rec(b, true, false)
		}
	}
	return peak
}

// recorder returns the function walk reports each allocation and free
// to: a no-op unless l.events is set. A buffer holding a graph output,
// or a graph input (input true), is one the memory pattern leaves out.
func (l *liveness) recorder() func(b *buffer, free, input bool) {
	if l.events == nil {
		return func(*buffer, bool, bool) {}
	}
	ids := map[*buffer]int{}
	outs := map[*buffer]bool{}
	for _, o := range l.g.Outputs {
		if b := l.bufOf[o].root(); b != nil {
			outs[b] = true
		}
	}
	return func(b *buffer, free, input bool) {
		id, ok := ids[b]
		if !ok {
			id = len(ids)
			ids[b] = id
		}
		*l.events = append(*l.events, arenaEvent{id: id, bytes: b.bytes, free: free, outside: input || outs[b], input: input})
	}
}
