package passes

// The reference evaluator's kernels (refeval_test.go) for the transformer
// fusions: batched MatMul, Transpose, Softmax, ReduceMean,
// LayerNormalization, and the fused ops GroupedGemm and FusedAttention
// (head-layout and packed).

import (
	"fmt"
	"math"

	"github.com/onnxcost/onnxcost/ir"
)

// reduceMeanLast evaluates the one ReduceMean the LayerNormalization
// patterns use: the mean over the last axis, kept.
func reduceMeanLast(n *ir.Node, x *tensor) ([]*tensor, error) {
	axes, _ := n.AttrInts("axes")
	if len(axes) != 1 || (axes[0] != -1 && int(axes[0]) != len(x.dims)-1) || n.AttrInt("keepdims", 1) != 1 {
		return nil, fmt.Errorf("only a kept last-axis ReduceMean is evaluated")
	}
	k := x.dims[len(x.dims)-1]
	out := newTensor(append(append([]int(nil), x.dims[:len(x.dims)-1]...), 1)...)
	for i := range out.data {
		for j := 0; j < k; j++ {
			out.data[i] += x.data[i*k+j] / float64(k)
		}
	}
	return []*tensor{out}, nil
}

// groupedGemm evaluates GroupedGemm: one x times each (optionally
// transposed) weight, plus its bias, one output per weight.
func groupedGemm(n *ir.Node, ins []*tensor) []*tensor {
	trans, _ := n.AttrInts("trans_b")
	var outs []*tensor
	for i := range n.Outputs {
		w := ins[1+2*i]
		if i < len(trans) && trans[i] != 0 {
			w = transpose(w, []int{1, 0})
		}
		y := bmatmul(ins[0], w)
		if b := in(ins, 2+2*i); b != nil {
			y = broadcast(y, b, add)
		}
		outs = append(outs, y)
	}
	return outs
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

// mapRows applies f to every row of x, a row being the trailing axes from
// axis on, and returns the rows f wrote: the loop the normalisations share
// (an axis counts from the end when negative, as in ONNX).
func mapRows(x *tensor, axis int64, f func(in, out []float64)) *tensor {
	if axis < 0 {
		axis += int64(len(x.dims))
	}
	n := 1
	for _, d := range x.dims[axis:] {
		n *= d
	}
	y := newTensor(x.dims...)
	for row := 0; row < x.len()/n; row++ {
		f(x.data[row*n:(row+1)*n], y.data[row*n:(row+1)*n])
	}
	return y
}

// layerNorm normalises over the axes from axis on, then scales and shifts.
func layerNorm(x, gamma, beta *tensor, axis int64, eps float64) *tensor {
	y := mapRows(x, axis, func(v, out []float64) {
		mean, sq := 0.0, 0.0
		for _, a := range v {
			mean += a
		}
		mean /= float64(len(v))
		for _, a := range v {
			sq += (a - mean) * (a - mean)
		}
		sd := math.Sqrt(sq/float64(len(v)) + eps)
		for j, a := range v {
			out[j] = (a - mean) / sd
		}
	})
	if gamma != nil {
		y = broadcast(y, gamma, mul)
	}
	if beta != nil {
		y = broadcast(y, beta, add)
	}
	return y
}

// fusedAttention evaluates FusedAttention from its documented contract
// (passes/attention.go, passes/attention_heads.go).
func fusedAttention(n *ir.Node, ins []*tensor) *tensor {
	q, k, v := ins[0], ins[1], ins[2]
	if n.AttrInt("qkv_packed", 0) == 1 {
		d := float64(q.dims[len(q.dims)-1] / 3)
		q, k, v = sliceLast(ins[0], 0, d), sliceLast(ins[0], d, 2*d), sliceLast(ins[0], 2*d, 3*d)
	}
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
	// Without num_heads, absorbed transposes and unsqueezes
	// (passes/attention_layout.go) take each input to the head layout.
	layout := func(t *tensor, slot int) *tensor {
		p, u := ir.AttentionLayout(n, slot)
		if p != nil {
			t = transpose(t, intsOf(p))
		}
		if u != nil {
			d, _ := ir.ToHeadLayout(t.dims, nil, u, 1)
			t = reshape(t, d)
		}
		return t
	}
	if h == 0 {
		q, v = layout(q, 0), layout(v, 2)
		if n.AttrInt("k_transposed", 0) == 1 {
			k = layout(k, 1)
		}
	} else if n.AttrInt("k_transposed", 0) == 1 {
		p, _ := n.AttrInts("k_perm")
		k = transpose(k, intsOf(p))
	}
	scale := n.AttrFloat("scale", 0)
	scaled := func(t *tensor) *tensor { return unary(t, func(x float64) float64 { return x * scale }) }
	if n.AttrString("scale_on", "") == "q" {
		q = scaled(q)
	}
	s := bmatmul(q, k)
	if n.AttrString("scale_on", "") == "scores" {
		s = scaled(s)
	}
	if n.AttrString("mask", "") == "add" {
		s = broadcast(s, ins[3], add)
	}
	o := bmatmul(softmaxLast(s), v)
	if p, ok := n.AttrInts("o_perm"); ok && h == 0 {
		o = transpose(o, intsOf(p))
	}
	if h > 0 {
		p, _ := n.AttrInts("o_perm")
		o = transpose(o, intsOf(p))
		d := o.dims
		o = reshape(o, []int{d[0], d[1], d[2] * d[3]})
	}
	return o
}
