package fuzzgraph

import "github.com/onnxcost/onnxcost/ir"

// msDomain is onnxruntime's contrib-op domain.
const msDomain = "com.microsoft"

// BuildQuantized decodes data into a graph in onnxruntime's QOperator
// format: the float input quantized to uint8, a chain of the format's
// ops (QLinearConv in either domain and layout, QGemm, NhwcMaxPool, the
// com.microsoft QLinear* elementwise, pooling, concat and softmax ops, and
// quantize_dynamic's QAttention and QEmbedLayerNormalization, and the
// expert FFNs MoE and QMoE, MatMulBnb4, GemmFastGelu, SparseAttention,
// the decoder-masked attentions, the Stable Diffusion ops (GroupNorm,
// SkipGroupNorm, NhwcConv, BiasSplitGelu, BiasAdd) and the hybrids' ops
// (GatedAdd, GatedRMSNorm, CausalConvWithState, GatedDeltaNet,
// RelativePositionBias, PagedAttention, GemmFloat8, the com.microsoft
// Q/DQ and Trilu twins) over the
// dequantized value, their float outputs quantized again)
// with random shapes and attributes, perturbed and hostile as Build's,
// and the last value dequantized. It is a grammar of its own, so the
// committed corpora of Build's targets keep decoding as before.
func BuildQuantized(data []byte) (m *ir.Model, ok bool) {
	g := &gen{data: data, graph: ir.NewGraph("fuzzq")}
	g.model = &ir.Model{Opsets: []ir.OpsetImport{{Domain: "", Version: Opset}, {Domain: msDomain, Version: 1}}, Graph: g.graph}
	ok = g.buildQuantized()
	g.finish()
	return g.model, ok
}

// q holds the scalars every quantized op names: a float32 scale and a
// uint8 zero point.
type q struct{ s, z *ir.Value }

func (g *gen) buildQuantized() bool {
	g.input()
	x := g.vals[len(g.vals)-1]
	p := q{g.weight(true), g.typed(ir.Uint8)}
	last := g.node("QuantizeLinear", []*ir.Value{x, p.s, p.z}, 1)
	qvals := []*ir.Value{last}
	n := 1 + g.intn(MaxNodes)
	for i := 0; i < n; i++ {
		v := qvals[len(qvals)-1]
		if g.intn(4) == 0 {
			v = qvals[g.intn(len(qvals))]
		}
		if _, err := ir.InferShapes(g.model, ir.InferOptions{}); err != nil {
			return false
		}
		if !v.Shape.Ranked {
			break
		}
		qvals = append(qvals, g.qop(v, p))
	}
	if _, err := ir.InferShapes(g.model, ir.InferOptions{}); err != nil {
		return false
	}
	g.node("DequantizeLinear", []*ir.Value{qvals[len(qvals)-1], p.s, p.z}, 1)
	return true
}

// typed adds an initializer of dtype dt and dims whose contents are not
// loaded (a graph-only weight).
func (g *gen) typed(dt ir.DType, dims ...int64) *ir.Value {
	v := g.value("w")
	g.graph.AddInitializer(v, &ir.Tensor{Name: v.Name, DType: dt, Dims: dims, Loc: ir.DataLocation{File: "w.bin", Missing: true}})
	return v
}

// ms adds a com.microsoft node of one output.
func (g *gen) ms(op string, ins []*ir.Value, attrs ...*ir.Attribute) *ir.Value {
	return g.msN(op, ins, 1, attrs...)
}

// msN adds a com.microsoft node of nout outputs and returns the first.
func (g *gen) msN(op string, ins []*ir.Value, nout int, attrs ...*ir.Attribute) *ir.Value {
	out := g.node(op, ins, nout, attrs...)
	out.Producer.Domain = msDomain
	return out
}

