// Package fuzzgraph decodes fuzz bytes into small ONNX graphs built from a
// grammar of common ops with random shapes and attributes, for the fuzz
// targets of shape inference (ir), the pass pipeline (passes) and the cost
// model (cost). The bytes are read as a stream of choices; running out of
// bytes reads zeros, so every input, even an empty one, decodes to a
// model.
//
// Each node is chosen after inferring the graph so far, so that its
// operands usually fit the shapes it reads (a Conv weight takes the
// input's channels, a Gemm weight its inner dim). One choice in sixteen
// perturbs an operand dim by one, and one attribute in twenty-four is
// hostile (zero, negative, past int32 or near int64), so that inference's
// refusal paths are exercised as well as its success paths. Generation
// stops at the first node inference refuses, leaving that node as the
// last one.
package fuzzgraph

import (
	"strconv"

	"github.com/onnxcost/onnxcost/ir"
)

// Opset is the default-domain opset of generated models.
const Opset = 17

// MaxNodes bounds the generated nodes.
const MaxNodes = 12

// Build decodes data into a model whose graph outputs are every value no
// node reads. The model has not been inferred in its final form; callers
// run ir.InferShapes themselves. ok is false when inference refused the
// last generated node (the model is still returned, for targets that test
// the refusal).
func Build(data []byte) (m *ir.Model, ok bool) {
	g := &gen{data: data, graph: ir.NewGraph("fuzz")}
	g.model = &ir.Model{Opsets: []ir.OpsetImport{{Domain: "", Version: Opset}}, Graph: g.graph}
	ok = g.build()
	g.finish()
	return g.model, ok
}

type gen struct {
	data  []byte
	pos   int
	graph *ir.Graph
	model *ir.Model
	vals  []*ir.Value // tensors a node may read, in creation order
	seq   int
	rng   uint64 // weight contents
}

// byte is the next choice; past the end of data it is 0.
func (g *gen) byte() int {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return int(b)
}

// intn is a choice in [0, n); a choice among none (n ≤ 0, e.g. an axis
// of a scalar) is 0, so the op is built and inference, not the
// generator, meets the impossible value.
func (g *gen) intn(n int) int {
	if n <= 0 {
		return 0
	}
	return g.byte() % n
}

// rangeIn is a choice in [lo, hi].
func (g *gen) rangeIn(lo, hi int) int64 { return int64(lo + g.intn(hi-lo+1)) }

// perturb returns d, or, one time in sixteen, d+1: an operand that no
// longer fits (a wrong channel count, a wrong inner dim).
func (g *gen) perturb(d int64) int64 {
	if g.intn(16) == 15 {
		return d + 1
	}
	return d
}

// wildValues are hostile attribute values: zero and negative sizes,
// and numbers whose arithmetic overflows int32 or int64.
var wildValues = []int64{0, -1, -3, 1 << 31, 1 << 62, -1 << 62}

// wild returns v, or, one time in twenty-four, a hostile value: the
// attribute paths that must refuse rather than panic or wrap.
func (g *gen) wild(v int64) int64 {
	if g.intn(24) == 23 {
		return wildValues[g.intn(len(wildValues))]
	}
	return v
}

func (g *gen) name(prefix string) string {
	g.seq++
	return prefix + strconv.Itoa(g.seq)
}

func (g *gen) value(prefix string) *ir.Value {
	v, err := g.graph.NewValue(g.name(prefix))
	if err != nil {
		panic(err) // names are fresh by construction
	}
	return v
}

