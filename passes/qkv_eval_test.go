package passes

// An extension of the reference evaluator (refeval_test.go) for the
// transformer fusions: nodes with several outputs, batched MatMul,
// Transpose, Softmax, Sub/Div, LayerNormalization (default-domain and
// recognised), and the fused ops GroupedGemm, SkipLayerNormalization and
// FusedAttention (head-layout and packed). Ops it does not know go to
// evalNode.

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// evaluateX runs g on inputs and returns the graph outputs in order.
func evaluateX(g *ir.Graph, inputs map[string]*tensor) ([]*tensor, error) {
	env := map[*ir.Value]*tensor{}
	for _, v := range g.Inputs {
		t, ok := inputs[v.Name]
		if !ok {
			return nil, fmt.Errorf("no value for input %q", v.Name)
		}
		env[v] = t
	}
	for _, v := range g.Initializers {
		if v.Const == nil || !v.Const.HasData {
			return nil, fmt.Errorf("initializer %q has no contents", v.Name)
		}
		env[v] = constTensor(v.Const)
	}
	for _, n := range g.Nodes {
		ins := make([]*tensor, len(n.Inputs))
		for i, v := range n.Inputs {
			if v != nil {
				if ins[i] = env[v]; ins[i] == nil {
					return nil, fmt.Errorf("node %s: input %q not computed", n.Name, v.Name)
				}
			}
		}
		if k := ir.Known(n.Out(0)); k != nil {
			env[n.Out(0)] = constTensor(k)
			continue
		}
		outs, err := evalNodeX(n, ins)
		if err != nil {
			return nil, fmt.Errorf("node %s (%s): %v", n.Name, n.OpType, err)
		}
		for i, o := range n.Outputs {
			if o != nil && i < len(outs) {
				env[o] = outs[i]
			}
		}
	}
	var outs []*tensor
	for _, v := range g.Outputs {
		if env[v] == nil {
			return nil, fmt.Errorf("graph output %q not computed", v.Name)
		}
		outs = append(outs, env[v])
	}
	return outs, nil
}

// checkPreservesX is checkPreserves with evaluateX.
func checkPreservesX(t *testing.T, g *ir.Graph, passNames ...string) {
	t.Helper()
	inputs := randomInputs(g, 7)
	before, err := evaluateX(g, inputs)
	if err != nil {
		t.Fatal(err)
	}
	runPasses(t, g, passNames...)
	after, err := evaluateX(g, inputs)
	if err != nil {
		t.Fatalf("after %s: %v\n%s", strings.Join(passNames, ","), err, ir.Dump(g))
	}
	for i := range before {
		if e := relErr(before[i], after[i]); !(e < 1e-9) {
			t.Errorf("output %d: relative error %g after %v, want < 1e-9", i, e, passNames)
		}
	}
}

func evalNodeX(n *ir.Node, ins []*tensor) ([]*tensor, error) {
	one := func(t *tensor) ([]*tensor, error) { return []*tensor{t}, nil }
	switch n.OpType {
	case "Reshape":
		dims, ok := n.Out(0).Shape.Ints()
		if !ok {
			return nil, fmt.Errorf("unknown output shape")
		}
		return one(reshape(ins[0], intsOf(dims)))
	case "MatMul":
		return one(bmatmul(ins[0], ins[1]))
	case "Transpose":
		perm, _ := n.AttrInts("perm")
		return one(transpose(ins[0], intsOf(perm)))
	case "Softmax":
		return one(softmaxLast(ins[0]))
	case "Sub":
		return one(broadcast(ins[0], ins[1], func(a, b float64) float64 { return a - b }))
	case "Pow":
		return one(broadcast(ins[0], ins[1], math.Pow))
	case "Sqrt":
		return one(unary(ins[0], math.Sqrt))
	case "ReduceMean":
		axes, _ := n.AttrInts("axes")
		if len(axes) != 1 || (axes[0] != -1 && int(axes[0]) != len(ins[0].dims)-1) || n.AttrInt("keepdims", 1) != 1 {
			return nil, fmt.Errorf("only a kept last-axis ReduceMean is evaluated")
		}
		x := ins[0]
		k := x.dims[len(x.dims)-1]
		out := newTensor(append(append([]int(nil), x.dims[:len(x.dims)-1]...), 1)...)
		for i := range out.data {
			for j := 0; j < k; j++ {
				out.data[i] += x.data[i*k+j] / float64(k)
			}
		}
		return one(out)
	case "Div":
		return one(broadcast(ins[0], ins[1], func(a, b float64) float64 { return a / b }))
	case "LayerNormalization":
		return one(layerNorm(ins[0], in(ins, 1), in(ins, 2), n.AttrInt("axis", -1), n.AttrFloat("epsilon", 1e-5)))
	case "SkipLayerNormalization":
		s := broadcast(ins[0], ins[1], func(a, b float64) float64 { return a + b })
		return []*tensor{layerNorm(s, in(ins, 2), in(ins, 3), n.AttrInt("axis", -1), n.AttrFloat("epsilon", 1e-5)), s}, nil
	case "GroupedGemm":
		trans, _ := n.AttrInts("trans_b")
		var outs []*tensor
		for i := range n.Outputs {
			w := ins[1+2*i]
			if i < len(trans) && trans[i] != 0 {
				w = transpose(w, []int{1, 0})
			}
			y := bmatmul(ins[0], w)
			if b := in(ins, 2+2*i); b != nil {
				y = broadcast(y, b, func(a, b float64) float64 { return a + b })
			}
			outs = append(outs, y)
		}
		return outs, nil
	case "FusedAttention":
		return one(fusedAttention(n, ins))
	case "FusedGemm":
		if n.AttrString("anchor", "") == "Gemm" {
			break
		}
		// evalNode's MatMul is 2-D only.
		add := func(a, b float64) float64 { return a + b }
		y := bmatmul(ins[0], ins[1])
		for _, extra := range []*tensor{in(ins, 2), in(ins, 3)} {
			if extra != nil {
				y = broadcast(y, extra, add)
			}
		}
		return one(unary(y, activation(n, n.AttrString("activation", ""))))
	}
	t, err := evalNode(n, ins)
	return []*tensor{t}, err
}