// qop appends one quantized op reading v and returns its (8-bit) output.
func (g *gen) qop(v *ir.Value, p q) *ir.Value {
	r := len(v.Shape.Dims)
	unary := func(op string, attrs ...*ir.Attribute) *ir.Value {
		return g.ms(op, []*ir.Value{v, p.s, p.z, p.s, p.z}, attrs...)
	}
	switch g.intn(17) {
	case 0:
		return unary("QLinearSigmoid")
	case 1:
		return unary("QLinearLeakyRelu", attrFloat("alpha", 0.1))
	case 2, 3:
		op := "QLinearMul"
		if g.intn(2) == 0 {
			op = "QLinearAdd"
		}
		return g.ms(op, []*ir.Value{v, p.s, p.z, g.qoperand(v), p.s, p.z, p.s, p.z})
	case 4:
		cond := g.typed(ir.Bool, g.perturb(known(v, r-1, 4)))
		return g.ms("QLinearWhere", []*ir.Value{cond, v, p.s, p.z, g.qoperand(v), p.s, p.z, p.s, p.z})
	case 5:
		return unary("QLinearSoftmax", attrInt("axis", g.wild(-1)), attrInt("opset", 12+int64(g.intn(2))))
	case 6:
		if r < 3 {
			return unary("QLinearSigmoid")
		}
		k, s, pads, _ := g.window(v, r-2, false)
		if g.intn(3) == 0 {
			// The NHWC transformer's 8-bit MaxPool reads v as channels-last.
			return g.ms("NhwcMaxPool", []*ir.Value{v}, attrInts("kernel_shape", k...), attrInts("strides", s...), attrInts("pads", pads...))
		}
		return unary("QLinearAveragePool", attrInts("kernel_shape", k...), attrInts("strides", s...), attrInts("pads", pads...),
			attrInt("channels_last", int64(g.intn(2))))
	case 7:
		if g.intn(3) == 0 {
			return g.integer(v, p)
		}
		return unary("QLinearGlobalAveragePool", attrInt("channels_last", int64(g.intn(2))))
	case 8:
		return g.ms("QLinearConcat", []*ir.Value{p.s, p.z, v, p.s, p.z, v, p.s, p.z}, attrInt("axis", g.wild(g.rangeIn(-r, r-1))))
	case 9:
		if r < 3 {
			return g.qgemm(v, p)
		}
		return g.qconv(v, p)
	case 10:
		if r != 3 {
			return g.qgemm(v, p)
		}
		return g.node("QuantizeLinear", []*ir.Value{g.qattention(v, p), p.s, p.z}, 1)
	case 11:
		return g.node("QuantizeLinear", []*ir.Value{g.qembed(p), p.s, p.z}, 1)
	case 12:
		if r != 2 && r != 3 {
			return unary("QLinearSigmoid")
		}
		x := g.node("DequantizeLinear", []*ir.Value{v, p.s, p.z}, 1)
		if g.intn(4) == 0 {
			return g.node("QuantizeLinear", []*ir.Value{g.bnb4(x, v), p.s, p.z}, 1)
		}
		return g.node("QuantizeLinear", []*ir.Value{g.moe(x, v), p.s, p.z}, 1)
	case 13:
		if r != 3 && r != 4 {
			return unary("QLinearSigmoid")
		}
		x := g.node("DequantizeLinear", []*ir.Value{v, p.s, p.z}, 1)
		return g.node("QuantizeLinear", []*ir.Value{g.diffusion(x, v), p.s, p.z}, 1)
	case 14:
		if r != 3 {
			return unary("QLinearSigmoid")
		}
		x := g.node("DequantizeLinear", []*ir.Value{v, p.s, p.z}, 1)
		return g.node("QuantizeLinear", []*ir.Value{g.decoding(x, v), p.s, p.z}, 1)
	case 15:
		if r != 3 {
			return unary("QLinearSigmoid")
		}
		x := g.node("DequantizeLinear", []*ir.Value{v, p.s, p.z}, 1)
		return g.node("QuantizeLinear", []*ir.Value{g.hybrid(x, v), p.s, p.z}, 1)
	default:
		return g.qgemm(v, p)
	}
}

// integer is one of onnxruntime's integer and tensor contrib ops on the
// 8-bit v, brought back to v's type: QLinearReduceMean, MulInteger or
// ReduceSumInteger (int32, cast and requantized), an UnfoldTensor of v,
// a QOrdered op between QuantizeWithOrder and DequantizeWithOrder, or a
// TorchEmbedding of a weight at a Range of indices.
func (g *gen) integer(v *ir.Value, p q) *ir.Value {
	r := len(v.Shape.Dims)
	axes := attrInts("axes", g.wild(g.rangeIn(-r, r-1)))
	keep := attrInt("keepdims", int64(g.intn(2)))
	requant := func(y *ir.Value) *ir.Value {
		f := g.node("Cast", []*ir.Value{y}, 1, attrInt("to", int64(ir.Float32)))
		return g.node("QuantizeLinear", []*ir.Value{f, p.s, p.z}, 1)
	}
	switch g.intn(6) {
	case 0:
		return g.ms("QLinearReduceMean", []*ir.Value{v, p.s, p.z, p.s, p.z}, axes, keep)
	case 1:
		return requant(g.ms("MulInteger", []*ir.Value{v, p.z, g.qoperand(v), p.z}))
	case 2:
		return requant(g.ms("ReduceSumInteger", []*ir.Value{v}, axes, keep))
	case 3:
		size := g.perturb(max(known(v, r-1, 2)/2, 1))
		return g.ms("UnfoldTensor", []*ir.Value{v}, attrInt("dim", g.wild(-1)), attrInt("size", size), attrInt("step", g.rangeIn(1, 3)))
	case 4:
		// Into the cublasLt-ordered int8 form and out again, a QOrdered
		// op between.
		order := func(name string) *ir.Attribute { return attrInt(name, 1) }
		x := g.node("DequantizeLinear", []*ir.Value{v, p.s, p.z}, 1)
		y := g.ms("QuantizeWithOrder", []*ir.Value{x, p.s}, order("order_input"), order("order_output"))
		last := known(v, r-1, 4)
		switch g.intn(5) {
		case 4:
			// int8 attention over y as [b, s, w], one head.
			if r != 3 {
				y = g.ms("QOrderedGelu", []*ir.Value{y, p.s, p.s})
				break
			}
			wq := g.typed(ir.Int8, g.perturb(last), last)
			bias := g.weight(false, last)
			y = g.ms("QOrderedAttention", []*ir.Value{y, p.s, p.s, p.s, p.s, wq, wq, wq, p.s, p.s, p.s, bias, bias, bias, p.s, p.s, p.s,
				g.typed(ir.Int32, known(v, 0, 1), known(v, 1, 2))}, attrInt("num_heads", g.wild(1)))
		case 3:
			// The int8 Longformer over y as [b, s, w]: a window of half
			// the sequence, one global token or the flags unknown.
			if r != 3 {
				y = g.ms("QOrderedGelu", []*ir.Value{y, p.s, p.s})
				break
			}
			b, s := known(v, 0, 1), known(v, 1, 2)
			wq := g.typed(ir.Int8, g.perturb(last), 3*last)
			bias := g.weight(false, 3*last)
			y = g.ms("QOrderedLongformerAttention", []*ir.Value{y, p.s, wq, p.s, bias, p.s, p.s, g.weight(false, b, s), wq, p.s, bias, p.s,
				g.typed(ir.Int32, b, s), p.s}, attrInt("num_heads", g.wild(1)), attrInt("window", g.wild(max(s/2, 1))))
		case 0:
			y = g.ms("QOrderedGelu", []*ir.Value{y, p.s, p.s})
		case 1:
			y = g.ms("QOrderedLayerNormalization", []*ir.Value{y, p.s, g.weight(false, g.perturb(last)), nil, p.s})
		default:
			y = g.ms("QOrderedMatMul", []*ir.Value{y, p.s, g.typed(ir.Int8, g.perturb(last), g.rangeIn(1, 8)), p.s, p.s},
				order("order_A"), attrInt("order_B", 0), order("order_Y"))
		}
		y = g.ms("DequantizeWithOrder", []*ir.Value{y, p.s}, attrInt("to", g.wild(int64(ir.Float32))))
		return g.node("QuantizeLinear", []*ir.Value{y, p.s, p.z}, 1)
	}
	ids := g.ms("Range", []*ir.Value{g.ints(0), g.ints(g.rangeIn(1, 6))})
	w := g.weight(false, g.perturb(6), known(v, r-1, 4))
	return g.node("QuantizeLinear", []*ir.Value{g.ms("TorchEmbedding", []*ir.Value{w, ids}), p.s, p.z}, 1)
}