// weight adds a float32 initializer with deterministic contents in
// (-1, 1): positive when pos is set (variances, scales).
func (g *gen) weight(pos bool, dims ...int64) *ir.Value {
	n := int64(1)
	for _, d := range dims {
		if d < 0 || d > 1<<16 || n*d > 1<<16 {
			// A dim taken from a huge inferred shape: keep the shape, not
			// the contents (as in a graph-only model).
			return g.blind(dims)
		}
		n *= d
	}
	vals := make([]float64, n)
	for i := range vals {
		g.rng = g.rng*6364136223846793005 + 1442695040888963407
		x := float64(g.rng>>11)/float64(1<<53)*2 - 1
		if pos {
			x = 1 + x/2
		}
		vals[i] = x
	}
	v := g.value("w")
	t := ir.FloatTensor(ir.Float32, dims, vals)
	t.Name = v.Name
	g.graph.AddInitializer(v, t)
	return v
}

// blind adds a float32 initializer whose contents are not loaded.
func (g *gen) blind(dims []int64) *ir.Value {
	v := g.value("w")
	g.graph.AddInitializer(v, &ir.Tensor{Name: v.Name, DType: ir.Float32, Dims: dims,
		Loc: ir.DataLocation{File: "w.bin", Missing: true}})
	return v
}

// ints adds an int64 initializer.
func (g *gen) ints(vals ...int64) *ir.Value {
	v := g.value("c")
	t := ir.IntTensor([]int64{int64(len(vals))}, vals)
	t.Name = v.Name
	g.graph.AddInitializer(v, t)
	return v
}

func attrInt(name string, v int64) *ir.Attribute {
	return &ir.Attribute{Name: name, Type: ir.AttrInt, I: v}
}

func attrInts(name string, v ...int64) *ir.Attribute {
	return &ir.Attribute{Name: name, Type: ir.AttrInts, Ints: v}
}

func attrFloat(name string, v float64) *ir.Attribute {
	return &ir.Attribute{Name: name, Type: ir.AttrFloat, F: v}
}

// node adds op reading ins and returns its first output; nout outputs.
func (g *gen) node(op string, ins []*ir.Value, nout int, attrs ...*ir.Attribute) *ir.Value {
	n := &ir.Node{Name: g.name(op + "_"), OpType: op, Inputs: ins, Attrs: attrs}
	for i := 0; i < nout; i++ {
		n.Outputs = append(n.Outputs, g.value("t"))
	}
	if err := g.graph.AddNode(n); err != nil {
		panic(err)
	}
	g.vals = append(g.vals, n.Outputs...)
	return n.Outputs[0]
}

// input adds the graph input: rank 2 to 4, small dims, the batch (and on
// 4-D inputs the height) sometimes symbolic.
func (g *gen) input() {
	rank := 2 + g.intn(3)
	dims := make([]ir.Dim, rank)
	dims[0] = ir.D(g.rangeIn(1, 2))
	for i := 1; i < rank; i++ {
		dims[i] = ir.D(g.rangeIn(1, 9))
	}
	switch g.intn(8) {
	case 6:
		dims[0] = ir.S("N")
	case 7:
		if rank == 4 {
			dims[2] = ir.S("H")
		}
	}
	v := g.value("x")
	v.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: ir.Float32, Shape: ir.RankedShape(dims...)}
	v.Kind, v.DType, v.Shape = ir.TensorValue, ir.Float32, ir.RankedShape(dims...)
	g.graph.AddInput(v)
	g.vals = append(g.vals, v)
}

// known is dim i of v as a number, or def when it is symbolic.
func known(v *ir.Value, i int, def int64) int64 {
	if i >= 0 && i < len(v.Shape.Dims) && v.Shape.Dims[i].IsKnown() {
		return v.Shape.Dims[i].Value
	}
	return def
}

func (g *gen) build() bool {
	g.input()
	n := 1 + g.intn(MaxNodes)
	for i := 0; i < n; i++ {
		// Mostly the newest value, so that graphs are chains deep enough
		// for fusion patterns; sometimes an older one, for branches.
		v := g.vals[len(g.vals)-1]
		if g.intn(4) == 0 {
			v = g.vals[g.intn(len(g.vals))]
		}
		if !v.Shape.Ranked {
			return true
		}
		g.op(v)
		if _, err := ir.InferShapes(g.model, ir.InferOptions{}); err != nil {
			return false
		}
	}
	return true
}

