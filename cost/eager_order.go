package cost

import (
	"slices"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Eager PyTorch keeps a permute as a view (strideView), and its
// TensorIterator gives a pointwise op's output the memory order of its
// first full-size input (TensorIteratorBase::reorder_dimensions: an
// operand whose strides settle the order of two dims decides it; the
// output is allocated in that order). So a permuted head flows through
// the ops that read it: Hugging Face's LLaMA transposes q and k to
// [b, h, s, d] as views, and rotary's q·cos and its sum with
// rotate_half(q)·sin (a cat, contiguous) keep the [b, s, h, d] order.
// Two things follow that no single node shows:
//
//   - a pointwise op whose full-size inputs lie in different orders runs
//     TensorIterator's non-vectorized loop (perf.Kernel.Strided): the
//     rotary sums, 2.30-2.85 µs in our H200 trace of the small LLaMA
//     (fp16, batch 8; calib/profile/testdata/kineto_h200), where the
//     contiguous rule priced 1.2;
//   - a batched matmul of an operand whose batch dims do not collapse to
//     one stride copies it first (torch.matmul's reshape to [batch, m, k]
//     cannot view it): the query's 2.27 µs direct_copy before Q·Kᵀ in the
//     same trace, which no node of the graph names. At batch 1 (or a
//     single position) the dims collapse and nothing is copied.
//
// dimOrder is a tensor's memory order: its logical dims from the
// outermost to the innermost in memory; nil is row-major (contiguous).
type dimOrder []int

// noteOrder records the memory order of n's output under the eager plan,
// from its inputs' (recorded before it: nodes run in topological order).
// Only orders other than row-major are kept; a node the rules below do
// not follow writes a contiguous tensor (a cat, an expand's copy, a
// kernel-running transpose, a library kernel).
func (a *analyzer) noteOrder(n *ir.Node, g *ir.Graph) {
	if !a.eagerPlan() || n.Domain != "" || len(n.Outputs) != 1 || n.Out(0) == nil {
		return
	}
	var o dimOrder
	switch {
	case n.OpType == "Transpose":
		perm, ok := transposePerm(n)
		if !ok || unitTranspose(n.In(0), perm) || a.strideView(n, g) == "" {
			return
		}
		o = permutedOrder(a.orderOf(n.In(0), len(perm)), perm)
	case n.OpType == "Slice":
		if a.strideView(n, g) == "" {
			return
		}
		o = a.orders[n.In(0)]
	case StreamOp(n.Domain, n.OpType):
		o = a.iteratorOrder(n)
	}
	if o == nil || identityOrder(o) {
		return
	}
	if a.orders == nil {
		a.orders = map[*ir.Value]dimOrder{}
	}
	a.orders[n.Out(0)] = o
}

// orderOf is v's memory order, row-major ([0, 1, …, rank−1]) where none
// was recorded.
func (a *analyzer) orderOf(v *ir.Value, rank int) dimOrder {
	if o := a.orders[v]; len(o) == rank {
		return o
	}
	o := make(dimOrder, rank)
	for i := range o {
		o[i] = i
	}
	return o
}

// permutedOrder is the memory order of the transpose by perm of a tensor
// whose memory order is in: output dim i is input dim perm[i], so each
// memory position keeps its input dim under its output index.
func permutedOrder(in dimOrder, perm []int64) dimOrder {
	at := make([]int, len(perm))
	for i, p := range perm {
		at[p] = i
	}
	o := make(dimOrder, len(in))
	for j, d := range in {
		o[j] = at[d]
	}
	return o
}

// identityOrder reports whether o is row-major.
func identityOrder(o dimOrder) bool {
	for i, d := range o {
		if d != i {
			return false
		}
	}
	return true
}

// fullSizeInputs are n's inputs of its output's dims: the operands that
// are not broadcast, whose order TensorIterator follows.
func (a *analyzer) fullSizeInputs(n *ir.Node) []*ir.Value {
	sz := a.sizer(n)
	out, ok := sz.Dims(n.Out(0))
	if !ok {
		return nil
	}
	var full []*ir.Value
	for _, v := range n.Inputs {
		if v == nil {
			continue
		}
		if d, ok := sz.Dims(v); ok && slices.Equal(d, out) && prod(d) > 1 {
			full = append(full, v)
		}
	}
	return full
}

// iteratorOrder is the order TensorIterator gives pointwise node n's
// output: its first full-size input's (nil where that is row-major).
func (a *analyzer) iteratorOrder(n *ir.Node) dimOrder {
	if len(a.orders) == 0 {
		return nil // nothing permuted yet: no input has an order
	}
	full := a.fullSizeInputs(n)
	if len(full) == 0 {
		return nil
	}
	return a.orders[full[0]]
}

// mixedOrders reports whether pointwise node n reads full-size inputs in
// different memory orders (dims of size 1 aside: they have no order).
func (a *analyzer) mixedOrders(n *ir.Node) bool {
	if len(a.orders) == 0 {
		return false
	}
	full := a.fullSizeInputs(n)
	if len(full) < 2 {
		return false
	}
	sz := a.sizer(n)
	d, _ := sz.Dims(full[0])
	first := sizedOrder(a.orderOf(full[0], len(d)), d)
	for _, v := range full[1:] {
		if !slices.Equal(first, sizedOrder(a.orderOf(v, len(d)), d)) {
			return true
		}
	}
	return false
}

// sizedOrder is o without the dims of size 1.
func sizedOrder(o dimOrder, d []float64) dimOrder {
	var s dimOrder
	for _, i := range o {
		if d[i] != 1 {
			s = append(s, i)
		}
	}
	return s
}

// matmulCopies are the operands of MatMul n that eager PyTorch copies
// before its batched GEMM: those of rank 3 or more lying in an order
// whose batch dims do not collapse to one stride, or whose matrices have
// neither dim of unit stride (stridedBatch, on the contiguous tensor the
// order describes).
func (a *analyzer) matmulCopies(n *ir.Node) []*ir.Value {
	if len(a.orders) == 0 || n.Domain != "" || n.OpType != "MatMul" {
		return nil
	}
	sz := a.sizer(n)
	var copies []*ir.Value
	for _, v := range n.Inputs[:min(2, len(n.Inputs))] {
		o, ok := a.orders[v]
		if !ok {
			continue
		}
		d, ok := sz.Dims(v)
		if !ok || len(d) < 3 || len(d) != len(o) {
			continue
		}
		mem := make([]float64, len(o))
		perm := make([]int64, len(o))
		for j, i := range o {
			mem[j] = d[i]
			perm[i] = int64(j)
		}
		if !stridedBatch(mem, perm) {
			copies = append(copies, v)
		}
	}
	return copies
}

// matmulOperandCopies prices the copies matmulCopies finds as kernels of
// MatMul n's row: ATen's strided direct_copy (perf.Kernel.Strided, the
// first load of TensorIterator's loops) reading the operand, wherever it
// lies in L2, and writing its contiguous copy.
func (a *analyzer) matmulOperandCopies(nc *report.NodeCost, n *ir.Node, est *NodeEstimate, agg *aggregate) {
	copies := a.matmulCopies(n)
	if len(copies) == 0 || a.gpu == nil {
		return
	}
	sz := a.sizer(n)
	prec := a.precisionFor(n, perf.ClassData)
	for _, v := range copies {
		b := sz.Bytes(v)
		if !(b > 0) {
			continue
		}
		dram := b
		if a.l2 != nil {
			dram += max(0, b-a.l2.resident(v))
		}
		k := perf.Kernel{
			Class: perf.ClassData, Bytes: 2 * b, WorkingSet: 2 * b, WriteShare: 0.5,
			Precision: prec, ElemBytes: sz.elemBytes(v), Launches: 1,
			Resident: true, DRAMBytes: dram,
			TensorIterator: !a.lone, Strided: true,
		}
		a.priceExtra(k, b, b, est, agg)
	}
	nc.Counts, nc.Launches = est.Counts, est.Launches
	nc.Note = appendNote(nc.Note, "with the copy torch.matmul makes of a permuted operand whose batch dims do not collapse")
}