// qoperand is a second 8-bit operand for v: v itself, or a uint8 weight
// of v's trailing dims, some set to 1 (broadcast) or perturbed.
func (g *gen) qoperand(v *ir.Value) *ir.Value {
	if g.intn(2) == 0 {
		return v
	}
	r := len(v.Shape.Dims)
	n := 1 + g.intn(max(r, 1))
	dims := make([]int64, 0, n)
	for i := r - n; i < r; i++ {
		d := known(v, i, 3)
		if g.intn(3) == 0 {
			d = 1
		}
		dims = append(dims, g.perturb(d))
	}
	return g.typed(ir.Uint8, dims...)
}

// qconv is a QLinearConv on v: the standard one on NCHW, or onnxruntime's
// channels-last one, whose channels are v's last dim.
func (g *gen) qconv(v *ir.Value, p q) *ir.Value {
	r := len(v.Shape.Dims)
	last := g.intn(2) == 0
	c := known(v, 1, 3)
	if last {
		c = known(v, r-1, 3)
	}
	grp := g.group(c)
	m := grp * g.rangeIn(1, 4)
	k, s, pads, d := g.window(v, r-2, true)
	w := g.typed(ir.Int8, append([]int64{m, g.perturb(c / grp)}, k...)...)
	ins := []*ir.Value{v, p.s, p.z, w, p.s, g.typed(ir.Int8), p.s, p.z}
	if g.intn(2) == 0 {
		ins = append(ins, g.typed(ir.Int32, g.perturb(m)))
	}
	attrs := []*ir.Attribute{attrInts("strides", s...), attrInts("pads", pads...), attrInts("dilations", d...)}
	if grp > 1 || g.intn(24) == 0 {
		attrs = append(attrs, attrInt("group", g.wild(grp)))
	}
	if last {
		return g.ms("QLinearConv", ins, append(attrs, attrInt("channels_last", 1))...)
	}
	return g.node("QLinearConv", ins, 1, attrs...)
}

// qgemm is a QGemm on v flattened to 2-D, with an int32 bias and a
// quantized output, or a float one quantized again.
func (g *gen) qgemm(v *ir.Value, p q) *ir.Value {
	if len(v.Shape.Dims) != 2 {
		v = g.node("Flatten", []*ir.Value{v}, 1, attrInt("axis", 1))
	}
	kdim, n := known(v, 1, 4), g.rangeIn(1, 16)
	transB := int64(g.intn(2))
	wdims := []int64{g.perturb(kdim), n}
	if transB == 1 {
		wdims = []int64{n, g.perturb(kdim)}
	}
	ins := []*ir.Value{v, p.s, p.z, g.typed(ir.Int8, wdims...), p.s, g.typed(ir.Int8), g.typed(ir.Int32, g.perturb(n))}
	float := g.intn(4) == 0
	if !float {
		ins = append(ins, p.s, p.z)
	}
	y := g.ms("QGemm", ins, attrInt("transB", g.wild(transB)))
	if float {
		return g.node("QuantizeLinear", []*ir.Value{y, p.s, p.z}, 1)
	}
	return y
}

// qattention is a QAttention on v [B, S, in]: int8 weights [in, 3·hidden]
// (hidden = heads·head), a float bias, the mask index (sometimes), and
// sometimes a past [2, B, heads, P, head]; its output is float.
func (g *gen) qattention(v *ir.Value, p q) *ir.Value {
	heads, head := g.rangeIn(1, 4), g.rangeIn(1, 8)
	hidden := heads * head
	b := known(v, 0, 2)
	var mask *ir.Value
	if g.intn(2) == 0 {
		mask = g.typed(ir.Int32, g.perturb(b))
	}
	ins := []*ir.Value{v, g.typed(ir.Int8, g.perturb(known(v, 2, 4)), g.perturb(3*hidden)), g.weight(false, 3*hidden),
		p.s, p.s, mask, p.z, g.typed(ir.Int8)}
	attrs := []*ir.Attribute{attrInt("num_heads", g.wild(heads))}
	if g.intn(3) == 0 {
		ins = append(ins, g.weight(false, 2, b, heads, g.rangeIn(0, 8), g.perturb(head)))
		if g.intn(2) == 0 {
			attrs = append(attrs, attrInt("past_present_share_buffer", 1))
		}
	}
	return g.ms("QAttention", ins, attrs...)
}

