package ir

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"unsafe"
)

// Model is a decoded ONNX model: its metadata, opset imports, main graph
// and model-local functions.
type Model struct {
	Path            string // file it was read from, for messages
	IRVersion       int64
	ProducerName    string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	Doc             string
	Opsets          []OpsetImport
	Metadata        []KeyValue
	Graph           *Graph
	Functions       []*Function

	// TiedCopies maps each initializer that is a transposed copy of an
	// embedding table in the file (TransposedCopies: a tied LM head as
	// torch.onnx.export writes it) to that table; set by pipeline.Load.
	// The framework the model came from holds the matrix once.
	TiedCopies map[*Value]*Value

	// dropPages is set by ReadFile for a memory-mapped file (see
	// DropFilePages).
	dropPages func()
}

// DropFilePages lets the operating system take back the memory holding
// the pages of the model's file that reading touched, when the file was
// memory-mapped (else it does nothing). The mapping stays valid: strings
// of the model still point into it, and a page read again is read back
// from the file cache. Call it once reading and inference are done: they
// touch every page of the file, and the pages stay counted in the
// process's resident memory until dropped (29 MB for a 112k-node graph,
// of which the fused report touches a third again).
func (m *Model) DropFilePages() {
	if m.dropPages != nil {
		m.dropPages()
	}
}

// OpsetImport is one entry of ModelProto.opset_import. Domain "" is the
// default ONNX domain ("ai.onnx").
type OpsetImport struct {
	Domain  string
	Version int64
}

// KeyValue is one metadata_props entry.
type KeyValue struct{ Key, Value string }

// Opset returns the imported version of domain ("" and "ai.onnx" are the
// same), or 0 when the model does not import it.
func (m *Model) Opset(domain string) int64 {
	if domain == "ai.onnx" {
		domain = ""
	}
	for _, o := range m.Opsets {
		d := o.Domain
		if d == "ai.onnx" {
			d = ""
		}
		if d == domain {
			return o.Version
		}
	}
	return 0
}

// Function is a model-local function (FunctionProto). Its body is a Graph
// whose Inputs and Outputs are the formal parameters.
type Function struct {
	Name      string
	Domain    string
	Overload  string
	AttrNames []string
	// AttrDefaults holds attribute_proto entries: attributes with defaults.
	AttrDefaults []*Attribute
	Opsets       []OpsetImport
	Body         *Graph
	Doc          string
}

// Graph is a computation graph: nodes in topological order, the values they
// read and write, graph inputs, outputs and initializers. Subgraphs (If,
// Loop, Scan bodies) have Parent set and may read values of enclosing graphs.
//
// Producer/consumer links are kept consistent by the editing methods below;
// code outside this package must not assign Node.Inputs/Outputs directly
// once a node is in a graph.
type Graph struct {
	Name         string
	Doc          string
	Nodes        []*Node  // topological order
	Inputs       []*Value // graph inputs, initializers excluded
	Outputs      []*Value
	Initializers []*Value // values whose Const is the initializer tensor
	Parent       *Graph

	// ValueInfo holds types declared in the file for intermediate values.
	// They are never used as inference results, only checked against them.
	// A declaration of a value of g that has no other Declared type is
	// kept as that value's Declared instead (see DeclaredInfo).
	ValueInfo map[string]TypeInfo

	// Session, when set, is what a runtime that optimizes the graph
	// before its symbolic dims are bound knew of it (passes.ORTSession:
	// onnxruntime's, at session creation). Passes that model that
	// runtime's shape-dependent fusions consult it. Nil: the runtime sees
	// the graph as bound.
	Session *Session

	values  map[string]*Value
	nameSeq int
	// nodeNames, once NameNodes has run, holds every name g's nodes have
	// had (see nameFilter).
	nodeNames *nameFilter

	// batch is the nesting depth of Batch calls; while it is positive,
	// splice leaves replaced nodes in Nodes as placeholders and stale
	// counts them, for one compaction when the outermost Batch ends.
	batch int
	stale int

	// edits counts the changes to the node list (a node added, removed
	// or moved), so that ops, the op-type index of AppendNodesOfType
	// (opindex.go), knows when it is stale.
	edits uint64
	ops   *opIndex

	// removed lists the nodes taken out of g since the last
	// ReleaseRemoved (see there).
	removed []*Node
}

// Session is what a runtime knew of a graph when it optimized it, before
// the graph's symbolic dims were bound (see Graph.Session).
type Session struct {
	// Shapes holds its shape of each value; an unranked one is a shape it
	// did not know at all. A value missing here has the shape it has now.
	Shapes map[*Value]Shape
	// Known marks the values whose contents it could compute ahead
	// (from initializers, Constants and shapes it knew); with
	// initializers, the only ones its constant folding takes.
	Known map[*Value]bool
	// Host marks the values, not Known, that it computes at run time on
	// the CPU rather than with GPU kernels (onnxruntime's CUDA provider
	// runs the shape arithmetic of a dim symbolic in the file there).
	Host map[*Value]bool
	// Uploads and Downloads list, per node of the optimized graph, the
	// values the runtime copies to the device before it (host values it
	// reads in device memory) and to the host for it (device values it
	// reads in host memory: the host waits for the device), each value
	// once (passes.ORTCopies).
	Uploads, Downloads map[*Node][]*Value
}

