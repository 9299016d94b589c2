package ir

// Traits are yes/no facts about an operator that passes, cost rules and
// pictures ask about. They are declared once, in the op's schema in
// ops_*.go, and read through LookupOp (or Has); no other package keeps its
// own list of, say, elementwise ops. The registry test in
// internal/registrytest checks that each trait's promise holds on the
// other side (an Elementwise op has an elementwise cost rule, ...).
type Traits uint16

const (
	// Elementwise ops are pointwise maps or numpy-broadcast arithmetic
	// whose outputs an elementwise chain (passes/elementwise.go) may fuse
	// into one kernel. Comparisons and logic are not flagged: their bool
	// outputs never join a floating-point chain.
	Elementwise Traits = 1 << iota
	// Commutative binary ops may carry a constant operand on either side;
	// decomposition matchers (passes/decomp_match.go) swap it to the
	// right. Only Add and Mul are flagged: the matchers need nothing more.
	Commutative
	// View ops run no kernel and move no bytes: the output is the input
	// seen with other metadata, or small host-side bookkeeping (Shape,
	// sequence and optional containers).
	View
	// Alias ops return their input's buffer (a reshaping view, or a
	// no-op at inference such as Dropout): peak-memory accounting gives
	// the output no allocation of its own.
	Alias
	// FusableActivation ops are unary activations a Conv/Gemm/MatMul
	// epilogue may absorb (passes/epilogue.go); OpSchema.EpilogueAttrs
	// lists the attributes the fused node carries over.
	FusableActivation
	// InPlace ops write an output into an input's buffer when nothing
	// reads that input afterwards: the output is the input with some
	// elements replaced. Which output updates which input is
	// OpSchema.InPlacePairs; by default output 0 updates input 0
	// (ScatterND, ScatterElements and the older Scatter, which onnxruntime
	// registers with MayInplace(0, 0)). A KV-cache update is the common
	// case, also inside attention ops whose present_key/present_value
	// share the past_key/past_value buffers. Unlike Alias the op runs a
	// kernel; peak-memory accounting (cost/memory.go) gives the output no
	// allocation of its own only when the input dies at the node.
	InPlace
)

// Has reports whether every trait in want is set.
func (t Traits) Has(want Traits) bool { return t&want == want }

// Family groups operators by the kind of kernel they run, for pictures
// (viz colours boxes by family) and summaries. The zero value is
// FamilyOther.
type Family uint8

const (
	FamilyOther Family = iota
	FamilyElementwise
	FamilyConv
	FamilyGEMM
	FamilyAttention
	FamilyRNN
	FamilyPool
	FamilyNorm   // normalisations and softmax
	FamilyReduce // reductions and arg-reductions
	FamilyData   // data movement: copies, gathers, scatters, views
)

var familyNames = [...]string{"other", "elementwise", "conv", "gemm", "attention", "rnn", "pool", "norm", "reduce", "data"}

func (f Family) String() string {
	if int(f) < len(familyNames) {
		return familyNames[f]
	}
	return "other"
}

// OpHas reports whether the registered schema for (domain, op) has every
// trait in want; an unregistered op has none.
func OpHas(domain, op string, want Traits) bool {
	s := LookupOp(domain, op)
	return s != nil && s.Traits.Has(want)
}

// NodeHas is OpHas for a node's op.
func NodeHas(n *Node, want Traits) bool { return OpHas(n.Domain, n.OpType, want) }

// OpFamily returns the declared family of (domain, op), FamilyOther when
// the op is not registered.
func OpFamily(domain, op string) Family {
	if s := LookupOp(domain, op); s != nil {
		return s.Family
	}
	return FamilyOther
}

// OtherOperand returns the operand of binary node n that is not v, or nil
// when n is nil, not binary, or does not read v. When n reads v in both
// slots (Mul(x, x)) the other operand is v itself: a matcher for x·x needs
// that answer, and a caller that wants a second tensor (a residual, a
// bias) checks o != v.
func OtherOperand(n *Node, v *Value) *Value {
	if n == nil || len(n.Inputs) != 2 {
		return nil
	}
	switch v {
	case n.In(0):
		return n.In(1)
	case n.In(1):
		return n.In(0)
	}
	return nil
}