// qembed is a QEmbedLayerNormalization over int32 ids [B, S] (segment ids
// and mask sometimes), uint8 tables of one width, their scales and zero
// points; its output is float [B, S, hidden].
func (g *gen) qembed(p q) *ir.Value {
	bs, seq, hidden := g.rangeIn(1, 3), g.rangeIn(1, 8), g.rangeIn(1, 16)
	ids := func() *ir.Value { return g.typed(ir.Int32, bs, g.perturb(seq)) }
	table := func(rows int64) *ir.Value { return g.typed(ir.Uint8, rows, g.perturb(hidden)) }
	var seg, segTable, mask *ir.Value
	if g.intn(2) == 0 {
		seg, segTable = ids(), table(2)
	}
	if g.intn(2) == 0 {
		mask = ids()
	}
	ins := []*ir.Value{ids(), seg, table(g.rangeIn(1, 64)), table(seq + g.rangeIn(0, 4)), segTable,
		g.typed(ir.Uint8, g.perturb(hidden)), g.typed(ir.Uint8, hidden), mask}
	for range 5 {
		ins = append(ins, p.s)
	}
	for range 5 {
		ins = append(ins, p.z)
	}
	return g.ms("QEmbedLayerNormalization", ins)
}

// moe is a MoE, or a QMoE with 4- or 8-bit experts, on the float x
// [tokens, hidden] or [B, S, hidden] (dequantized from v, whose shape is
// inferred): router scores for E experts, top k, fc1 sometimes fused with
// its SwiGLU gate, biases sometimes, the weights in either of
// onnxruntime's layouts.
func (g *gen) moe(x, v *ir.Value) *ir.Value {
	r := len(v.Shape.Dims)
	tokens := known(v, 0, 2)
	if r == 3 {
		tokens *= known(v, 1, 2)
	}
	hidden, experts, inter := known(v, r-1, 4), g.rangeIn(1, 8), 2*g.rangeIn(1, 8)
	router := g.weight(false, g.perturb(tokens), experts)
	act := []string{"relu", "gelu", "silu", "identity", "swiglu"}[g.intn(5)]
	n1 := inter
	attrs := []*ir.Attribute{attrInt("k", g.wild(g.rangeIn(1, int(experts)))), ir.StringAttr("activation_type", act)}
	if act == "swiglu" && g.intn(2) == 0 {
		n1 = 2 * inter
		attrs = append(attrs, attrInt("swiglu_fusion", 1))
	}
	if g.intn(2) == 0 {
		bits := int64(4 + 4*g.intn(2))
		pack := 8 / bits
		w := func(a, b int64) *ir.Value { return g.typed(ir.Uint8, g.perturb(experts), a, max(b/pack, 1)) }
		ins := []*ir.Value{x, router, w(n1, hidden), g.weight(true, experts, n1), nil, w(hidden, inter), g.weight(true, experts, hidden)}
		return g.ms("QMoE", ins, append(attrs, attrInt("expert_weight_bits", g.wild(bits)))...)
	}
	w := func(a, b int64) *ir.Value {
		if g.intn(4) == 0 {
			a, b = b, a // the older [E, hidden, N] layout
		}
		return g.weight(false, g.perturb(experts), a, b)
	}
	ins := []*ir.Value{x, router, w(n1, hidden), nil, w(hidden, inter)}
	if g.intn(2) == 0 {
		ins[3] = g.weight(false, experts, n1)
		ins = append(ins, g.weight(false, experts, hidden))
	}
	return g.ms("MoE", ins, attrs...)
}

// diffusion is one of onnxruntime's Stable Diffusion ops on the float x
// (dequantized from v, whose shape is inferred): on [N, H, W, C] a
// GroupNorm or SkipGroupNorm (channels-last unless said, SiLU sometimes)
// or an NhwcConv; on [N, S, D] a BiasSplitGelu or a BiasAdd.
func (g *gen) diffusion(x, v *ir.Value) *ir.Value {
	r := len(v.Shape.Dims)
	c := known(v, r-1, 4)
	if r == 3 {
		if g.intn(2) == 0 {
			return g.ms("BiasSplitGelu", []*ir.Value{x, g.weight(false, g.perturb(c))})
		}
		return g.ms("BiasAdd", []*ir.Value{x, g.weight(false, g.perturb(c)), x})
	}
	switch g.intn(3) {
	case 0:
		m := g.rangeIn(1, 8)
		k, s, pads, d := g.window(nchw(v), r-2, true)
		w := g.weight(false, append(append([]int64{m}, k...), g.perturb(c))...)
		return g.ms("NhwcConv", []*ir.Value{x, w, g.weight(false, m)},
			attrInts("strides", s...), attrInts("pads", pads...), attrInts("dilations", d...))
	default:
		last := int64(1)
		if g.intn(4) == 0 {
			last, c = 0, known(v, 1, 4)
		}
		attrs := []*ir.Attribute{attrInt("groups", g.wild(g.group(c))), attrInt("activation", int64(g.intn(2))), attrInt("channels_last", last)}
		gamma, beta := g.weight(false, g.perturb(c)), g.weight(false, c)
		if g.intn(2) == 0 {
			return g.ms("GroupNorm", []*ir.Value{x, gamma, beta}, attrs...)
		}
		return g.ms("SkipGroupNorm", []*ir.Value{x, gamma, beta, x, g.weight(false, c)}, attrs...)
	}
}

