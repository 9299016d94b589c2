package ir

// Limits bound what the reader and shape inference accept, so that hostile
// or corrupt input fails with an error before it can exhaust memory, wrap
// an integer or recurse without end. Every check happens before the
// allocation or recursion it protects.
type Limits struct {
	MaxRank          int   // dims per tensor
	MaxDim           int64 // largest single dimension
	MaxElements      int64 // largest product of dims (before overflow)
	MaxDepth         int   // nesting of subgraphs and function calls
	MaxNodes         int   // nodes in the model, subgraphs and functions included
	SmallTensorElems int64 // tensors up to this many elements have their values decoded
}

// DefaultLimits are generous for real models (the largest LLMs have dims
// around 2^18 and tensors around 2^34 elements) and small enough that a dim
// of 2^62 or a product that overflows int64 is rejected.
var DefaultLimits = Limits{
	MaxRank:          64,
	MaxDim:           1 << 40,
	MaxElements:      1 << 50,
	MaxDepth:         64,
	MaxNodes:         5_000_000,
	SmallTensorElems: 4096,
}
