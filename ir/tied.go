package ir

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/onnxcost/onnxcost/internal/safefile"
)

// Tied embeddings exported as two weights.
//
// A language model whose output projection shares the token embedding's
// matrix (GPT-2, BERT's masked-LM head, T5, Llama 3.2, Gemma, small Qwen
// models) holds it once in the framework. torch.onnx.export writes it
// twice: the table [V,d] a Gather reads, and the head's MatMul weight
// [d,V], the table's transpose constant-folded into an initializer of its
// own (onnx::MatMul_N). From the graph alone a tied head and an untied one
// look the same (the fold drops the head's parameter name either way);
// their bytes do not. GPT-2 small exported so counts 163M parameters where
// PyTorch counts 124M.

// tiedSamples is how many elements TransposedCopies compares: weights
// that merely have the same shape differ at the first.
const tiedSamples = 64

// TransposedCopies finds the initializers of m's main graph that are
// element-for-element the transpose of an embedding table the graph also
// holds: a 2-D initializer B [d,V] read as a MatMul's (or an untransposed
// Gemm's) second operand, whose bytes equal those of a 2-D initializer A
// [V,d] of the same dtype read by a Gather along axis 0, at tiedSamples
// positions spread over the matrix. It maps each copy B to its table A.
// Weights whose bytes are not in the file (a graph-only export) are never
// matched: nothing says whether they are tied. The bytes are read from
// m.Path (and the external data files beside it), which must be the file
// ReadFile read m from; a model read from memory takes TransposedCopiesIn.
func TransposedCopies(m *Model) map[*Value]*Value {
	if m == nil || m.Path == "" {
		return nil
	}
	return transposedCopies(m, &byteReader{m: m, files: map[string]io.ReaderAt{}})
}

// TransposedCopiesIn is TransposedCopies for a model read from data (Read,
// as a browser upload is): the bytes inside the model are read from data;
// external data files, which such a model cannot reach, are not.
func TransposedCopiesIn(m *Model, data []byte) map[*Value]*Value {
	if m == nil {
		return nil
	}
	return transposedCopies(m, &byteReader{m: m, files: map[string]io.ReaderAt{"": bytes.NewReader(data)}, inMemory: true})
}

func transposedCopies(m *Model, r *byteReader) map[*Value]*Value {
	if m.Graph == nil {
		return nil
	}
	g := m.Graph
	var tables []*Value
	var heads []*Value
	seen := map[*Value]bool{}
	for _, n := range g.Nodes {
		switch {
		case n.Domain == "" && n.OpType == "Gather" && n.AttrInt("axis", 0) == 0:
			if v := n.In(0); matrixInit(v) && !seen[v] {
				seen[v] = true
				tables = append(tables, v)
			}
		case n.Domain == "" && (n.OpType == "MatMul" || n.OpType == "Gemm" && n.AttrInt("transB", 0) == 0):
			if v := n.In(1); matrixInit(v) && !seen[v] {
				seen[v] = true
				heads = append(heads, v)
			}
		}
	}
	if len(tables) == 0 || len(heads) == 0 {
		return nil
	}
	defer r.close()
	var out map[*Value]*Value
	for _, b := range heads {
		for _, a := range tables {
			if a == b || !transposedShapes(a.Const, b.Const) || !r.transposed(a.Const, b.Const) {
				continue
			}
			if out == nil {
				out = map[*Value]*Value{}
			}
			out[b] = a
			break
		}
	}
	return out
}

// matrixInit reports whether v is a 2-D floating-point initializer.
func matrixInit(v *Value) bool {
	return v != nil && v.IsInitializer && v.Const != nil && len(v.Const.Dims) == 2 && v.Const.DType.IsFloat()
}

// transposedShapes reports whether b's dims are a's reversed, in a's dtype,
// with an element count that fits an int64 (a file may declare any dims).
func transposedShapes(a, b *Tensor) bool {
	rows, cols := a.Dims[0], a.Dims[1]
	return a.DType == b.DType && rows == b.Dims[1] && cols == b.Dims[0] && rows > 0 && cols > 0 && rows <= math.MaxInt64/cols
}

// byteReader reads single elements of initializers from the files they
// came from (or the model's own bytes in memory), keeping each file open
// for the next.
type byteReader struct {
	m     *Model
	files map[string]io.ReaderAt
	// inMemory: the model was read from memory; only files[""] exists.
	inMemory bool
}

func (r *byteReader) close() {
	for _, f := range r.files {
		if c, ok := f.(io.Closer); ok {
			c.Close()
		}
	}
}

// transposed reports whether b [d,V] holds a [V,d]'s elements transposed,
// at tiedSamples positions (all of them for a smaller matrix).
func (r *byteReader) transposed(a, b *Tensor) bool {
	rows, cols := a.Dims[0], a.Dims[1]
	n := rows * cols
	samples := min(int64(tiedSamples), n)
	for s := range samples {
		// Positions spread over the whole matrix: multiplicative hashing
		// of the sample index, so different rows and columns are hit.
		idx := int64((uint64(s)*0x9E3779B97F4A7C15)>>11) % n
		if s == 0 {
			idx = 0
		}
		i, j := idx/cols, idx%cols
		ea, oka := r.element(a, idx)
		eb, okb := r.element(b, j*rows+i)
		if !oka || !okb || !bytes.Equal(ea, eb) {
			return false
		}
	}
	return true
}

// element is the bytes of element i of t: decoded values where the
// reader kept them (compared as their float64), else raw little-endian
// bytes read from the file at t.Loc. ok is false where neither is there.
func (r *byteReader) element(t *Tensor, i int64) ([]byte, bool) {
	if t.HasData && int64(len(t.Floats)) == t.NumElements() {
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(t.Floats[i])), true
	}
	size := t.DType.ByteSize(1)
	loc := t.Loc
	if size <= 0 || loc.Missing || loc.Offset < 0 || loc.Length != t.ByteSize() {
		return nil, false
	}
	f := r.file(loc.File)
	if f == nil {
		return nil, false
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, loc.Offset+i*size); err != nil {
		return nil, false
	}
	return b, true
}

// file opens (once) the model file, or the external data file name in
// its folder (inside it, as the reader resolved it: safefile.OpenIn), a
// regular file only; nil when it cannot.
func (r *byteReader) file(name string) io.ReaderAt {
	if f, ok := r.files[name]; ok {
		return f
	}
	if r.inMemory {
		return nil // no file beside a model held in memory
	}
	var f *os.File
	var err error
	switch {
	case name == "":
		f, _, err = safefile.Open(r.m.Path)
	default:
		var root *os.Root
		if root, err = os.OpenRoot(filepath.Dir(r.m.Path)); err == nil {
			f, _, err = safefile.OpenIn(root, name)
			root.Close()
		}
	}
	if err != nil {
		r.files[name] = nil
		return nil
	}
	r.files[name] = f
	return f
}