// Ahead reports whether the runtime had v's contents before the run: an
// initializer or a value it folded.
func (s *Session) Ahead(v *Value) bool { return v.IsInitializer || s.Known[v] }

// OnHost reports whether the runtime computes every output of n, one at
// least, on the host (Host).
func (s *Session) OnHost(n *Node) bool {
	return n.AllOutputs(func(o *Value) bool { return s.Host[o] })
}

// OnDevice reports whether the runtime runs n as GPU kernels: not a
// Constant or a node the build folds, nor one whose outputs it had
// ahead or computes on the host. Under a nil session (the runtime sees
// the graph as bound) every other node runs on the device.
func (s *Session) OnDevice(n *Node) bool {
	if (n.Domain == "" && n.OpType == "Constant") || n.BuildTime() {
		return false
	}
	return s == nil || (!n.AllOutputs(s.Ahead) && !s.OnHost(n))
}

// TypeInfo is a declared type from value_info or a graph input/output.
type TypeInfo struct {
	Kind  ValueKind
	DType DType
	Shape Shape
}

// ValueKind tells tensors from the other ONNX value types.
type ValueKind uint8

const (
	TensorValue ValueKind = iota
	SequenceValue
	OptionalValue
	MapValue
	SparseTensorValue
)

// Value is a named tensor (or sequence/optional/map) in a graph.
type Value struct {
	Name string
	Kind ValueKind
	// IsInitializer marks a value that is a graph initializer. (The flags
	// sit beside Kind, in what would be padding: a 112k-node graph has
	// 125k values.)
	IsInitializer bool
	// infoDeclared marks a Declared that came from the graph's value_info
	// and is kept only here, not also in Graph.ValueInfo: holding each
	// declaration twice (pointer here, copy in the map keyed by name) cost
	// a map entry and a hash insert per value on a 112k-node graph.
	infoDeclared bool
	// removed marks a value RemoveValue took out of its graph's name
	// table while leaving the entry in place (see RemoveValue).
	removed bool
	DType   DType // element type; for a sequence or optional, its element's
	Shape   Shape

	// Const is the tensor's contents when known: an initializer, a
	// Constant node's output, or a small tensor computed by inference.
	Const *Tensor
	// SymInts is for small 1-D int64 tensors computed from shapes: per-element dims, symbolic where unknown.
	// Shape inference sets it (instead of Const) when some element is
	// symbolic, e.g. Shape(x) for x of shape [batch,3] gives [batch,3].
	SymInts []Dim
	// infoRaw is the value's value_info type still encoded (a serialized
	// TypeProto), as the reader keeps it: see valueInfo.
	infoRaw string
	// Declared is the type the file declared for this value (graph input,
	// output or value_info), kept to check inference against.
	Declared *TypeInfo

	Producer  *Node // nil for graph inputs, initializers and outer values
	Consumers []*Node
}

// Node is one operator application.
type Node struct {
	Name    string
	OpType  string
	Domain  string   // "" for the default ONNX domain
	Inputs  []*Value // nil for an omitted optional input
	Outputs []*Value // nil for an omitted optional output
	Attrs   []*Attribute

	// FusedFrom lists the names of the nodes a fusion pass replaced with
	// this node, in their original order.
	FusedFrom []string

	// extra holds what few nodes carry (see Doc and Metadata): kept out of
	// line, as a 112k-node graph would spend 4.5 MB on empty fields.
	extra *nodeExtra

	graph *Graph
	pos   int // index in graph.Nodes when last known: a hint (see indexOf)
}

// Graph returns the graph the node belongs to.
func (n *Node) Graph() *Graph { return n.graph }

// nodeExtra is a node's doc string and metadata_props, and what its plan
// decided about it ahead of time: the model FLOPs it precomputed
// (FoldedFLOPs) and whether the engine computes the node when it is built
// (BuildTime), whether its runtime writes its output into its first
// input (InPlace), and the module path a pass gave it (ModulePath). The
// first three are never written to a file; the module path is, as
// metadata (ModulePathKey), where it differs from the exporter's.
type nodeExtra struct {
	doc         string
	metadata    []KeyValue
	foldedFLOPs float64
	buildTime   bool
	inPlace     bool
	moduleSet   bool
	module      string
}

// editExtra gives n a changed copy of its extra record: nodes never share
// one, so changing one node's leaves another's as it was.
func (n *Node) editExtra(edit func(*nodeExtra)) {
	var e nodeExtra
	if n.extra != nil {
		e = *n.extra
	}
	edit(&e)
	n.extra = &e
}

