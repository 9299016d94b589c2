package ir

// Limits bound what the reader and shape inference accept, so that hostile
// or corrupt input fails with an error before it can exhaust memory, wrap
// an integer or recurse without end. Every check happens before the
// allocation or recursion it protects.
//
// Counting is not allocating: a tensor that is only described by its
// shape (an activation whose MACs and bytes are counted) may be far larger
// than anything the reader or constant folding would materialise, so the
// two have separate bounds. MaxElements bounds tensors whose data the
// reader decodes or locates; MaxCountedElements bounds inferred shapes,
// which are never allocated: a question such as LLaMA-70B at batch 64 and
// 2^20 tokens has attention scores of 2^52 elements and a MAC total past
// 2^63, and must get an answer, not a refusal. Folding and value
// propagation materialise only tensors of at most SmallTensorElems.
type Limits struct {
	MaxRank     int   // dims per tensor
	MaxDim      int64 // largest single dimension
	MaxElements int64 // largest product of dims of a tensor in the file
	// MaxCountedElements bounds the product of an inferred shape's dims
	// (computed in float64, never wrapping).
	MaxCountedElements float64
	MaxDepth           int // nesting of subgraphs and function calls
	MaxNodes           int // nodes in the model, subgraphs and functions included, and in the graph with its functions inlined
	SmallTensorElems   int64
	// SmallTensorElems: tensors up to this many elements have their values
	// decoded, folded or propagated.
}

// DefaultLimits are generous for real models (the largest LLMs have dims
// around 2^18 and weight tensors around 2^34 elements) and small enough
// that a dim of 2^62 or a file tensor whose size overflows int64 is
// rejected. MaxCountedElements is 2^100: no real question comes near it,
// and a count that size times any per-element cost and any node count
// stays many orders of magnitude inside float64 (and exactly
// representable to 53 bits, far below the 1% the reports need).
var DefaultLimits = Limits{
	MaxRank:            64,
	MaxDim:             1 << 40,
	MaxElements:        1 << 50,
	MaxCountedElements: 0x1p100,
	MaxDepth:           64,
	MaxNodes:           5_000_000,
	SmallTensorElems:   4096,
}