// finish makes every unread value a graph output.
func (g *gen) finish() {
	for _, v := range g.vals {
		if len(v.Consumers) == 0 {
			g.graph.AddOutput(v)
		}
	}
}

var unaryOps = []string{"Relu", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "Sqrt", "Abs", "Neg", "Exp", "Erf"}
var binaryOps = []string{"Add", "Mul", "Sub", "Div"}

// byRank appends op(v) when v has at least minRank dims, else fallback(v):
// an op that needs channels or spatial dims gives way to one every rank
// accepts, so each draw still adds a node.
func (g *gen) byRank(v *ir.Value, minRank int, op, fallback func(*ir.Value)) {
	if len(v.Shape.Dims) >= minRank {
		op(v)
		return
	}
	fallback(v)
}

// op appends one node reading v.
func (g *gen) op(v *ir.Value) {
	r := len(v.Shape.Dims)
	if r == 0 {
		// A scalar (a full reduction): only elementwise ops take one.
		if g.intn(2) == 0 {
			g.unary(v)
		} else {
			g.binary(v)
		}
		return
	}
	switch g.intn(20) {
	case 0, 1, 2:
		g.byRank(v, 3, g.conv, g.gemm)
	case 3:
		g.byRank(v, 3, g.convTranspose, g.matmul)
	case 4:
		g.byRank(v, 2, func(v *ir.Value) { g.batchNorm(v) }, g.unary)
	case 5:
		g.byRank(v, 3, g.pool, g.unary)
	case 6, 7:
		g.unary(v)
	case 8, 9:
		g.binary(v)
	case 10:
		if r == 2 {
			g.gemm(v)
			return
		}
		g.matmul(v)
	case 11:
		g.matmul(v)
	case 12:
		g.reshape(v)
	case 13:
		g.transpose(v)
	case 14:
		g.node("Softmax", []*ir.Value{v}, 1, attrInt("axis", g.wild(-1)))
	case 15:
		last := known(v, r-1, 4)
		g.node("LayerNormalization", []*ir.Value{v, g.weight(true, g.perturb(last)), g.weight(false, last)}, 1,
			attrInt("axis", -1), attrFloat("epsilon", 1e-5))
	case 16:
		g.concat(v)
	case 17:
		if r >= 3 && g.intn(2) == 0 {
			g.node("GlobalAveragePool", []*ir.Value{v}, 1)
			return
		}
		g.node("Flatten", []*ir.Value{v}, 1, attrInt("axis", g.wild(g.rangeIn(0, r))))
	case 18:
		g.node("ReduceMean", []*ir.Value{v}, 1, attrInts("axes", g.wild(-1)), attrInt("keepdims", int64(g.intn(2))))
	case 19:
		g.slicePad(v)
	}
}

func (g *gen) unary(v *ir.Value) {
	op := unaryOps[g.intn(len(unaryOps))]
	if op == "Sqrt" {
		// Sqrt of a possibly negative value gives NaN in the reference
		// evaluator; Abs first keeps the graph's numbers finite.
		v = g.node("Abs", []*ir.Value{v}, 1)
	}
	if g.intn(3) == 0 {
		g.node("Clip", []*ir.Value{v, g.weight(false), g.weight(true)}, 1)
		return
	}
	g.node(op, []*ir.Value{v}, 1)
}

// binary combines v with another value of its shape, itself, or a
// broadcast weight (v's trailing dims, some set to 1).
func (g *gen) binary(v *ir.Value) {
	op := binaryOps[g.intn(len(binaryOps))]
	var o *ir.Value
	switch g.intn(3) {
	case 0:
		for i := len(g.vals) - 1; i >= 0; i-- {
			if g.vals[i] != v && g.vals[i].Shape.Equal(v.Shape) {
				o = g.vals[i]
				break
			}
		}
	case 1:
		o = v
	}
	if o == nil {
		r := len(v.Shape.Dims)
		k := g.intn(r + 1)
		dims := make([]int64, k)
		for i := range dims {
			d := known(v, r-k+i, 1)
			if g.intn(3) == 0 {
				d = 1
			}
			dims[i] = g.perturb(d)
		}
		o = g.weight(op == "Div", dims...)
	}
	g.node(op, []*ir.Value{v, o}, 1)
}