func reshape(t *tensor, dims []int) *tensor {
	return &tensor{dims: append([]int(nil), dims...), data: t.data}
}

// bmatmul multiplies a [..., M, K] by b [..., K, N] (equal batch dims)
// or by a matrix b [K, N].
func bmatmul(a, b *tensor) *tensor {
	ra, rb := len(a.dims), len(b.dims)
	m, k, nn := a.dims[ra-2], a.dims[ra-1], b.dims[rb-1]
	batch := a.len() / (m * k)
	out := newTensor(append(append([]int(nil), a.dims[:ra-2]...), m, nn)...)
	for p := 0; p < batch; p++ {
		boff := 0
		if rb > 2 {
			boff = p * k * nn
		}
		for i := 0; i < m; i++ {
			for j := 0; j < nn; j++ {
				s := 0.0
				for q := 0; q < k; q++ {
					s += a.data[p*m*k+i*k+q] * b.data[boff+q*nn+j]
				}
				out.data[p*m*nn+i*nn+j] = s
			}
		}
	}
	return out
}

// transpose permutes t's axes: out.dims[i] = t.dims[perm[i]].
func transpose(t *tensor, perm []int) *tensor {
	r := len(t.dims)
	od := make([]int, r)
	for i, p := range perm {
		od[i] = t.dims[p]
	}
	out := newTensor(od...)
	stride := make([]int, r)
	s := 1
	for i := r - 1; i >= 0; i-- {
		stride[i] = s
		s *= t.dims[i]
	}
	idx := make([]int, r)
	for o := range out.data {
		src := 0
		for i := range idx {
			src += idx[i] * stride[perm[i]]
		}
		out.data[o] = t.data[src]
		for i := r - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < od[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

func softmaxLast(t *tensor) *tensor {
	n := t.dims[len(t.dims)-1]
	out := newTensor(t.dims...)
	for r := 0; r < t.len()/n; r++ {
		row := t.data[r*n : (r+1)*n]
		mx := math.Inf(-1)
		for _, x := range row {
			mx = math.Max(mx, x)
		}
		sum := 0.0
		for j, x := range row {
			out.data[r*n+j] = math.Exp(x - mx)
			sum += out.data[r*n+j]
		}
		for j := range row {
			out.data[r*n+j] /= sum
		}
	}
	return out
}

// layerNorm normalises over the axes from axis on, then scales and shifts.
func layerNorm(x, gamma, beta *tensor, axis int64, eps float64) *tensor {
	r := len(x.dims)
	if axis < 0 {
		axis += int64(r)
	}
	n := 1
	for _, d := range x.dims[axis:] {
		n *= d
	}
	y := newTensor(x.dims...)
	for row := 0; row < x.len()/n; row++ {
		v := x.data[row*n : (row+1)*n]
		mean, sq := 0.0, 0.0
		for _, a := range v {
			mean += a
		}
		mean /= float64(n)
		for _, a := range v {
			sq += (a - mean) * (a - mean)
		}
		sd := math.Sqrt(sq/float64(n) + eps)
		for j, a := range v {
			y.data[row*n+j] = (a - mean) / sd
		}
	}
	if gamma != nil {
		y = broadcast(y, gamma, func(a, b float64) float64 { return a * b })
	}
	if beta != nil {
		y = broadcast(y, beta, func(a, b float64) float64 { return a + b })
	}
	return y
}

// fusedAttention evaluates FusedAttention from its documented contract
// (passes/attention.go, passes/attention_heads.go).
func fusedAttention(n *ir.Node, ins []*tensor) *tensor {
	q, k, v := ins[0], ins[1], ins[2]
	h := int(n.AttrInt("num_heads", 0))
	split := func(t *tensor, permName string) *tensor {
		d := t.dims
		t = reshape(t, []int{d[0], d[1], h, d[2] / h})
		if p, ok := n.AttrInts(permName); ok {
			t = transpose(t, intsOf(p))
		}
		return t
	}
	if h > 0 {
		q, k, v = split(q, "q_perm"), split(k, ""), split(v, "v_perm")
	}
	if n.AttrInt("k_transposed", 0) == 1 {
		p, _ := n.AttrInts("k_perm")
		k = transpose(k, intsOf(p))
	}
	scale := n.AttrFloat("scale", 0)
	mul := func(t *tensor) *tensor { return unary(t, func(x float64) float64 { return x * scale }) }
	if n.AttrString("scale_on", "") == "q" {
		q = mul(q)
	}
	s := bmatmul(q, k)
	if n.AttrString("scale_on", "") == "scores" {
		s = mul(s)
	}
	if n.AttrString("mask", "") == "add" {
		s = broadcast(s, ins[3], func(a, b float64) float64 { return a + b })
	}
	o := bmatmul(softmaxLast(s), v)
	if h > 0 {
		p, _ := n.AttrInts("o_perm")
		o = transpose(o, intsOf(p))
		d := o.dims
		o = reshape(o, []int{d[0], d[1], d[2] * d[3]})
	}
	return o
}