// FoldedFLOPs is the model arithmetic of nodes a plan folded into this
// one ahead of time (a BatchNormalization folded into its convolution's
// weights): part of the model's FLOPs, which are the same in every plan,
// though no kernel runs it. 0 for most nodes.
func (n *Node) FoldedFLOPs() float64 {
	if n.extra == nil {
		return 0
	}
	return n.extra.foldedFLOPs
}

// AddFoldedFLOPs adds f to FoldedFLOPs.
func (n *Node) AddFoldedFLOPs(f float64) {
	if f == 0 {
		return
	}
	n.editExtra(func(e *nodeExtra) { e.foldedFLOPs += f })
}

// BuildTime reports whether the plan has the engine compute n once, when
// it is built, rather than on every run: a node computed from constants
// alone (a causal mask, rotary tables), as onnxruntime's and TensorRT's
// constant folding does. Such a node is still the model's arithmetic, but
// no kernel runs it.
func (n *Node) BuildTime() bool { return n.extra != nil && n.extra.buildTime }

// SetBuildTime marks n as computed when the engine is built.
func (n *Node) SetBuildTime() { n.editExtra(func(e *nodeExtra) { e.buildTime = true }) }

// InPlace reports whether the plan's runtime writes n's output 0 into the
// buffer of its input 0 (PyTorch's output.add_(bias) after a cuDNN
// convolution), so that, where nothing reads that input afterwards, n
// allocates nothing. Whether an op may is the op's (OpSchema.InPlaceIO);
// this is what a plan knows the runtime does with one node.
func (n *Node) InPlace() bool { return n.extra != nil && n.extra.inPlace }

// SetInPlace marks n as writing output 0 into input 0 (InPlace).
func (n *Node) SetInPlace() { n.editExtra(func(e *nodeExtra) { e.inPlace = true }) }

// Doc returns the node's doc_string.
func (n *Node) Doc() string {
	if n.extra == nil {
		return ""
	}
	return n.extra.doc
}

// Metadata returns NodeProto.metadata_props (field 9, IR version 10):
// named strings that viewers such as Netron show with the node.
func (n *Node) Metadata() []KeyValue {
	if n.extra == nil {
		return nil
	}
	return n.extra.metadata
}

// SetDoc sets the node's doc_string.
func (n *Node) SetDoc(doc string) {
	if doc == "" && n.extra == nil {
		return
	}
	n.editExtra(func(e *nodeExtra) { e.doc = doc })
}

// SetMetadata sets the node's metadata_props. Nodes never share the
// record, so setting one node's leaves another's as it was.
func (n *Node) SetMetadata(kv []KeyValue) {
	if len(kv) == 0 && n.extra == nil {
		return
	}
	n.editExtra(func(e *nodeExtra) { e.metadata = kv })
}

// In returns input i, or nil when absent.
func (n *Node) In(i int) *Value {
	if i < 0 || i >= len(n.Inputs) {
		return nil
	}
	return n.Inputs[i]
}

// Out returns output i, or nil when absent.
func (n *Node) Out(i int) *Value {
	if i < 0 || i >= len(n.Outputs) {
		return nil
	}
	return n.Outputs[i]
}

// AllOutputs reports whether n has an output and every present one
// satisfies ok.
func (n *Node) AllOutputs(ok func(*Value) bool) bool {
	any := false
	for _, o := range n.Outputs {
		if o == nil {
			continue
		}
		if !ok(o) {
			return false
		}
		any = true
	}
	return any
}

// Subgraphs returns the graphs held in the node's attributes, in attribute order.
func (n *Node) Subgraphs() []*Graph {
	var gs []*Graph
	for _, a := range n.Attrs {
		if a.G() != nil {
			gs = append(gs, a.G())
		}
		gs = append(gs, a.Graphs()...)
	}
	return gs
}

// NewGraph returns an empty graph.
func NewGraph(name string) *Graph {
	return &Graph{Name: name, values: map[string]*Value{}, ValueInfo: map[string]TypeInfo{}}
}

// NewSubgraph returns an empty graph nested in parent.
func NewSubgraph(name string, parent *Graph) *Graph {
	g := NewGraph(name)
	g.Parent = parent
	return g
}

// Lookup finds a value by name in g or, failing that, in enclosing graphs.
func (g *Graph) Lookup(name string) *Value {
	for s := g; s != nil; s = s.Parent {
		if v := s.value(name); v != nil {
			return v
		}
	}
	return nil
}

// lookupBytes is Lookup for a name held as bytes (the map index with a
// converted key does not allocate).
func (g *Graph) lookupBytes(name []byte) *Value {
	for s := g; s != nil; s = s.Parent {
		if v := s.values[string(name)]; v != nil && !v.removed {
			return v
		}
	}
	return nil
}

// reserveValues grows g's name table for about n more values at once,
// rather than by repeated doubling and rehashing.
func (g *Graph) reserveValues(n int) {
	if n <= len(g.values) {
		return
	}
	m := make(map[string]*Value, len(g.values)+n)
	for k, v := range g.values {
		m[k] = v
	}
	g.values = m
}

// Local finds a value defined in g itself.
func (g *Graph) Local(name string) *Value { return g.value(name) }

