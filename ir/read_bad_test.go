package ir

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// buildModel makes a model with the IR API and encodes it with Write; it
// is how the bad inputs below are made (Write does not validate).
func buildModel(t testing.TB, build func(g *Graph)) []byte {
	t.Helper()
	g := NewGraph("g")
	build(g)
	m := &Model{IRVersion: 8, Opsets: []OpsetImport{{Version: 17}}, Graph: g}
	var buf bytes.Buffer
	if err := Write(&buf, m); err != nil {
		t.Fatalf("write: %v", err)
	}
	return buf.Bytes()
}

func mustValue(t testing.TB, g *Graph, name string) *Value {
	t.Helper()
	v, err := g.NewValue(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// input adds a float32 graph input of the given shape, typed as the
// reader types graph inputs (declared and current type alike).
func input(t testing.TB, g *Graph, name string, dims ...Dim) *Value {
	v := mustValue(t, g, name)
	v.Declared = &TypeInfo{Kind: TensorValue, DType: Float32, Shape: RankedShape(dims...)}
	v.Kind, v.DType, v.Shape = TensorValue, Float32, RankedShape(dims...)
	g.AddInput(v)
	return v
}

// reluModel is x -> Relu -> y, a small valid model.
func reluModel(t testing.TB) []byte {
	return buildModel(t, func(g *Graph) {
		x := input(t, g, "x", S("batch"), D(3))
		y := mustValue(t, g, "y")
		g.AddNode(&Node{Name: "relu", OpType: "Relu", Inputs: []*Value{x}, Outputs: []*Value{y}})
		g.AddOutput(y)
	})
}

func TestReadBadInputs(t *testing.T) {
	valid := reluModel(t)
	if _, err := Read(valid, ReadOptions{}); err != nil {
		t.Fatalf("valid model: %v", err)
	}
	ext := func(loc string) []byte {
		return buildModel(t, func(g *Graph) {
			w := mustValue(t, g, "w")
			g.AddInitializer(w, &Tensor{Name: "w", DType: Float32, Dims: []int64{2}, Loc: DataLocation{File: loc, Length: 8, Missing: true}})
			g.AddOutput(w)
		})
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty file"},
		{"lfs pointer", []byte("version https://git-lfs.github.com/spec/v1\n"), "git lfs pull"},
		{"text", []byte("this is not a model\n"), "protobuf"},
		{"no graph", []byte{0x08, 0x07}, "has no graph"},
		{"truncated", valid[:len(valid)/2], "truncated protobuf in ModelProto"},
		{"parent path", ext("../w.bin"), `external data path "../w.bin" escapes the model folder`},
		{"nested parent path", ext("sub/../../w.bin"), "escapes the model folder"},
		{"absolute path", ext("/etc/passwd"), `external data path "/etc/passwd" is absolute`},
		{"backslash path", ext(`..\w.bin`), "backslash"},
		{"huge dim", buildModel(t, func(g *Graph) {
			x := input(t, g, "x", D(1<<62))
			g.AddOutput(x)
		}), "dimension 4611686018427387904 exceeds the limit"},
		{"huge initializer", buildModel(t, func(g *Graph) {
			w := mustValue(t, g, "w")
			g.AddInitializer(w, &Tensor{Name: "w", DType: Float32, Dims: []int64{1 << 30, 1 << 30, 1 << 30}})
			g.AddOutput(w)
		}), "elements (the limit)"},
		{"negative dim", buildModel(t, func(g *Graph) {
			w := mustValue(t, g, "w")
			g.AddInitializer(w, &Tensor{Name: "w", DType: Float32, Dims: []int64{-1}})
			g.AddOutput(w)
		}), "negative dimension -1"},
		{"cycle", buildModel(t, func(g *Graph) {
			a, b := mustValue(t, g, "a"), mustValue(t, g, "b")
			g.AddNode(&Node{Name: "n1", OpType: "Relu", Inputs: []*Value{b}, Outputs: []*Value{a}})
			g.AddNode(&Node{Name: "n2", OpType: "Relu", Inputs: []*Value{a}, Outputs: []*Value{b}})
			g.AddOutput(b)
		}), `cycle through node "n1"`},
		{"self loop", buildModel(t, func(g *Graph) {
			a := mustValue(t, g, "a")
			g.AddNode(&Node{Name: "n1", OpType: "Relu", Inputs: []*Value{a}, Outputs: []*Value{a}})
			g.AddOutput(a)
		}), `cycle: node "n1" reads its own output "a"`},
		{"undefined input", buildModel(t, func(g *Graph) {
			x := &Value{Name: "x"} // not in the graph
			y := mustValue(t, g, "y")
			g.AddNode(&Node{Name: "conv1", OpType: "Relu", Inputs: []*Value{x}, Outputs: []*Value{y}})
			g.AddOutput(y)
		}), `node "conv1" (Relu) reads undefined tensor "x"`},
		{"two producers", buildModel(t, func(g *Graph) {
			x := input(t, g, "x", D(1))
			y := mustValue(t, g, "y")
			g.AddNode(&Node{Name: "n1", OpType: "Relu", Inputs: []*Value{x}, Outputs: []*Value{y}})
			g.Nodes = append(g.Nodes, &Node{Name: "n2", OpType: "Relu", Inputs: []*Value{x}, Outputs: []*Value{y}})
			g.AddOutput(y)
		}), `value "y" is produced by both node "n1" and node "n2"`},
		{"output not produced", buildModel(t, func(g *Graph) {
			g.AddOutput(&Value{Name: "ghost"})
		}), `output "ghost" is not produced`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Read(c.data, ReadOptions{Dir: t.TempDir()})
			if err == nil {
				t.Fatalf("no error; model:\n%s", DumpModel(m))
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

// TestReadRawSizeMismatch hand-encodes a tensor whose raw_data is shorter
// than its dims need (the writer refuses to make one).
func TestReadRawSizeMismatch(t *testing.T) {
	var out bytes.Buffer
	err := encode(&out, nil, func(m *protoWriter) error {
		m.varint(1, 8)
		m.begin(7) // graph
		m.begin(5) // initializer
		m.packedInts(1, []int64{4})
		m.varint(2, uint64(Int64))
		m.str(8, "w")
		m.bytesField(tpRawData, make([]byte, 8))
		m.end()
		m.end()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	data := out.Bytes()
	_, err = Read(data, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "raw_data holds 8 bytes, dims [4] of int64 need 32") {
		t.Fatalf("got %v", err)
	}
}

// TestReadTruncations cuts a valid model at every offset: each prefix
// must give an error or a model that verifies, never a panic.
func TestReadTruncations(t *testing.T) {
	valid := reluModel(t)
	for cut := 0; cut < len(valid); cut++ {
		m, err := Read(valid[:cut], ReadOptions{})
		if err == nil {
			if verr := VerifyModel(m); verr != nil {
				t.Fatalf("cut %d: read ok but verify: %v", cut, verr)
			}
		}
	}
}

// TestReadRandomBytes feeds random bytes (fixed seed) to the reader.
func TestReadRandomBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		b := make([]byte, rng.Intn(256))
		rng.Read(b)
		if m, err := Read(b, ReadOptions{}); err == nil {
			if verr := VerifyModel(m); verr != nil {
				t.Fatalf("input %d: read ok but verify: %v", i, verr)
			}
		}
	}
}

// TestReadNestingLimit builds If nodes nested deeper than MaxDepth.
func TestReadNestingLimit(t *testing.T) {
	lim := DefaultLimits
	lim.MaxDepth = 3
	data := buildModel(t, func(g *Graph) {
		cur := g
		for d := 0; d < 5; d++ {
			sub := NewSubgraph("level", cur)
			c := input(t, cur, "c"+string(rune('a'+d)), D(1))
			cur.AddNode(&Node{Name: "if", OpType: "If", Inputs: []*Value{c}, Attrs: []*Attribute{GraphAttr("then_branch", sub)}})
			cur = sub
		}
	})
	_, err := Read(data, ReadOptions{Limits: &lim})
	if err == nil || !strings.Contains(err.Error(), "nested deeper than 3") {
		t.Fatalf("got %v", err)
	}
}

// TestReadNodeLimit rejects a model with more nodes than MaxNodes.
func TestReadNodeLimit(t *testing.T) {
	lim := DefaultLimits
	lim.MaxNodes = 2
	data := buildModel(t, func(g *Graph) {
		x := input(t, g, "x", D(1))
		for i := 0; i < 3; i++ {
			y := mustValue(t, g, "y"+string(rune('0'+i)))
			g.AddNode(&Node{OpType: "Relu", Inputs: []*Value{x}, Outputs: []*Value{y}})
			x = y
		}
	})
	_, err := Read(data, ReadOptions{Limits: &lim})
	if err == nil || !strings.Contains(err.Error(), "more than 2 nodes") {
		t.Fatalf("got %v", err)
	}
}

// extModel writes a model whose initializer w (float32[2]) is stored in
// the external file loc, into dir.
func extModel(t *testing.T, dir, loc string, offset, length int64) string {
	data := buildModel(t, func(g *Graph) {
		w := mustValue(t, g, "w")
		g.AddInitializer(w, &Tensor{Name: "w", DType: Float32, Dims: []int64{2}, Loc: DataLocation{File: loc, Offset: offset, Length: length, Missing: true}})
		g.AddOutput(w)
	})
	p := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadExternalData(t *testing.T) {
	dir := t.TempDir()
	// 1.5 and -2 as little-endian float32, after 4 bytes of padding.
	weights := []byte{0, 0, 0, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0}
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), weights, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("present", func(t *testing.T) {
		m, err := ReadFile(extModel(t, dir, "w.bin", 4, 8), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w := m.Graph.Initializers[0].Const
		if w.Loc.Missing || w.Loc.File != "w.bin" || w.Loc.Offset != 4 || !w.HasData || w.Floats[0] != 1.5 || w.Floats[1] != -2 {
			t.Fatalf("got %+v", w)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		m, err := ReadFile(extModel(t, dir, "absent.bin", 0, 8), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if w := m.Graph.Initializers[0].Const; !w.Loc.Missing || w.HasData {
			t.Fatalf("got %+v", w)
		}
	})
	t.Run("range past end", func(t *testing.T) {
		_, err := ReadFile(extModel(t, dir, "w.bin", 8, 8), ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), "past the end") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("length mismatch", func(t *testing.T) {
		_, err := ReadFile(extModel(t, dir, "w.bin", 0, 12), ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), "external data length 12") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("symlink inside", func(t *testing.T) {
		if err := os.Symlink("w.bin", filepath.Join(dir, "link.bin")); err != nil {
			t.Skip("symlinks unsupported:", err)
		}
		if _, err := ReadFile(extModel(t, dir, "link.bin", 4, 8), ReadOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("symlink out", func(t *testing.T) {
		outside := t.TempDir()
		os.WriteFile(filepath.Join(outside, "secret.bin"), weights, 0o644)
		if err := os.Symlink(filepath.Join(outside, "secret.bin"), filepath.Join(dir, "out.bin")); err != nil {
			t.Skip("symlinks unsupported:", err)
		}
		_, err := ReadFile(extModel(t, dir, "out.bin", 4, 8), ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), `external data path "out.bin" escapes the model folder`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("directory symlink out", func(t *testing.T) {
		outside := t.TempDir()
		os.WriteFile(filepath.Join(outside, "w.bin"), weights, 0o644)
		if err := os.Symlink(outside, filepath.Join(dir, "sub")); err != nil {
			t.Skip("symlinks unsupported:", err)
		}
		_, err := ReadFile(extModel(t, dir, "sub/w.bin", 4, 8), ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), "escapes the model folder") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("bytes without folder", func(t *testing.T) {
		data, _ := os.ReadFile(extModel(t, dir, "w.bin", 4, 8))
		m, err := Read(data, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if w := m.Graph.Initializers[0].Const; !w.Loc.Missing {
			t.Fatalf("external data read without a folder: %+v", w)
		}
	})
	t.Run("round trip inlines present data", func(t *testing.T) {
		m, err := ReadFile(extModel(t, dir, "w.bin", 4, 8), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m2 := roundTrip(t, m)
		w := m2.Graph.Initializers[0].Const
		if w.Loc.File != "" || !w.HasData || w.Floats[0] != 1.5 {
			t.Fatalf("got %+v", w)
		}
	})
}
