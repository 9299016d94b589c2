package ir

import (
	"strconv"
	"strings"
)

// dumpMaxValues is how many elements of a known tensor Dump prints; larger
// tensors appear as dtype and dims only.
const dumpMaxValues = 16

// Dump renders g as canonical text: the graph inputs, initializers and
// outputs, then one line per node in graph order, e.g.
//
//	conv1 = Conv(x:float32[1,3,224,224], w:float32[64,3,11,11]) -> y:float32[1,64,55,55] {kernel_shape=[11,11] strides=[4,4]}
//
// Custom domains prefix the op ("com.foo.Op"); subgraphs follow their node,
// indented. The text depends only on the graph (no map order, no
// addresses), so goldens and round-trip tests can compare it.
func Dump(g *Graph) string {
	var b strings.Builder
	dumpGraph(&b, g, "")
	return b.String()
}

// DumpModel renders the opset imports, the main graph and every
// model-local function body.
func DumpModel(m *Model) string {
	var b strings.Builder
	for _, o := range m.Opsets {
		b.WriteString("opset ")
		b.WriteString(domainName(o.Domain))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(o.Version, 10))
		b.WriteByte('\n')
	}
	if m.Graph != nil {
		dumpGraph(&b, m.Graph, "")
	}
	for _, f := range m.Functions {
		b.WriteString("function ")
		b.WriteString(QualifiedOp(f.Domain, f.Name))
		if f.Overload != "" {
			b.WriteString(":" + f.Overload)
		}
		if len(f.AttrNames) > 0 {
			b.WriteString(" attrs=[" + strings.Join(f.AttrNames, ",") + "]")
		}
		for _, a := range f.AttrDefaults {
			b.WriteString(" " + attrText(a))
		}
		b.WriteByte('\n')
		if f.Body != nil {
			dumpGraph(&b, f.Body, "  ")
		}
	}
	return b.String()
}

func domainName(d string) string {
	if d == "" {
		return "ai.onnx"
	}
	return d
}

func dumpGraph(b *strings.Builder, g *Graph, indent string) {
	b.WriteString(indent + "graph " + strconv.Quote(g.Name) + "\n")
	for _, v := range g.Inputs {
		b.WriteString(indent + "  input " + valueText(v) + "\n")
	}
	for _, v := range g.Initializers {
		b.WriteString(indent + "  init " + valueText(v))
		if v.Const != nil {
			b.WriteString(tensorValues(v.Const))
		}
		b.WriteByte('\n')
	}
	for _, n := range g.Nodes {
		b.WriteString(indent + "  ")
		b.WriteString(nodeText(n))
		b.WriteByte('\n')
		for _, a := range n.Attrs {
			if a.G() != nil {
				b.WriteString(indent + "    @" + a.Name + ":\n")
				dumpGraph(b, a.G(), indent+"      ")
			}
			for i, sg := range a.Graphs() {
				b.WriteString(indent + "    @" + a.Name + "[" + strconv.Itoa(i) + "]:\n")
				dumpGraph(b, sg, indent+"      ")
			}
		}
	}
	for _, v := range g.Outputs {
		b.WriteString(indent + "  output " + valueText(v) + "\n")
	}
}

// NodeText is the one-line form of a node used by Dump and in errors.
func NodeText(n *Node) string { return nodeText(n) }

func nodeText(n *Node) string {
	var b strings.Builder
	b.WriteString(n.Name)
	b.WriteString(" = ")
	b.WriteString(QualifiedOp(n.Domain, n.OpType))
	b.WriteByte('(')
	for i, in := range n.Inputs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(valueText(in))
	}
	b.WriteString(") -> ")
	for i, o := range n.Outputs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(valueText(o))
	}
	var attrs []string
	for _, a := range n.Attrs {
		attrs = append(attrs, attrText(a))
	}
	if len(n.FusedFrom) > 0 {
		attrs = append(attrs, "fused_from=["+strings.Join(n.FusedFrom, ",")+"]")
	}
	if len(attrs) > 0 {
		b.WriteString(" {" + strings.Join(attrs, " ") + "}")
	}
	return b.String()
}

