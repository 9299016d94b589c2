package ir

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// tiedLM writes a model reading an embedding table emb [v,d] through a
// Gather and a head weight head [d,v] through a MatMul: head is emb's
// transpose when tied, other values otherwise. The writer keeps every
// value, so a table over SmallTensorElems is left undecoded on reading
// and compared through the file's bytes.
func tiedLM(t *testing.T, v, d int64, tied bool) string {
	t.Helper()
	emb := make([]float64, v*d)
	head := make([]float64, v*d)
	for i := range v {
		for j := range d {
			x := float64(i*1000+j) + 0.25
			emb[i*d+j] = x
			if tied {
				head[j*v+i] = x
			} else {
				head[j*v+i] = -x
			}
		}
	}
	data := lmModel(t,
		&Tensor{Name: "emb", DType: Float32, Dims: []int64{v, d}, Floats: emb, HasData: true},
		&Tensor{Name: "head", DType: Float32, Dims: []int64{d, v}, Floats: head, HasData: true})
	p := filepath.Join(t.TempDir(), "lm.onnx")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lmModel is the encoded model reading the embedding table emb through a
// Gather of four token ids and the head weight head through a MatMul.
func lmModel(t *testing.T, emb, head *Tensor) []byte {
	return buildModel(t, func(g *Graph) {
		ids, e, h := mustValue(t, g, "ids"), mustValue(t, g, emb.Name), mustValue(t, g, head.Name)
		ids.Declared = &TypeInfo{Kind: TensorValue, DType: Int64, Shape: RankedShape(D(4))}
		g.AddInput(ids)
		g.AddInitializer(e, emb)
		g.AddInitializer(h, head)
		x, y := mustValue(t, g, "x"), mustValue(t, g, "y")
		for _, n := range []*Node{
			{Name: "gather", OpType: "Gather", Inputs: []*Value{e, ids}, Outputs: []*Value{x}},
			{Name: "head", OpType: "MatMul", Inputs: []*Value{x, h}, Outputs: []*Value{y}},
		} {
			if err := g.AddNode(n); err != nil {
				t.Fatal(err)
			}
		}
		g.AddOutput(y)
	})
}

// TestTransposedCopies: a head weight that is the embedding's transpose is
// found, from decoded values (a small table) or from the file's bytes (a
// large one); an untied head of the same shape is not, nor is one whose
// bytes are not in the file.
func TestTransposedCopies(t *testing.T) {
	for _, c := range []struct {
		name       string
		v, d       int64
		tied, want bool
	}{
		{"small tied", 10, 4, true, true},
		{"large tied", 600, 16, true, true},
		{"small untied", 10, 4, false, false},
		{"large untied", 600, 16, false, false},
		// A file over coldMinFile: its weights' fields are read cold.
		{"cold tied", 20000, 16, true, true},
		{"cold untied", 20000, 16, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := ReadFile(tiedLM(t, c.v, c.d, c.tied), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			emb, head := m.Graph.Initializers[0], m.Graph.Initializers[1]
			if big := c.v*c.d > DefaultLimits.SmallTensorElems; big == emb.Const.HasData {
				t.Fatalf("table decoded %v for %d elements: the case does not test the path it names", emb.Const.HasData, c.v*c.d)
			}
			got := TransposedCopies(m)
			if c.want && (len(got) != 1 || got[head] != emb) || !c.want && len(got) != 0 {
				t.Errorf("TransposedCopies = %v, want tied %v", got, c.want)
			}
		})
	}
	t.Run("in memory", func(t *testing.T) {
		for _, tied := range []bool{true, false} {
			data, err := os.ReadFile(tiedLM(t, 600, 16, tied))
			if err != nil {
				t.Fatal(err)
			}
			m, err := Read(data, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := TransposedCopiesIn(m, data); len(got) != map[bool]int{true: 1, false: 0}[tied] {
				t.Errorf("tied %v: TransposedCopiesIn = %v", tied, got)
			}
		}
	})
	t.Run("graph-only", func(t *testing.T) {
		m, err := ReadFile(tiedLM(t, 600, 16, true), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range m.Graph.Initializers {
			v.Const.Loc.Missing = true
		}
		if got := TransposedCopies(m); len(got) != 0 {
			t.Errorf("TransposedCopies = %v without bytes, want none", got)
		}
	})
}

// TestTransposedCopiesExternal: weights in an external data file are
// compared through that file's bytes.
func TestTransposedCopiesExternal(t *testing.T) {
	const v, d = 600, 16
	dir := t.TempDir()
	var raw []byte
	put := func(x float64) { raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(x))) }
	for i := range v {
		for j := range d {
			put(float64(i*d + j))
		}
	}
	for j := range d {
		for i := range v {
			put(float64(i*d + j))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	size := int64(v * d * 4)
	data := lmModel(t,
		&Tensor{Name: "emb", DType: Float32, Dims: []int64{v, d}, Loc: DataLocation{File: "w.bin", Length: size, Missing: true}},
		&Tensor{Name: "head", DType: Float32, Dims: []int64{d, v}, Loc: DataLocation{File: "w.bin", Offset: size, Length: size, Missing: true}})
	p := filepath.Join(dir, "lm.onnx")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadFile(p, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	emb, head := m.Graph.Initializers[0], m.Graph.Initializers[1]
	if emb.Const.Loc.Missing || emb.Const.HasData {
		t.Fatalf("table %+v: want its bytes in w.bin, undecoded", emb.Const.Loc)
	}
	if got := TransposedCopies(m); len(got) != 1 || got[head] != emb {
		t.Errorf("TransposedCopies = %v, want head → emb", got)
	}
}