// nchw is v's NHWC shape seen channels-first, for window, which reads the
// spatial dims from axis 2 on.
func nchw(v *ir.Value) *ir.Value {
	d := v.Shape.Dims
	if len(d) < 3 {
		return v
	}
	return &ir.Value{Shape: ir.RankedShape(append([]ir.Dim{d[0], d[len(d)-1]}, d[1:len(d)-1]...)...)}
}

// bnb4 is a MatMulBnb4 on the float x (dequantized from v): K its last
// dim (sometimes not), N small, transB sometimes 0 (then N is the inner
// size), the packed weight and absmax of N·K values.
func (g *gen) bnb4(x, v *ir.Value) *ir.Value {
	inner, outer := g.perturb(known(v, len(v.Shape.Dims)-1, 4)), g.rangeIn(1, 16)
	k, n, transB := inner, outer, int64(1)
	if g.intn(3) == 0 {
		k, n, transB = outer, inner, 0
	}
	return g.ms("MatMulBnb4", []*ir.Value{x, g.typed(ir.Uint8, (k*n+1)/2), g.weight(true, max((k*n+63)/64, 1))},
		attrInt("K", g.wild(k)), attrInt("N", n), attrInt("block_size", 64), attrInt("quant_type", int64(g.intn(2))), attrInt("transB", transB))
}

// decoding is, on the float x [B, S, W] (dequantized from v), one of the
// decoding-side contrib ops: GemmFastGelu, SparseAttention over a shared
// cache (packed Q|K|V or not), DecoderMaskedMultiHeadAttention (self
// attention over a shared cache, or cross attention over a 4-D key) or
// DecoderMaskedSelfAttention (a packed projection and a past),
// DecoderAttention or LongformerAttention.
func (g *gen) decoding(x, v *ir.Value) *ir.Value {
	b, w := known(v, 0, 2), known(v, 2, 4)
	heads, kv := g.rangeIn(1, 4), int64(1)
	if heads%2 == 0 && g.intn(2) == 0 {
		kv = 2
	}
	d := max(w/heads, 1)
	maxLen := g.rangeIn(1, 16)
	cache := func(h int64) *ir.Value { return g.weight(false, g.perturb(b), h, maxLen, g.perturb(d)) }
	scalar := func(val int64) *ir.Value { return g.ints(val) }
	switch g.intn(6) {
	case 4:
		// DecoderAttention over x as [S, B, W]: self or cross attention,
		// with or without caches, each flag a constant or unknown.
		flag := func() *ir.Value {
			if g.intn(4) == 0 {
				return g.typed(ir.Bool)
			}
			v := g.value("c")
			g.graph.AddInitializer(v, &ir.Tensor{Name: v.Name, DType: ir.Bool, Ints: []int64{int64(g.intn(2))}, HasData: true})
			return v
		}
		key := x
		if g.intn(2) == 0 {
			key = g.weight(false, g.rangeIn(1, 16), known(v, 1, 2), g.perturb(w))
		}
		var kc, vc *ir.Value
		if g.intn(2) == 0 {
			kc, vc = g.weight(false, known(v, 1, 2), heads, maxLen, g.perturb(d)), g.weight(false, known(v, 1, 2), heads, maxLen, d)
		}
		return g.msN("DecoderAttention", []*ir.Value{x, key, g.weight(false, w, g.perturb(w)), g.weight(false, w, 2*w), g.weight(false, g.perturb(3*w)),
			nil, kc, vc, flag(), flag(), flag(), flag()}, 1+2*g.intn(2), attrInt("num_heads", g.wild(heads)))
	case 5:
		// LongformerAttention over x, a window dividing half its
		// sequence, one global token flagged or the flags unknown.
		s := known(v, 1, 2)
		win := max(s/2, 1)
		global := g.typed(ir.Int32, b, s)
		if g.intn(2) == 0 && b*s > 0 && b*s <= 1<<12 {
			flags := make([]int64, b*s)
			flags[0] = 1
			global = g.value("c")
			g.graph.AddInitializer(global, &ir.Tensor{Name: global.Name, DType: ir.Int32, Dims: []int64{b, s}, Ints: flags, HasData: true})
		}
		return g.ms("LongformerAttention", []*ir.Value{x, g.weight(false, g.perturb(w), 3*w), g.weight(false, 3*w), g.weight(false, b, s),
			g.weight(false, w, 3*w), g.weight(false, 3*w), global}, attrInt("num_heads", g.wild(heads)), attrInt("window", g.wild(win)))
	case 0:
		return g.ms("GemmFastGelu", []*ir.Value{x, g.weight(false, g.perturb(w), g.rangeIn(1, 16)), g.weight(false, g.rangeIn(1, 16))})
	case 1:
		var k, val *ir.Value
		if g.intn(2) == 0 {
			k, val = x, x
		}
		blocks := g.rangeIn(1, 4)
		return g.msN("SparseAttention", []*ir.Value{x, k, val, cache(kv), cache(kv), g.typed(ir.Int32, 1, blocks+1),
			g.typed(ir.Int32, 1, g.rangeIn(1, int(blocks*blocks))), g.typed(ir.Int32, 1), g.typed(ir.Int32, b)}, 3,
			attrInt("num_heads", g.wild(heads)), attrInt("kv_num_heads", kv), attrInt("sparse_block_size", 16<<g.intn(4)))
	case 2:
		if g.intn(3) == 0 { // cross attention over an encoder's keys
			enc := g.weight(false, b, heads, g.rangeIn(1, 16), g.perturb(d))
			return g.ms("DecoderMaskedMultiHeadAttention", []*ir.Value{x, enc, enc}, attrInt("num_heads", g.wild(heads)))
		}
		return g.ms("DecoderMaskedMultiHeadAttention", []*ir.Value{x, x, x, nil, nil, cache(heads), cache(heads), scalar(g.rangeIn(0, 8))},
			attrInt("num_heads", g.wild(heads)), attrInt("past_present_share_buffer", 1))
	default:
		past := g.weight(false, 2, g.perturb(b), heads, maxLen, d)
		return g.ms("DecoderMaskedSelfAttention", []*ir.Value{x, g.weight(false, g.perturb(w), 3*heads*d), g.weight(false, 3*heads*d),
			nil, past, nil, scalar(g.rangeIn(0, 8))}, attrInt("num_heads", g.wild(heads)), attrInt("past_present_share_buffer", 1))
	}
}