// group draws a group count that divides c.
func (g *gen) group(c int64) int64 {
	if c < 1 {
		return 1 // an empty channel axis (after a Slice past the end)
	}
	// Divisors in ascending order: d up to √c, then their cofactors. The
	// search stops at maxDivisorSearch so that a channel count of 2^40
	// (a huge shape is a legitimate input) costs microseconds, not the
	// seconds a loop to c took (a fuzz input that timed out in CI); past
	// it the list is the small divisors and their cofactors only.
	var small, large []int64
	for d := int64(1); d <= maxDivisorSearch && d <= c/d; d++ {
		if c%d == 0 {
			small = append(small, d)
			if d != c/d {
				large = append(large, c/d)
			}
		}
	}
	for i := len(large) - 1; i >= 0; i-- {
		small = append(small, large[i])
	}
	return small[g.intn(len(small))]
}

// maxDivisorSearch bounds group's divisor search (see there).
const maxDivisorSearch = 1 << 16

// window draws kernel, stride, pads and dilation for n spatial axes of v
// (from dim 2), keeping windows inside the padded input unless perturbed.
func (g *gen) window(v *ir.Value, n int, dilate bool) (k, s, p, d []int64) {
	for i := 0; i < n; i++ {
		in := known(v, 2+i, 8)
		kk := g.rangeIn(1, 3)
		dd := int64(1)
		if dilate && g.intn(4) == 0 {
			dd = 2
		}
		pp := g.rangeIn(0, int(kk-1))
		for (kk-1)*dd+1 > in+2*pp && kk > 1 {
			kk--
		}
		k = append(k, g.perturb(kk))
		s = append(s, g.wild(g.rangeIn(1, 2)))
		p = append(p, g.wild(pp))
		d = append(d, g.wild(dd))
	}
	return k, s, append(p, p...), d
}

func (g *gen) conv(v *ir.Value) {
	r := len(v.Shape.Dims)
	c := known(v, 1, 3)
	grp := g.group(c)
	m := grp * g.rangeIn(1, 4)
	k, s, p, d := g.window(v, r-2, true)
	wdims := append([]int64{m, g.perturb(c / grp)}, k...)
	ins := []*ir.Value{v, g.weight(false, wdims...)}
	if g.intn(2) == 0 {
		ins = append(ins, g.weight(false, g.perturb(m)))
	}
	attrs := []*ir.Attribute{attrInts("strides", s...), attrInts("pads", p...), attrInts("dilations", d...)}
	if grp > 1 || g.intn(24) == 0 {
		attrs = append(attrs, attrInt("group", g.wild(grp)))
	}
	out := g.node("Conv", ins, 1, attrs...)
	// Conv, BatchNorm and an activation are the fusion passes' main diet.
	if g.intn(2) == 0 {
		out = g.batchNorm(out)
	}
	if g.intn(2) == 0 {
		g.node("Relu", []*ir.Value{out}, 1)
	}
}

func (g *gen) convTranspose(v *ir.Value) {
	r := len(v.Shape.Dims)
	c := known(v, 1, 3)
	grp := g.group(c)
	k, s, _, _ := g.window(v, r-2, false)
	wdims := append([]int64{g.perturb(c), g.rangeIn(1, 3)}, k...)
	attrs := []*ir.Attribute{attrInts("strides", s...)}
	if grp > 1 {
		attrs = append(attrs, attrInt("group", grp))
	}
	g.node("ConvTranspose", []*ir.Value{v, g.weight(false, wdims...)}, 1, attrs...)
}

