package ir

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"strconv"
	"strings"
)

// Dim is one tensor dimension: a known size, or a symbol whose value is not
// known until it is bound. A symbol is a dim_param name ("batch"), an
// expression over such names built by shape arithmetic ("batch*3",
// "(seq+1)/2"), or a fresh name for a truly unknown size ("?nonzero_0").
type Dim struct {
	Value int64  // the size; meaningful only when Sym == ""
	Sym   string // non-empty for a symbolic dimension
}

// D returns a known dimension.
func D(v int64) Dim { return Dim{Value: v} }

// S returns a symbolic dimension.
func S(sym string) Dim { return Dim{Sym: sym} }

// IsKnown reports whether the size is a number.
func (d Dim) IsKnown() bool { return d.Sym == "" }

// Is reports whether d is known and equal to v.
func (d Dim) Is(v int64) bool { return d.Sym == "" && d.Value == v }

// Equal reports whether two dims are provably equal: same number, or the
// same symbol text.
func (d Dim) Equal(o Dim) bool { return d == o }

func (d Dim) String() string {
	if d.Sym != "" {
		return d.Sym
	}
	return strconv.FormatInt(d.Value, 10)
}

// atom wraps a compound symbolic expression in parentheses so that it can
// be an operand of a tighter-binding operator.
func atom(d Dim) string {
	s := d.String()
	if strings.ContainsAny(s, "+-*/%") && !(strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")")) {
		return "(" + s + ")"
	}
	return s
}

// maxSymLen caps the text of a symbolic expression. Shape arithmetic nests
// expressions, and some patterns double them: a Concat of a tensor with
// itself turns "n" into "n+n", so 40 such nodes would build a 2^40-byte
// string. Real exports reach thousands of bytes (the anchor counts of a
// detection model with dynamic height and width).
const maxSymLen = 256