// hybrid is, on the float x [B, S, W] (dequantized from v), one of the
// ops of linear-attention hybrids and the other late contrib ops:
// GatedAdd, GatedRMSNorm over groups of C, a channels-last
// CausalConvWithState with its state, GatedDeltaNet over weights shaped
// as token-major Q, K, V and a state, RelativePositionBias,
// PagedAttention (packed Q|K|V over a paged cache), GemmFloat8 over float8
// weights, packing mode (RemovePadding, PackedAttention or
// PackedMultiHeadAttention, RestorePadding), DynamicQuantizeLSTM, the fused
// int4 projections (MatMulNBitsQkv, MatMulNBitsMlp), block-scaled FP4 and
// FP8 weights, M-RoPE, LinearAttention with its gate, Rfft and Irfft,
// the fused dropouts (BiasDropout, BitmaskBiasDropout, BitmaskDropout),
// a complex product (ComplexMul, ComplexMulConj), an Engram gate, Inverse
// or IsAllFinite, the n-gram ops (NGramHashMapping, NGramRepeatBlock),
// VarlenCausalConvWithState, the vision ops (CDist, CropAndResize,
// MaxpoolWithMask, ConvTransposeWithDynamicPads), an EPContext engine,
// or onnxruntime's
// com.microsoft twins DequantizeLinear and Trilu.
func (g *gen) hybrid(x, v *ir.Value) *ir.Value {
	b, s, w := known(v, 0, 2), known(v, 1, 2), known(v, 2, 4)
	switch g.intn(16) {
	case 15:
		// onnxruntime's fused dropouts over x, or a complex product of
		// (real, imaginary) pairs.
		switch g.intn(8) {
		case 7:
			// An execution provider's engine over x, its output's type
			// declared or not.
			y := g.ms("EPContext", []*ir.Value{x}, &ir.Attribute{Name: "source", Type: ir.AttrString, S: "QNN"})
			if g.intn(2) == 0 {
				y.Declared = &ir.TypeInfo{DType: ir.Float32, Shape: ir.KnownShape(b, s, g.perturb(w))}
			}
			return y
		case 6:
			// onnxruntime's vision contrib ops over x seen as an image
			// [b, s, w, 1]: distances between rows, crops of boxes, a
			// masked max pool, a transposed convolution with its pads an
			// input.
			img := g.node("Unsqueeze", []*ir.Value{x, g.ints(3)}, 1)
			switch g.intn(4) {
			case 0:
				return g.ms("CDist", []*ir.Value{g.weight(false, s, w), g.weight(false, g.rangeIn(1, 4), g.perturb(w))},
					&ir.Attribute{Name: "metric", Type: ir.AttrString, S: []string{"euclidean", "sqeuclidean", "cosine"}[g.intn(3)]})
			case 1:
				crop := g.value("c")
				g.graph.AddInitializer(crop, &ir.Tensor{Name: crop.Name, DType: ir.Int32, Dims: []int64{2}, Ints: []int64{g.wild(g.rangeIn(1, 4)), g.rangeIn(1, 4)}, HasData: true})
				rois := g.rangeIn(1, 3)
				return g.ms("CropAndResize", []*ir.Value{img, g.weight(false, rois, g.perturb(4)), g.typed(ir.Int32, rois), crop})
			case 2:
				return g.ms("MaxpoolWithMask", []*ir.Value{img, g.typed(ir.Int32, b, s, w, 1)}, attrInts("kernel_shape", 1, 1), attrInts("strides", 1, 1))
			}
			var pads *ir.Value
			if g.intn(2) == 0 {
				pads = g.ints(0, 0, 0, g.wild(0))
			}
			return g.ms("ConvTransposeWithDynamicPads", []*ir.Value{img, g.weight(false, g.perturb(s), 2, 1, 1), pads}, attrInts("strides", 1, 1))
		case 5:
			// Engram's n-gram hashes of token ids, the no-repeat ban on
			// x's scores, or a packed causal convolution over x's rows.
			ids := g.typed(ir.Int64, b, g.perturb(s))
			switch g.intn(3) {
			case 0:
				h := g.rangeIn(1, 3)
				hash := g.msN("NGramHashMapping", []*ir.Value{ids, g.typed(ir.Int64, 3), g.typed(ir.Int64, g.perturb(2*h))}, 1+g.intn(2),
					attrInt("max_ngram_size", g.wild(3)), attrInt("n_head_per_ngram", h), attrInt("pad_id", 0))
				return g.node("Cast", []*ir.Value{hash}, 1, attrInt("to", int64(ir.Float32)))
			case 1:
				return g.ms("NGramRepeatBlock", []*ir.Value{ids, g.weight(false, b, w)}, attrInt("ngram_size", g.wild(g.rangeIn(1, 4))))
			}
			k := g.rangeIn(1, 4)
			return g.msN("VarlenCausalConvWithState", []*ir.Value{g.weight(false, s, w), g.weight(false, g.perturb(w), 1, k), g.typed(ir.Int32, b+1),
				nil, g.weight(false, b, w, g.perturb(k-1))}, 2)
		case 4:
			// A batch of inverses of s×s matrices, or the all-finite
			// check over x (a bool, cast back to float).
			if g.intn(2) == 0 {
				return g.ms("Inverse", []*ir.Value{g.weight(false, b, s, g.perturb(s))})
			}
			return g.node("Cast", []*ir.Value{g.ms("IsAllFinite", []*ir.Value{x, x})}, 1, attrInt("to", int64(ir.Float32)))
		case 3:
			// An Engram gate of x as the shared value, over 2
			// hyper-connections.
			k := g.weight(false, b, s, 2, g.perturb(w))
			sc := g.weight(false, 2, w)
			return g.ms("EngramGate", []*ir.Value{k, k, x, sc, sc})
		case 0:
			op := []string{"BiasDropout", "BitmaskBiasDropout"}[g.intn(2)]
			return g.msN(op, []*ir.Value{x, g.weight(false, g.perturb(w)), x}, 2)
		case 1:
			return g.msN("BitmaskDropout", []*ir.Value{x}, 2)
		}
		op := []string{"ComplexMul", "ComplexMulConj"}[g.intn(2)]
		return g.ms(op, []*ir.Value{g.weight(false, b, s, 2), g.weight(false, g.perturb(s), g.perturb(2))})
	case 14:
		// A real FFT over x's last one or two axes and back.
		nd := attrInt("signal_ndim", g.wild(g.rangeIn(1, 2)))
		return g.ms("Irfft", []*ir.Value{g.ms("Rfft", []*ir.Value{x}, nd)}, nd)
	case 13:
		// LinearAttention over x as packed Q, K and V, its gates from
		// LinearAttentionGate.
		hq, d := int64(1), w
		if w%2 == 0 && g.intn(2) == 0 {
			hq, d = 2, w/2
		}
		gate := g.weight(false, b, s, hq)
		decay := g.msN("LinearAttentionGate", []*ir.Value{gate, g.weight(false, hq), g.weight(false, hq), gate}, 2).Producer
		rule := []string{"linear", "gated", "delta", "gated_delta"}[g.intn(4)]
		return g.msN("LinearAttention", []*ir.Value{x, x, x, g.weight(false, g.perturb(b), hq, d, d), decay.Outputs[0], decay.Outputs[1]}, 2,
			attrInt("q_num_heads", g.wild(hq)), attrInt("kv_num_heads", hq), ir.StringAttr("update_rule", rule),
			attrInt("state_window", g.rangeIn(0, 2)), attrInt("chunk_size", g.rangeIn(0, 64)))
	case 12:
		// Qwen-VL's M-RoPE over x, one head of w.
		half := w / 2
		cache := g.weight(false, g.rangeIn(1, 64), half)
		sec := []int64{half / 3, half / 3, half - 2*(half/3)}
		return g.ms("MRotaryEmbedding", []*ir.Value{x, g.typed(ir.Int64, 3, b, s), cache, cache}, attrInts("mrope_section", sec[0], sec[1], g.perturb(sec[2])))
	case 11:
		// A block-scaled FP4 or FP8 weight over x.
		n := g.rangeIn(1, 64)
		if g.intn(2) == 0 {
			return g.ms("MatMulBlockQuantizedFp4Weight", []*ir.Value{x, g.typed(ir.Uint8, n, g.perturb(w)/2), g.typed(ir.Uint8, n, (w+15)/16), g.weight(true)})
		}
		ins := []*ir.Value{x, g.typed(ir.Float8E4M3FN, n, g.perturb(w)), g.weight(true, n, (w+127)/128)}
		if g.intn(2) == 0 {
			ins = append(ins, g.weight(true))
		}
		return g.ms("MatMulBlockQuantizedFp8Weight", ins)
	case 10:
		// onnxruntime-genai's fused int4 projections over x (K = w).
		n := 16 * g.rangeIn(1, 4)
		packed := func() (*ir.Value, *ir.Value) {
			blocks := (w + 15) / 16
			return g.typed(ir.Uint8, g.perturb(n), blocks, 8), g.weight(true, n*blocks)
		}
		norm := g.weight(true, w)
		attrs := []*ir.Attribute{attrInt("K", g.wild(w)), attrInt("block_size", 16), attrInt("bits", 4)}
		gb, gs := packed()
		ub, us := packed()
		if g.intn(2) == 0 {
			return g.msN("MatMulNBitsMlp", []*ir.Value{x, x, norm, gb, gs, nil, ub, us, nil}, 2,
				append(attrs, attrInt("N", n), ir.StringAttr("activation", []string{"silu", "gelu", "unknown"}[g.intn(3)]))...)
		}
		vb, vs := packed()
		return g.msN("MatMulNBitsQkv", []*ir.Value{x, nil, norm, gb, gs, nil, ub, us, nil, vb, vs, nil}, 3,
			append(attrs, attrInt("Nq", n), attrInt("Nkv", n))...)
	case 9:
		// quantize_dynamic's LSTM over x as [seq, batch, input].
		h, dirs := g.rangeIn(1, 8), g.rangeIn(1, 2)
		qs := int64(1)
		if g.intn(2) == 0 {
			qs = 4 * h // per-channel scales
		}
		i8 := func(d ...int64) *ir.Value { return g.typed(ir.Int8, d...) }
		attrs := []*ir.Attribute{attrInt("hidden_size", g.wild(h))}
		if dirs == 2 {
			attrs = append(attrs, ir.StringAttr("direction", "bidirectional"))
		}
		return g.msN("DynamicQuantizeLSTM", []*ir.Value{x, i8(dirs, g.perturb(w), 4*h), i8(dirs, h, 4*h), nil, nil, nil, nil, nil,
			g.weight(true, dirs, qs), i8(dirs, qs), g.weight(true, dirs, qs), i8(dirs, qs)}, 3, attrs...)
	case 8:
		counts := g.typed(ir.Int32, g.perturb(b))
		if b > 0 && b <= 64 && g.intn(2) == 0 {
			// Known counts (a mask given as input data), some past the slots.
			vals := make([]int64, b)
			for i := range vals {
				vals[i] = g.rangeIn(0, int(min(s, 1<<16))+1)
			}
			t := ir.IntTensor([]int64{b}, vals)
			t.DType = ir.Int32
			counts = g.value("c")
			t.Name = counts.Name
			g.graph.AddInitializer(counts, t)
		}
		rp := g.msN("RemovePadding", []*ir.Value{x, counts}, 4).Producer
		rows, off, cum := rp.Outputs[0], rp.Outputs[1], rp.Outputs[2]
		var att *ir.Value
		if h, d := g.rangeIn(1, 4), g.rangeIn(1, 16); g.intn(2) == 0 {
			att = g.ms("PackedAttention", []*ir.Value{rows, g.weight(false, g.perturb(w), 3*h*d), g.weight(false, 3*h*d), off, cum},
				attrInt("num_heads", g.wild(h)))
		} else {
			h = 1
			if w%2 == 0 && g.intn(2) == 0 {
				h = 2
			}
			if g.intn(16) == 15 {
				cum = g.typed(ir.Int32, b+2) // lengths for another batch
			}
			att = g.ms("PackedMultiHeadAttention", []*ir.Value{rows, rows, rows, nil, off, cum}, attrInt("num_heads", g.wild(h)))
		}
		return g.ms("RestorePadding", []*ir.Value{att, off})
	case 7:
		w8 := func(d ...int64) *ir.Value {
			return g.typed([]ir.DType{ir.Float8E4M3FN, ir.Float8E5M2}[g.intn(2)], d...)
		}
		n := g.rangeIn(1, 16)
		return g.ms("GemmFloat8", []*ir.Value{w8(b*s, g.perturb(w)), w8(n, w), nil, g.weight(true), g.weight(true)},
			attrInt("transB", 1), attrInt("dtype", int64(ir.Float32)), ir.StringAttr("activation", []string{"NONE", "RELU", "GELU"}[g.intn(3)]))
	case 6:
		h, kvh, d := g.rangeIn(1, 4), int64(1), g.rangeIn(1, 16)
		if h%2 == 0 && g.intn(2) == 0 {
			kvh = 2
		}
		cache := g.weight(false, g.rangeIn(1, 8), 1<<g.intn(5), kvh, d)
		return g.msN("PagedAttention", []*ir.Value{g.weight(false, b*s, g.perturb(h*d)), nil, nil, cache, cache, g.typed(ir.Int32, b+1),
			g.typed(ir.Int32, b), g.typed(ir.Int32, g.perturb(b), g.rangeIn(1, 8))}, 1,
			attrInt("num_heads", g.wild(h)), attrInt("kv_num_heads", kvh), attrInt("local_window_size", g.rangeIn(-1, 8)))
	case 0:
		return g.ms("GatedAdd", []*ir.Value{x, x, g.weight(false, b, g.perturb(s), 1)})
	case 1:
		return g.ms("GatedRMSNorm", []*ir.Value{x, g.weight(false, g.perturb(g.group(w))), x}, attrFloat("epsilon", 1e-6))
	case 2:
		k := g.rangeIn(1, 4)
		attrs := []*ir.Attribute{attrInt("channels_last", 1), attrInt("dilation", g.wild(g.rangeIn(1, 2))), ir.StringAttr("activation", "silu")}
		if g.intn(3) == 0 {
			attrs = append(attrs, attrInt("state_window", g.rangeIn(1, 3)))
		}
		return g.msN("CausalConvWithState", []*ir.Value{x, g.weight(false, g.perturb(w), 1, k), g.weight(false, w)}, 2, attrs...)
	case 3:
		hq, d := g.rangeIn(1, 4), g.rangeIn(1, 16)
		hv := hq * g.rangeIn(1, 2)
		tokens := b * s
		qk := g.weight(false, tokens, g.perturb(hq), d)
		state := g.weight(false, g.perturb(b), hv, d, d)
		return g.msN("GatedDeltaNet", []*ir.Value{qk, qk, g.weight(false, tokens, hv, d), nil, g.weight(false, tokens, hv), g.weight(false, tokens, hv), state}, 2,
			ir.StringAttr("gate_activation", "qwen"), ir.StringAttr("beta_activation", "sigmoid"), attrInt("qk_l2_norm", int64(g.intn(2))))
	case 4:
		heads := g.rangeIn(1, 4)
		return g.ms("RelativePositionBias", []*ir.Value{g.weight(false, g.rangeIn(2, 32), heads), g.ints(g.wild(s)), g.ints(s)},
			attrInt("max_distance", 128), attrInt("is_bidirectional", int64(g.intn(2))))
	default:
		if g.intn(2) == 0 {
			return g.ms("Trilu", []*ir.Value{x}, attrInt("upper", int64(g.intn(2))))
		}
		p := g.weight(true)
		return g.ms("DequantizeLinear", []*ir.Value{g.ms("QuantizeLinear", []*ir.Value{x, p, g.typed(ir.Uint16)}), p, g.typed(ir.Uint16)})
	}
}