func (g *gen) batchNorm(v *ir.Value) *ir.Value {
	c := known(v, 1, 3)
	return g.node("BatchNormalization", []*ir.Value{v, g.weight(true, g.perturb(c)), g.weight(false, c),
		g.weight(false, c), g.weight(true, c)}, 1, attrFloat("epsilon", 1e-5))
}

func (g *gen) pool(v *ir.Value) {
	n := len(v.Shape.Dims) - 2
	k, s, p, _ := g.window(v, n, false)
	op := "MaxPool"
	if g.intn(2) == 0 {
		op = "AveragePool"
	}
	for i := range k {
		k[i] = g.wild(k[i])
	}
	g.node(op, []*ir.Value{v}, 1, attrInts("kernel_shape", k...), attrInts("strides", s...), attrInts("pads", p...),
		attrInt("ceil_mode", int64(g.intn(2))))
}

// gemm needs a 2-D operand: v itself, or v flattened.
func (g *gen) gemm(v *ir.Value) {
	if len(v.Shape.Dims) != 2 {
		g.node("Flatten", []*ir.Value{v}, 1, attrInt("axis", 1))
		return // the next step sees the flattened value
	}
	kdim := known(v, 1, 4)
	n := g.rangeIn(1, 8)
	transB := g.intn(2) == 1
	w := []int64{g.perturb(kdim), n}
	if transB {
		w = []int64{n, g.perturb(kdim)}
	}
	ins := []*ir.Value{v, g.weight(false, w...)}
	if g.intn(2) == 0 {
		ins = append(ins, g.weight(false, g.perturb(n)))
	}
	g.node("Gemm", ins, 1, attrInt("transB", int64(boolInt(transB))))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (g *gen) matmul(v *ir.Value) {
	r := len(v.Shape.Dims)
	kdim := known(v, r-1, 4)
	w := []int64{g.perturb(kdim), g.rangeIn(1, 8)}
	if r >= 3 && g.intn(3) == 0 {
		w = append([]int64{known(v, r-3, 1)}, w...)
	}
	g.node("MatMul", []*ir.Value{v, g.weight(false, w...)}, 1)
}

func (g *gen) reshape(v *ir.Value) {
	// [d0, -1] keeps the element count whatever the dims are.
	target := []int64{0, g.wild(-1)}
	if g.intn(3) == 0 {
		target = []int64{g.wild(-1)}
	}
	g.node("Reshape", []*ir.Value{v, g.ints(target...)}, 1)
}

func (g *gen) transpose(v *ir.Value) {
	r := len(v.Shape.Dims)
	perm := make([]int64, r)
	for i := range perm {
		perm[i] = int64(i)
	}
	for i := r - 1; i > 0; i-- {
		j := g.intn(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	if r > 0 {
		perm[0] = g.wild(perm[0])
	}
	g.node("Transpose", []*ir.Value{v}, 1, attrInts("perm", perm...))
}

func (g *gen) concat(v *ir.Value) {
	r := len(v.Shape.Dims)
	ax := g.wild(int64(g.intn(r)))
	g.node("Concat", []*ir.Value{v, v}, 1, attrInt("axis", ax))
}

// slicePad slices one axis or pads every axis.
func (g *gen) slicePad(v *ir.Value) {
	r := len(v.Shape.Dims)
	if g.intn(2) == 0 {
		ax := int64(g.intn(r))
		g.node("Slice", []*ir.Value{v, g.ints(g.wild(g.rangeIn(0, 2))), g.ints(g.wild(g.rangeIn(1, 8))), g.ints(ax),
			g.ints(g.wild(1))}, 1)
		return
	}
	pads := make([]int64, 2*r)
	for i := range pads {
		pads[i] = g.wild(g.rangeIn(0, 2))
	}
	g.node("Pad", []*ir.Value{v, g.ints(pads...)}, 1)
}