// expr returns the symbolic dim with text s, or, past maxSymLen, a short
// "?expr_<hash>" stand-in: still unknown, and still equal to any dim built
// by the same arithmetic (the hash is of the full text), so broadcasting
// and Concat keep proving equal dims equal. Operands are capped too, so s
// is never much longer than twice the cap.
func expr(s string) Dim {
	if len(s) <= maxSymLen {
		return S(s)
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	return S(fmt.Sprintf("?expr_%016x", h.Sum64()))
}

// MulDim multiplies two dims; ok is false if the known product overflows int64.
func MulDim(a, b Dim) (Dim, bool) {
	switch {
	case a.IsKnown() && b.IsKnown():
		hi, lo := bits.Mul64(uint64(abs64(a.Value)), uint64(abs64(b.Value)))
		if hi != 0 || lo > 1<<62 {
			return Dim{}, false
		}
		return D(a.Value * b.Value), true
	case a.Is(1):
		return b, true
	case b.Is(1):
		return a, true
	case a.Is(0) || b.Is(0):
		return D(0), true
	case a.IsKnown():
		return expr(a.String() + "*" + atom(b)), true
	}
	return expr(atom(a) + "*" + atom(b)), true
}

// AddDim adds two dims.
func AddDim(a, b Dim) Dim {
	switch {
	case a.IsKnown() && b.IsKnown():
		return D(a.Value + b.Value)
	case a.Is(0):
		return b
	case b.Is(0):
		return a
	case b.IsKnown() && b.Value < 0:
		return expr(a.String() + "-" + strconv.FormatInt(-b.Value, 10))
	}
	return expr(a.String() + "+" + b.String())
}

// SubDim subtracts b from a.
func SubDim(a, b Dim) Dim {
	switch {
	case a.IsKnown() && b.IsKnown():
		return D(a.Value - b.Value)
	case b.Is(0):
		return a
	case a == b:
		return D(0)
	}
	return expr(a.String() + "-" + atom(b))
}

// DivDim is floor division (ceil when ceil is true) of a by a known or
// symbolic divisor. Division by a known zero yields a fresh-looking symbol
// rather than a panic; shape functions reject that case before calling.
func DivDim(a, b Dim, ceil bool) Dim {
	if a.IsKnown() && b.IsKnown() && b.Value != 0 {
		q := floorDiv(a.Value, b.Value)
		if ceil && q*b.Value != a.Value {
			q++
		}
		return D(q)
	}
	if b.Is(1) {
		return a
	}
	op := "/"
	if ceil {
		op = "/^" // ceiling division, rendered distinctly so it is not mistaken for floor
	}
	return expr(atom(a) + op + atom(b))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Shape is a tensor shape. An unranked shape (rank unknown) has Ranked
// false; a scalar is Ranked with no dims.
type Shape struct {
	Dims   []Dim
	Ranked bool
}

// Ranked returns a shape with the given dims.
func RankedShape(dims ...Dim) Shape { return Shape{Dims: dims, Ranked: true} }

// KnownShape returns a shape whose dims are all numbers.
func KnownShape(dims ...int64) Shape {
	s := Shape{Dims: make([]Dim, len(dims)), Ranked: true}
	for i, v := range dims {
		s.Dims[i] = D(v)
	}
	return s
}

// Unranked is the shape of a tensor whose rank is not known.
func Unranked() Shape { return Shape{} }

// Rank is the number of dims, or -1 when unranked.
func (s Shape) Rank() int {
	if !s.Ranked {
		return -1
	}
	return len(s.Dims)
}

// IsKnown reports whether the rank and every dim are numbers.
func (s Shape) IsKnown() bool {
	if !s.Ranked {
		return false
	}
	for _, d := range s.Dims {
		if !d.IsKnown() {
			return false
		}
	}
	return true
}

// Ints returns the dims as numbers; ok is false if any is symbolic.
func (s Shape) Ints() (dims []int64, ok bool) {
	if !s.IsKnown() {
		return nil, false
	}
	dims = make([]int64, len(s.Dims))
	for i, d := range s.Dims {
		dims[i] = d.Value
	}
	return dims, true
}

// NumElements is the product of the dims; ok is false when a dim is
// symbolic, the shape is unranked, or the product exceeds 2^62.
func (s Shape) NumElements() (n int64, ok bool) {
	if !s.IsKnown() {
		return 0, false
	}
	n = 1
	for _, d := range s.Dims {
		p, fits := MulDim(D(n), d)
		if !fits {
			return 0, false
		}
		n = p.Value
	}
	return n, true
}

// Clone returns a copy that shares no slice with s.
func (s Shape) Clone() Shape {
	return Shape{Dims: append([]Dim(nil), s.Dims...), Ranked: s.Ranked}
}

// Equal reports whether both shapes have the same rank and equal dims.
func (s Shape) Equal(o Shape) bool {
	if s.Ranked != o.Ranked || len(s.Dims) != len(o.Dims) {
		return false
	}
	for i := range s.Dims {
		if s.Dims[i] != o.Dims[i] {
			return false
		}
	}
	return true
}

// String renders "[1,3,224,224]", "[batch,3,224,224]", "[]" for a scalar
// and "?" for an unranked shape. The form is part of the canonical dump.
func (s Shape) String() string {
	return string(s.AppendText(nil))
}

// AppendText appends s.String() to b without building the string: text
// output on a 100k-node graph formats every shape once.
func (s Shape) AppendText(b []byte) []byte {
	if !s.Ranked {
		return append(b, '?')
	}
	b = append(b, '[')
	for i, d := range s.Dims {
		if i > 0 {
			b = append(b, ',')
		}
		if d.Sym != "" {
			b = append(b, d.Sym...)
		} else {
			b = strconv.AppendInt(b, d.Value, 10)
		}
	}
	return append(b, ']')
}

// Symbols lists the distinct symbolic dims of s in order of appearance.
func (s Shape) Symbols() []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range s.Dims {
		if d.Sym != "" && !seen[d.Sym] {
			seen[d.Sym] = true
			out = append(out, d.Sym)
		}
	}
	return out
}
