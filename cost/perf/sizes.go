package perf

import (
	"math"
	"math/bits"
)

// Sizes reach the time model as int64 (a GEMM view, rows, steps), but a
// model's dims can multiply past 2^63, where an int64 product wraps to a
// small or negative count and a huge kernel is priced as a tiny one.
// Every product of sizes here goes through mulSat (an int that must stay
// an int saturates at math.MaxInt64) or sizeProd (a count that feeds a
// time is a float64, which keeps growing where int64 would wrap).

// ExactSizeLimit is the largest size the time model counts exactly: past
// 2^53 a float64 no longer holds every integer, so tile counts and
// products round, and a view size of math.MaxInt64 is a saturated one
// standing for something larger.
const ExactSizeLimit = 1 << 53

// mulSat is a·b for non-negative a and b, saturated at math.MaxInt64;
// ok is false when it saturated. A negative operand gives 0, not ok (a
// size is never negative; a wrapped one must not pass as valid).
func mulSat(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64, false
	}
	return int64(lo), true
}

// addSat is a+b for non-negative a and b, saturated at math.MaxInt64.
func addSat(a, b int64) int64 {
	if s := a + b; s >= a && s >= b {
		return s
	}
	return math.MaxInt64
}

// sizeProd is the product of non-negative sizes as a float64: the int64
// product rounded once while it fits (so sizes that never overflowed give
// the same float64 as before), else the float64 product.
func sizeProd(xs ...int64) float64 {
	p := int64(1)
	for i, x := range xs {
		q, ok := mulSat(p, x)
		if !ok {
			f := float64(p)
			for _, y := range xs[i:] {
				f *= float64(y)
			}
			return f
		}
		p = q
	}
	return float64(p)
}

// satProd is the product of non-negative sizes saturated at
// math.MaxInt64, for a view size that must be an int.
func satProd(xs ...int64) int64 {
	p := int64(1)
	for _, x := range xs {
		p, _ = mulSat(p, x)
	}
	return p
}

// ceilDivF is ⌈a/b⌉ for a non-negative count a held as a float64: the
// integer division while a is exact, else the rounded quotient.
func ceilDivF(a float64, b int64) float64 {
	if b <= 0 {
		return 0
	}
	if a < ExactSizeLimit {
		return float64(ceilDiv(int64(a), b))
	}
	return math.Ceil(a / float64(b))
}

// ViewInexact reports whether any size of k's views is past
// ExactSizeLimit: the time model then rounds tile counts, and a size of
// math.MaxInt64 is one the rule saturated.
func (k Kernel) ViewInexact() bool {
	for _, s := range [...]int64{k.M, k.N, k.K, k.Batch, k.Steps, k.InputK, k.Rows, k.RowLen} {
		if s > ExactSizeLimit {
			return true
		}
	}
	return false
}

// sizeSum adds float64 counts (exact while the sum stays below
// ExactSizeLimit, as the int64 sums it replaces were).
func sizeSum(xs ...float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// ViewSaturated reports whether a GEMM or recurrent view size is
// math.MaxInt64, the value a saturating product or conversion leaves.
func (k Kernel) ViewSaturated() bool {
	for _, s := range [...]int64{k.M, k.N, k.K, k.Batch, k.Steps, k.InputK} {
		if s == math.MaxInt64 {
			return true
		}
	}
	return false
}