// valueText renders "name:dtype[dims]"; "_" is an omitted optional value.
func valueText(v *Value) string {
	if v == nil {
		return "_"
	}
	return v.Name + ":" + typeText(v.Kind, v.DType, v.Shape)
}

func typeText(k ValueKind, d DType, s Shape) string {
	dt := "?"
	if d != Undefined {
		dt = d.String()
	}
	inner := dt + s.String()
	if !s.Ranked {
		inner = dt
		if d != Undefined {
			inner += "?"
		}
	}
	switch k {
	case SequenceValue:
		return "seq(" + inner + ")"
	case OptionalValue:
		return "opt(" + inner + ")"
	case MapValue:
		return "map(" + inner + ")"
	case SparseTensorValue:
		return "sparse(" + inner + ")"
	}
	return inner
}

func attrText(a *Attribute) string {
	var v string
	switch a.Type {
	case AttrFloat:
		v = fmtFloat(a.F)
	case AttrInt:
		v = strconv.FormatInt(a.I, 10)
	case AttrString:
		v = strconv.Quote(a.S)
	case AttrTensor, AttrSparseTensor:
		v = tensorText(a.T)
	case AttrGraph:
		v = "<graph>"
	case AttrFloats:
		parts := make([]string, len(a.Floats))
		for i, f := range a.Floats {
			parts[i] = fmtFloat(f)
		}
		v = "[" + strings.Join(parts, ",") + "]"
	case AttrInts:
		v = intsText(a.Ints)
	case AttrStrings:
		parts := make([]string, len(a.Strings))
		for i, s := range a.Strings {
			parts[i] = strconv.Quote(s)
		}
		v = "[" + strings.Join(parts, ",") + "]"
	case AttrTensors, AttrSparseTensors:
		parts := make([]string, len(a.Tensors()))
		for i, t := range a.Tensors() {
			parts[i] = tensorText(t)
		}
		v = "[" + strings.Join(parts, ",") + "]"
	case AttrGraphs:
		v = "<" + strconv.Itoa(len(a.Graphs())) + " graphs>"
	case AttrTypeProto, AttrTypeProtos:
		var parts []string
		for i := 0; ; i++ {
			ti, err := a.TypeProto(i)
			if err != nil {
				break
			}
			parts = append(parts, typeText(ti.Kind, ti.DType, ti.Shape))
		}
		v = "[" + strings.Join(parts, ",") + "]"
	default:
		v = "<type " + strconv.Itoa(int(a.Type)) + ">"
	}
	if a.RefAttrName() != "" {
		v = "@" + a.RefAttrName()
	}
	return a.Name + "=" + v
}

func intsText(xs []int64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// tensorText renders a tensor as dtype[dims] plus its values when small.
func tensorText(t *Tensor) string {
	if t == nil {
		return "<none>"
	}
	return t.DType.String() + intsText(t.Dims) + tensorValues(t)
}

// tensorValues renders " = [v,...]" for a known tensor of at most
// dumpMaxValues elements, and "" otherwise.
func tensorValues(t *Tensor) string {
	if !t.HasData {
		return ""
	}
	var parts []string
	switch {
	case t.Strings != nil:
		if len(t.Strings) > dumpMaxValues {
			return ""
		}
		for _, s := range t.Strings {
			parts = append(parts, strconv.Quote(s))
		}
	case t.Floats != nil:
		if len(t.Floats) > dumpMaxValues {
			return ""
		}
		for _, f := range t.Floats {
			parts = append(parts, fmtFloat(f))
		}
	default:
		if len(t.Ints) > dumpMaxValues {
			return ""
		}
		for _, x := range t.Ints {
			parts = append(parts, strconv.FormatInt(x, 10))
		}
	}
	return " = [" + strings.Join(parts, ",") + "]"
}
