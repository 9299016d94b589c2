package ir

import "slices"

// AttrType is onnx.AttributeProto.AttributeType.
type AttrType int32

const (
	AttrUndefined     AttrType = 0
	AttrFloat         AttrType = 1
	AttrInt           AttrType = 2
	AttrString        AttrType = 3
	AttrTensor        AttrType = 4
	AttrGraph         AttrType = 5
	AttrFloats        AttrType = 6
	AttrInts          AttrType = 7
	AttrStrings       AttrType = 8
	AttrTensors       AttrType = 9
	AttrGraphs        AttrType = 10
	AttrSparseTensor  AttrType = 11
	AttrSparseTensors AttrType = 12
	AttrTypeProto     AttrType = 13
	AttrTypeProtos    AttrType = 14
)

// Attribute is one node attribute. Exactly the fields matching Type are set.
//
// Subgraphs, tensor lists, ref_attr_name and doc_string (G, Graphs,
// Tensors, RefAttrName, Doc: read and set through methods) are kept out
// of line: few attributes carry them, and inline they made every
// attribute 224 bytes instead of 144. The fused plan of a 112k-node
// LLaMA-shaped graph holds ~120k attributes at its peak (a fused node
// records its parts in four).
type Attribute struct {
	Name string
	Type AttrType

	F       float64
	I       int64
	S       string
	T       *Tensor
	Floats  []float64
	Ints    []int64
	Strings []string

	rare *attrRare
}

// attrRare is what few attributes carry (see Attribute).
type attrRare struct {
	g       *Graph
	graphs  []*Graph
	tensors []*Tensor
	// refAttrName is set inside function bodies: the attribute takes the
	// value of the calling node's attribute of that name.
	refAttrName string
	doc         string
}

// GraphAttr returns a GRAPH attribute holding g.
func GraphAttr(name string, g *Graph) *Attribute {
	return &Attribute{Name: name, Type: AttrGraph, rare: &attrRare{g: g}}
}

// G is a GRAPH attribute's subgraph (nil for any other).
func (a *Attribute) G() *Graph {
	if a.rare == nil {
		return nil
	}
	return a.rare.g
}

// Graphs is a GRAPHS attribute's subgraphs.
func (a *Attribute) Graphs() []*Graph {
	if a.rare == nil {
		return nil
	}
	return a.rare.graphs
}

// Tensors is a TENSORS attribute's tensors.
func (a *Attribute) Tensors() []*Tensor {
	if a.rare == nil {
		return nil
	}
	return a.rare.tensors
}

// RefAttrName is set inside function bodies: the attribute takes the value
// of the calling node's attribute of that name.
func (a *Attribute) RefAttrName() string {
	if a.rare == nil {
		return ""
	}
	return a.rare.refAttrName
}

// Doc is the attribute's doc_string.
func (a *Attribute) Doc() string {
	if a.rare == nil {
		return ""
	}
	return a.rare.doc
}

// setRare sets one of a's out-of-line fields on a copy of them: a copied
// Attribute (cp := *a) shares them, and setting one on the copy must not
// change the original. A zero value on an attribute without them stays
// without.
func (a *Attribute) setRare(zero bool, set func(r *attrRare)) {
	if zero && a.rare == nil {
		return
	}
	var r attrRare
	if a.rare != nil {
		r = *a.rare
	}
	set(&r)
	a.rare = &r
}

// SetG sets a GRAPH attribute's subgraph.
func (a *Attribute) SetG(g *Graph) { a.setRare(g == nil, func(r *attrRare) { r.g = g }) }

// SetGraphs sets a GRAPHS attribute's subgraphs.
func (a *Attribute) SetGraphs(gs []*Graph) {
	a.setRare(gs == nil, func(r *attrRare) { r.graphs = gs })
}

// SetTensors sets a TENSORS attribute's tensors.
func (a *Attribute) SetTensors(ts []*Tensor) {
	a.setRare(ts == nil, func(r *attrRare) { r.tensors = ts })
}

// SetRefAttrName sets the name of the calling node's attribute a refers to.
func (a *Attribute) SetRefAttrName(name string) {
	a.setRare(name == "", func(r *attrRare) { r.refAttrName = name })
}

// SetDoc sets the attribute's doc_string.
func (a *Attribute) SetDoc(doc string) { a.setRare(doc == "", func(r *attrRare) { r.doc = doc }) }

// Attr returns the node's attribute with the given name, or nil.
func (n *Node) Attr(name string) *Attribute {
	for _, a := range n.Attrs {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// AttrInt returns an INT attribute, or def when absent.
func (n *Node) AttrInt(name string, def int64) int64 {
	if a := n.Attr(name); a != nil && a.Type == AttrInt {
		return a.I
	}
	return def
}

// AttrFloat returns a FLOAT attribute, or def when absent.
func (n *Node) AttrFloat(name string, def float64) float64 {
	if a := n.Attr(name); a != nil && a.Type == AttrFloat {
		return a.F
	}
	return def
}

// AttrString returns a STRING attribute, or def when absent.
func (n *Node) AttrString(name string, def string) string {
	if a := n.Attr(name); a != nil && a.Type == AttrString {
		return a.S
	}
	return def
}

// AttrInts returns an INTS attribute; ok is false when absent.
func (n *Node) AttrInts(name string) (v []int64, ok bool) {
	if a := n.Attr(name); a != nil && a.Type == AttrInts {
		return a.Ints, true
	}
	return nil, false
}

// AttrStrings returns a STRINGS attribute; ok is false when absent.
func (n *Node) AttrStrings(name string) (v []string, ok bool) {
	if a := n.Attr(name); a != nil && a.Type == AttrStrings {
		return a.Strings, true
	}
	return nil, false
}

// AttrFloats returns a FLOATS attribute; ok is false when absent.
func (n *Node) AttrFloats(name string) (v []float64, ok bool) {
	if a := n.Attr(name); a != nil && a.Type == AttrFloats {
		return a.Floats, true
	}
	return nil, false
}

// SetAttr replaces or adds an attribute, keeping attribute order stable.
func (n *Node) SetAttr(a *Attribute) {
	for i, old := range n.Attrs {
		if old.Name == a.Name {
			n.Attrs[i] = a
			return
		}
	}
	n.Attrs = append(n.Attrs, a)
}

// AttrsWithout is attrs less those named in drop: what a contrib op's
// float counterpart takes when the op's own extras (a layout flag, a fused
// activation) are left out.
func AttrsWithout(attrs []*Attribute, drop ...string) []*Attribute {
	var out []*Attribute
	for _, a := range attrs {
		if !slices.Contains(drop, a.Name) {
			out = append(out, a)
		}
	}
	return out
}

// IntAttr, IntsAttr, FloatAttr and StringAttr build attributes: for
// builders, rewrites and tests that make nodes.
func IntAttr(name string, v int64) *Attribute { return &Attribute{Name: name, Type: AttrInt, I: v} }

// IntsAttr builds an INTS attribute.
func IntsAttr(name string, v ...int64) *Attribute {
	return &Attribute{Name: name, Type: AttrInts, Ints: v}
}

// FloatAttr builds a FLOAT attribute.
func FloatAttr(name string, v float64) *Attribute {
	return &Attribute{Name: name, Type: AttrFloat, F: v}
}

// StringAttr builds a STRING attribute.
func StringAttr(name, v string) *Attribute { return &Attribute{Name: name, Type: AttrString, S: v} }