// Holds reports whether v is the value registered in g under its name
// (Local(v.Name) == v). A value written by a node of g is registered in g
// when it is created and stays so until removed (forgetOwn relies on the
// same), so Holds answers for it without hashing the name: names point
// into the model file, whose pages a command drops after reading, and a
// lookup per value read them back (19 MB on a 112k-node graph).
func (g *Graph) Holds(v *Value) bool {
	if p := v.Producer; p != nil && p.graph == g {
		return !v.removed
	}
	return g.value(v.Name) == v
}

// value is the value named name in g's name table, or nil: absent, or
// removed (RemoveValue).
func (g *Graph) value(name string) *Value {
	if v := g.values[name]; v != nil && !v.removed {
		return v
	}
	return nil
}

// Values returns the values of g sorted by name (deterministic order).
func (g *Graph) Values() []*Value {
	vs := make([]*Value, 0, len(g.values))
	for _, v := range g.values {
		if !v.removed {
			vs = append(vs, v)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
	return vs
}

// NewValue creates a value named name in g. It fails if g already has one.
func (g *Graph) NewValue(name string) (*Value, error) {
	if name == "" {
		return nil, fmt.Errorf("value with empty name")
	}
	if g.value(name) != nil {
		return nil, fmt.Errorf("value %q defined twice", name)
	}
	v := &Value{Name: name}
	g.values[name] = v
	return v, nil
}

// UniqueName returns a value or node name based on prefix that no value in
// g or its parents uses yet.
func (g *Graph) UniqueName(prefix string) string {
	for {
		g.nameSeq++
		name := prefix + "_" + strconv.Itoa(g.nameSeq)
		if g.Lookup(name) == nil && !g.hasNodeNamed(name) {
			g.noteNodeName(name)
			return name
		}
	}
}

// hasNodeNamed reports whether a node of g is named name.
func (g *Graph) hasNodeNamed(name string) bool {
	if f := g.nodeNames; f != nil && !f.has(name) {
		return false
	}
	return slices.ContainsFunc(g.Nodes, func(n *Node) bool { return n.Name == name && n.graph == g })
}

// noteNodeName records a name handed out for a node (or a value: the
// filter may hold more than node names) in g's filter, if it has one.
func (g *Graph) noteNodeName(name string) {
	if g.nodeNames != nil {
		g.nodeNames.add(name)
	}
}

// AddInput appends a graph input.
func (g *Graph) AddInput(v *Value) { g.Inputs = append(g.Inputs, v) }

// AddOutput appends a graph output.
func (g *Graph) AddOutput(v *Value) { g.Outputs = append(g.Outputs, v) }

// AddInitializer records v as an initializer holding t.
func (g *Graph) AddInitializer(v *Value, t *Tensor) {
	v.Const = t
	v.IsInitializer = true
	v.DType = t.DType
	v.Shape = t.Shape()
	g.Initializers = append(g.Initializers, v)
}

// AddNode appends n to the graph and links its producers and consumers.
// Outputs must not already have a producer. The caller keeps topological
// order by adding nodes after their inputs' producers (or calls Toposort).
func (g *Graph) AddNode(n *Node) error {
	for _, o := range n.Outputs {
		if o == nil {
			continue
		}
		if o.Producer != nil {
			return fmt.Errorf("value %q produced by both %q and %q", o.Name, o.Producer.Name, n.Name)
		}
	}
	g.link(n)
	n.pos = len(g.Nodes)
	g.Nodes = append(g.Nodes, n)
	return nil
}

// link makes n part of g: n produces its outputs and consumes its inputs.
// The caller places n in g.Nodes.
func (g *Graph) link(n *Node) {
	n.graph = g
	g.edits++
	for _, o := range n.Outputs {
		if o != nil {
			o.Producer = n
		}
	}
	for _, in := range n.Inputs {
		if in != nil {
			in.Consumers = append(in.Consumers, n)
		}
	}
}

// linkNode appends n, whose outputs' Producer is already n (the reader
// sets it when it creates them), and links it as its inputs' consumer.
func (g *Graph) linkNode(n *Node) {
	n.graph = g
	g.edits++
	for _, in := range n.Inputs {
		if in != nil {
			in.Consumers = append(in.Consumers, n)
		}
	}
	n.pos = len(g.Nodes)
	g.Nodes = append(g.Nodes, n)
}

// InsertNodeBefore adds n just before the node at, keeping topological order
// when n reads only values available at that point.
func (g *Graph) InsertNodeBefore(n, at *Node) error {
	if err := g.AddNode(n); err != nil {
		return err
	}
	g.Nodes = g.Nodes[:len(g.Nodes)-1]
	idx := g.indexOf(at)
	if idx < 0 {
		idx = len(g.Nodes)
	}
	g.Nodes = append(g.Nodes, nil)
	g.edits++
	copy(g.Nodes[idx+1:], g.Nodes[idx:])
	g.Nodes[idx] = n
	n.pos = idx
	return nil
}

// indexOf finds n in g.Nodes from its position hint: edits since the hint
// was set move a node by at most a few places, so it looks near the hint
// first and renumbers every node only when that fails. A linear scan per
// call made the fusion passes quadratic: on a 112k-node graph, removing
// the fused nodes took 0.9 s per pass run.
func (g *Graph) indexOf(n *Node) int {
	if h := n.pos; h >= 0 && h < len(g.Nodes) && g.Nodes[h] == n {
		return h
	}
	const window = 256
	// Removals before a node move it down, insertions up: look down first.
	for d := 1; d <= window; d++ {
		if i := n.pos - d; i >= 0 && i < len(g.Nodes) && g.Nodes[i] == n {
			n.pos = i
			return i
		}
	}
	for d := 1; d <= window; d++ {
		if i := n.pos + d; i >= 0 && i < len(g.Nodes) && g.Nodes[i] == n {
			n.pos = i
			return i
		}
	}
	for i, m := range g.Nodes {
		m.pos = i
	}
	if h := n.pos; h >= 0 && h < len(g.Nodes) && g.Nodes[h] == n {
		return h
	}
	return -1
}

// Position returns n's index in g.Nodes, or -1 when n is not in g. Inside
// a Batch nodes keep their slots while others are replaced, so a node's
// position stays what it was when the Batch began.
func (g *Graph) Position(n *Node) int {
	if n == nil || n.graph != g {
		return -1
	}
	return g.indexOf(n)
}

// RemoveNode unlinks n from the graph. Its outputs lose their producer;
// callers must rewire or delete their uses first.
func (g *Graph) RemoveNode(n *Node) {
	g.unlink(n)
	g.edits++
	if i := g.indexOf(n); i >= 0 {
		g.Nodes = slices.Delete(g.Nodes, i, i+1) // clears the vacated slot: a stale pointer there would keep n alive
	}
}

// RemoveNodesBackward visits g's nodes from last to first and removes
// each one dead reports true for, seeing the removals of later nodes (so
// a dead chain goes in one sweep), with one compaction of the node list
// at the end. The names of the removed nodes' outputs are free again, as
// after RemoveValue: dead must report only nodes whose outputs nothing
// reads. It returns the removed nodes, last first. Removing them one
// by one with RemoveNode shifted the list for each: on a 112k-node graph
// that was most of the dead-code sweep.
func (g *Graph) RemoveNodesBackward(dead func(*Node) bool) []*Node {
	var removed []*Node
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		if n := g.Nodes[i]; dead(n) {
			g.unlink(n)
			// forgetOwn, not RemoveValue: its name lookup hashed every
			// dead value's name, and the names point into the model
			// file, whose pages the command has dropped by then: a fused
			// 112k-node graph read 17 MB of the file back for them.
			for _, o := range n.Outputs {
				if o != nil {
					g.forgetOwn(o)
				}
			}
			removed = append(removed, n)
		}
	}
	if len(removed) == 0 {
		return nil
	}
	g.compact()
	return removed
}

// compact drops from g.Nodes every node no longer in g, keeping the
// order of the rest and renumbering their position hints.
func (g *Graph) compact() {
	g.edits++
	w := 0
	for _, n := range g.Nodes {
		if n.graph == g {
			n.pos = w
			g.Nodes[w] = n
			w++
		}
	}
	clear(g.Nodes[w:])
	g.Nodes = g.Nodes[:w]
	g.stale = 0
}

// Batch runs edit with the compaction of g.Nodes after each ReplaceNodes
// deferred to a single one when edit returns (also on error). Meanwhile
// g.Nodes may hold nodes that were replaced, with Graph() no longer g:
// edit must skip them (and must not index g.Nodes by position). The final
// order is exactly the one eager compaction gives. Compacting after every
// fusion moved the rest of the list each time: on a 112k-node LLaMA-shaped
// graph, with the renumbering that followed, about a third of the passes'
// time.
func (g *Graph) Batch(edit func() error) error {
	g.batch++
	defer func() {
		if g.batch--; g.batch == 0 && g.stale > 0 {
			g.compact()
		}
	}()
	return edit()
}

// unlink undoes link: n no longer consumes its inputs, produces its
// outputs or belongs to a graph. The caller takes n out of g.Nodes.
func (g *Graph) unlink(n *Node) {
	if g.removed == nil {
		// Sized once: a fusion pass over a large graph removes a good
		// part of it, and a list grown from nothing allocated twice that.
		g.removed = make([]*Node, 0, len(g.Nodes)/2)
	}
	g.removed = append(g.removed, n)
	for _, in := range n.Inputs {
		if in != nil {
			in.removeConsumer(n)
		}
	}
	for _, o := range n.Outputs {
		if o != nil && o.Producer == n {
			o.Producer = nil
		}
	}
	if n.graph != nil {
		n.graph.edits++
	}
	n.graph = nil
}

// ReleaseRemoved empties the nodes removed from g since the last call:
// their attributes, input and output lists go, and so do the contents
// (shape, constant, declaration) of each of their outputs that left the
// graph with them; names and op types stay, for messages. Call it when
// nothing will read those nodes again (the pass driver does, after each
// pass). A removed node would otherwise keep all that alive for as long
// as the graph: the reader allocates a graph's nodes as one array, and
// values in slabs, so one live node keeps every node of the graph in
// memory. On a 112k-node LLaMA-shaped graph the fused plan's live heap
// was 108.3 MB, 84.9 MB with the replaced nodes released (live-MB of
// BenchmarkScaleStages/passes in cmd/onnxcost).
func (g *Graph) ReleaseRemoved() {
	for _, n := range g.removed {
		if n.graph != nil {
			continue // put back into a graph since
		}
		for _, o := range n.Outputs {
			if o != nil && o.Producer == nil && len(o.Consumers) == 0 && (o.removed || g.values[o.Name] != o) && !g.IsGraphOutput(o) {
				*o = Value{Name: o.Name, removed: o.removed}
			}
		}
		*n = Node{Name: n.Name, OpType: n.OpType, Domain: n.Domain}
	}
	clear(g.removed)
	g.removed = g.removed[:0]
}

// splice swaps the nodes old for n in one edit of the node list: n takes
// the place of old's last node, the others leave the graph, and
// producer/consumer links follow. ReplaceNodes (replace.go) checks the
// rewrite first; splice only moves, once for the whole group instead of
// once per removed node (RemoveNode shifts the list each time, which made
// fusing a 112k-node graph spend 0.2 s moving memory).
func (g *Graph) splice(old []*Node, n *Node) error {
	if len(old) == 0 {
		return fmt.Errorf("replacing no nodes with %q", n.Name)
	}
	// Positions are needed only to close the holes outside a Batch; in
	// one, only the last node's slot matters.
	var idx []int
	if g.batch == 0 {
		idx = make([]int, len(old))
	}
	at := -1
	for k, m := range old {
		i := g.indexOf(m)
		if i < 0 {
			return fmt.Errorf("node %q is not in graph %q", m.Name, g.Name)
		}
		if idx != nil {
			idx[k] = i
		}
		at = i
	}
	inOld := newNodeSet(old)
	for _, o := range n.Outputs {
		if o != nil && o.Producer != nil && !inOld.has(o.Producer) {
			return fmt.Errorf("value %q produced by both %q and %q", o.Name, o.Producer.Name, n.Name)
		}
	}
	for _, m := range old {
		g.unlink(m)
	}
	g.link(n)
	g.Nodes[at] = n
	n.pos = at
	if g.batch > 0 {
		// The other old nodes stay in their slots, unlinked, until Batch
		// compacts the list once; nothing moves, so every position hint
		// stays exact.
		g.stale += len(old) - 1
		return nil
	}
	holes := idx[:len(idx)-1] // idx is this call's own
	slices.Sort(holes)
	holes = slices.Compact(holes)
	if len(holes) == 0 {
		return nil
	}
	w := holes[0]
	for h, hole := range holes {
		end := len(g.Nodes)
		if h+1 < len(holes) {
			end = holes[h+1]
		}
		w += copy(g.Nodes[w:], g.Nodes[hole+1:end])
	}
	clear(g.Nodes[w:])
	g.Nodes = g.Nodes[:w]
	shift, _ := slices.BinarySearch(holes, at)
	n.pos = at - shift
	return nil
}

// DeclaredInfo returns the value_info declaration of the value named
// name in g, or nil: an entry of g.ValueInfo, or else the Declared type
// the reader attached to the value itself.
func (g *Graph) DeclaredInfo(name string) *TypeInfo {
	if ti, ok := g.ValueInfo[name]; ok {
		return &ti
	}
	if v := g.value(name); v != nil {
		return v.valueInfo()
	}
	return nil
}

// valueInfo returns v's value_info declaration, decoded afresh when the
// reader kept it encoded, or nil.
func (v *Value) valueInfo() *TypeInfo {
	if v.infoDeclared {
		return v.Declared
	}
	if v.infoRaw == "" {
		return nil
	}
	var d infoDecoder
	ti := d.decode(v.infoRaw)
	ti.Shape = ti.Shape.Clone()
	return &ti
}

// infoDecoder decodes the value_info types the reader kept encoded. The
// dims of a result are reused by the next decode.
type infoDecoder struct{ r reader }

// decode decodes a TypeProto the reader already checked; it cannot fail
// (an unknown type decodes as unranked).
func (d *infoDecoder) decode(raw string) TypeInfo {
	b := unsafe.Slice(unsafe.StringData(raw), len(raw))
	d.r.data, d.r.lim, d.r.share, d.r.scratch = b, &DefaultLimits, true, true
	ti, err := d.r.typeProto(b, 0, 0)
	if err != nil {
		return TypeInfo{Kind: TensorValue, Shape: Unranked()}
	}
	return ti
}

// DropValueInfo forgets g's value_info declarations, so inference no
// longer checks against them (Declared types stay on their values).
func (g *Graph) DropValueInfo() {
	g.ValueInfo = nil
	for _, v := range g.values {
		if !v.removed {
			v.infoDeclared, v.infoRaw = false, ""
		}
	}
}

// RemoveValue forgets an unused value: its name is free again in g.
//
// The value keeps its entry in the name table, marked removed, when it is
// the value registered under its name: fusing a 112k-node LLaMA-shaped
// graph removes about 84k of its 125k values, and deleting them from the
// map was 13% of the fused plan's CPU time (48 ms; a lookup alone, as
// here, about half of that, and ReplaceNodes spares even the lookup with
// forgetOwn). Every read of the table skips marked entries (value).
func (g *Graph) RemoveValue(v *Value) {
	switch e := g.values[v.Name]; {
	case e == v:
		v.removed = true
	case e != nil:
		delete(g.values, v.Name)
	}
}

// forgetOwn is RemoveValue for a value a node of g wrote, which g's name
// table holds under its name (a value is created in the graph of the node
// that writes it): it spares RemoveValue's lookup, 26 ms of CPU over the
// 84k values ReplaceNodes removes in the fused plan of a 112k-node
// LLaMA-shaped graph.
func (g *Graph) forgetOwn(v *Value) { v.removed = true }

func (v *Value) removeConsumer(n *Node) {
	for i, c := range v.Consumers {
		if c == n {
			v.Consumers = slices.Delete(v.Consumers, i, i+1) // clears the vacated slot (see RemoveNode)
			return
		}
	}
}

// SetInput makes input i of n read v, keeping consumer lists consistent.
func (g *Graph) SetInput(n *Node, i int, v *Value) {
	for len(n.Inputs) <= i {
		n.Inputs = append(n.Inputs, nil)
	}
	if old := n.Inputs[i]; old != nil {
		old.removeConsumer(n)
	}
	n.Inputs[i] = v
	if v != nil {
		v.Consumers = append(v.Consumers, n)
	}
}

// ReplaceAllUses makes every consumer of old (and the graph outputs) read
// repl instead.
func (g *Graph) ReplaceAllUses(old, repl *Value) {
	for _, c := range append([]*Node(nil), old.Consumers...) {
		for i, in := range c.Inputs {
			if in == old {
				g.SetInput(c, i, repl)
			}
		}
	}
	for i, o := range g.Outputs {
		if o == old {
			g.Outputs[i] = repl
		}
	}
}

// IsGraphInput reports whether v is an input of g (initializers aside).
func (g *Graph) IsGraphInput(v *Value) bool { return slices.Contains(g.Inputs, v) }

// IsGraphOutput reports whether v is an output of g.
func (g *Graph) IsGraphOutput(v *Value) bool { return slices.Contains(g.Outputs, v) }

// Toposort reorders g.Nodes topologically, keeping the existing relative
// order where dependencies allow (so a sorted file keeps its order). It
// returns an error naming the nodes on a cycle. Values read from enclosing
// graphs or by subgraphs of a node count as that node's inputs.
//
// The order is exactly that of gonum's topo.SortStabilized with nodes
// numbered by position (the sort this replaced, kept so that every output
// stays byte-identical): Tarjan's strongly connected components, roots and
// successors visited in descending position, components emitted in
// post-order and reversed. gonum builds it over a map-backed
// simple.DirectedGraph with map-based index tables; on a 112,041-node
// LLaMA-shaped graph that took 0.8–1.1 s of a 2.3 s read and allocated per
// node and edge. The same algorithm on dense ids and slices (sortStable
// below) is O(nodes + edges) with a handful of allocations.
func (g *Graph) Toposort() error {
	nn := len(g.Nodes)
	for i, n := range g.Nodes {
		n.pos = i
	}
	// succ[start[j]:start[j+1]] are the consumers of node j, ascending
	// and without repeats; built in two passes (count, then fill).
	start := make([]int32, nn+1)
	var edges int
	sorted := true
	err := g.eachEdge(func(from, to int) {
		start[from+1]++
		edges++
		sorted = sorted && from < to
	})
	if err != nil || sorted {
		// With every edge pointing forward, the sort returns the order
		// it was given: roots are taken in descending position, so each
		// node is reached only after all its (later) successors are
		// emitted, and the reversed post-order is the identity. Exporters
		// write nodes in order, and the sort's bookkeeping was 6 MB on a
		// 112k-node graph.
		return err
	}
	for j := 0; j < nn; j++ {
		start[j+1] += start[j]
	}
	succ := make([]int32, edges)
	fill := append([]int32(nil), start[:nn]...)
	_ = g.eachEdge(func(from, to int) {
		// Consumers come in ascending order (eachEdge walks nodes in
		// order), so a repeated edge is the previous entry.
		if k := fill[from]; k > start[from] && succ[k-1] == int32(to) {
			return
		}
		succ[fill[from]] = int32(to)
		fill[from]++
	})
	order, cycle := sortStable(nn, start, fill, succ)
	if cycle != nil {
		first := g.Nodes[cycle[0]]
		return fmt.Errorf("cycle through node %q (%s) and %d other node(s)", first.Name, first.OpType, len(cycle)-1)
	}
	nodes := make([]*Node, nn)
	for k, i := range order {
		nodes[k] = g.Nodes[i]
	}
	g.Nodes = nodes
	g.edits++
	return nil
}

// eachEdge calls edge(producer, consumer) for every dependency between
// nodes of g, by consumer position and then input order. Node.pos must be
// current. A node reading its own output is an error.
func (g *Graph) eachEdge(edge func(from, to int)) error {
	for i, n := range g.Nodes {
		visit := func(in *Value) error {
			p := in.Producer
			if p == nil || p.graph != g || p.pos >= len(g.Nodes) || g.Nodes[p.pos] != p {
				return nil // a graph input, or produced in an outer scope
			}
			if p.pos == i {
				return fmt.Errorf("cycle: node %q reads its own output %q", n.Name, in.Name)
			}
			edge(p.pos, i)
			return nil
		}
		for _, in := range n.Inputs {
			if in != nil {
				if err := visit(in); err != nil {
					return err
				}
			}
		}
		if !n.hasSubgraphs() {
			continue
		}
		for _, sg := range n.Subgraphs() {
			for _, in := range sg.OuterReads() {
				if err := visit(in); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// hasSubgraphs reports whether any attribute of n holds a graph, without
// allocating.
func (n *Node) hasSubgraphs() bool {
	for _, a := range n.Attrs {
		if a.G() != nil || len(a.Graphs()) > 0 {
			return true
		}
	}
	return false
}

// sortStable is gonum's stabilised Tarjan sort (see Toposort) on a graph of
// n nodes whose successors of j are succ[start[j]:end[j]], ascending. It
// returns the topological order, or, for a graph with a cycle, the members
// (ascending) of the cyclic component gonum reports first. The depth-first
// search keeps an explicit stack so that a 100k-deep chain cannot exhaust
// the goroutine stack.
func sortStable(n int, start, end, succ []int32) (order []int32, cycle []int32) {
	const unvisited = 0
	index := make([]int32, n) // discovery number, from 1
	low := make([]int32, n)
	onStack := make([]bool, n)
	stack := make([]int32, 0, 64) // Tarjan's component stack
	type frame struct {
		v    int32
		next int32 // position in succ of the next successor to visit, counting down
	}
	var frames []frame
	post := make([]int32, 0, n) // components' nodes in emission order
	var comps []int32           // end offset in post of each component
	var counter int32
	visit := func(v int32) {
		counter++
		index[v], low[v] = counter, counter
		stack = append(stack, v)
		onStack[v] = true
		frames = append(frames, frame{v: v, next: end[v] - 1})
	}
	for root := int32(n - 1); root >= 0; root-- {
		if index[root] != unvisited {
			continue
		}
		visit(root)
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			v := f.v
			if f.next >= start[v] {
				w := succ[f.next]
				f.next--
				if index[w] == unvisited {
					visit(w)
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			// All successors done: pop the frame, fold low into the parent.
			frames = frames[:len(frames)-1]
			if len(frames) > 0 {
				p := frames[len(frames)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				post = append(post, w)
				if w == v {
					break
				}
			}
			comps = append(comps, int32(len(post)))
		}
	}
	// Reverse the component order; a component of more than one node is a
	// cycle, and gonum reports the last one emitted first.
	order = make([]int32, 0, n)
	for c := len(comps) - 1; c >= 0; c-- {
		lo := int32(0)
		if c > 0 {
			lo = comps[c-1]
		}
		members := post[lo:comps[c]]
		if len(members) != 1 {
			cycle = append([]int32(nil), members...)
			slices.Sort(cycle)
			return nil, cycle
		}
		order = append(order, members[0])
	}
	return order, nil
}

// OuterReads lists values defined outside g (in enclosing graphs) that
// nodes of g or of its nested subgraphs read.
func (g *Graph) OuterReads() []*Value {
	var out []*Value
	seen := map[*Value]bool{}
	var walk func(s *Graph)
	walk = func(s *Graph) {
		for _, n := range s.Nodes {
			for _, in := range n.Inputs {
				if in != nil && !seen[in] && g.value(in.Name) != in && !definedBelow(g, s, in) {
					seen[in] = true
					out = append(out, in)
				}
			}
			for _, sub := range n.Subgraphs() {
				walk(sub)
			}
		}
	}
	walk(g)
	return out
}

// definedBelow reports whether v is defined in s or a graph between s and g.
func definedBelow(g, s *Graph, v *Value) bool {
	for c := s; c != nil && c != g; c = c.Parent {
		if c.value(v.Name) == v {
			return true
		}
	}
	return false
}

// NodeCount counts nodes in g and, recursively, in its subgraphs.
func (g *Graph) NodeCount() int {
	n := 0
	for _, nd := range g.Nodes {
		n++
		if nd.hasSubgraphs() {
			for _, sg := range nd.Subgraphs() {
				n += sg.NodeCount()
			}
		}
	}
	return n
}
