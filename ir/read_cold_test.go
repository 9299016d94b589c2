package ir

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// checkColdRead reads data again with the main graph's cold bytes served by
// a ReaderAt (listTop, coldHead, coldTensor; payloads of coldMin bytes or
// more count as cold) and fails unless it gives what the plain read gave:
// the same error, or the same dump and the same initializer values and
// byte locations.
func checkColdRead(t *testing.T, data []byte, m *Model, err error, coldMin int64) {
	t.Helper()
	m2, err2 := read(data, ReadOptions{}, bytes.NewReader(data), coldMin)
	if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
		t.Fatalf("plain read: %v\ncold read: %v", err, err2)
	}
	if err != nil {
		return
	}
	if a, b := Dump(m.Graph), Dump(m2.Graph); a != b {
		t.Fatalf("cold read dumps differently:\n%s\n---\n%s", a, b)
	}
	if a, b := initializerFacts(m.Graph), initializerFacts(m2.Graph); a != b {
		t.Fatalf("cold read's initializers differ:\n%s\n---\n%s", a, b)
	}
}

// initializerFacts lists every initializer's name, type, location and
// decoded values.
func initializerFacts(g *Graph) string {
	var b strings.Builder
	for _, v := range g.Values() {
		if !v.IsInitializer || v.Const == nil {
			continue
		}
		c := v.Const
		fmt.Fprintf(&b, "%s %v %v %+v has=%v f=%v i=%v s=%q\n", c.Name, c.DType, c.Dims, c.Loc, c.HasData, c.Floats, c.Ints, c.Strings)
	}
	return b.String()
}

// weightsModel encodes a model shaped like an exported CNN: nodes, then
// initializers where each large weight (raw_data) follows a few small ones,
// then the graph's inputs and outputs. odd adds what the cold path must
// leave to the mapping: a large tensor whose raw_data is not its last field,
// one whose head is longer than coldHead, typed float_data and an int64
// shape tensor.
func weightsModel(rng *rand.Rand, layers int, odd bool) []byte {
	bytesField := func(b []byte, num protowire.Number, v []byte) []byte {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, v)
	}
	// head is a TensorProto's dims, data_type and name; the callers add
	// its data.
	head := func(name string, dt DType, dims ...int64) []byte {
		var t []byte
		for _, d := range dims {
			t = protowire.AppendTag(t, 1, protowire.VarintType)
			t = protowire.AppendVarint(t, uint64(d))
		}
		t = protowire.AppendTag(t, 2, protowire.VarintType)
		t = protowire.AppendVarint(t, uint64(dt))
		return bytesField(t, 8, []byte(name))
	}
	tensor := func(name string, dims []int64, raw []byte, after []byte, long bool) []byte {
		t := head(name, Float32, dims...)
		if long { // a doc_string before raw_data pushes it past the head read
			t = bytesField(t, 12, bytes.Repeat([]byte("d"), coldHead))
		}
		t = bytesField(t, 9, raw)
		return append(t, after...)
	}
	floats := func(n int) []byte {
		b := make([]byte, 4*n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	var g []byte
	node := func(op string, ins []string, out string) {
		var n []byte
		for _, in := range ins {
			n = bytesField(n, 1, []byte(in))
		}
		n = bytesField(n, 2, []byte(out))
		n = bytesField(n, 3, []byte(out+"_node"))
		n = bytesField(n, 4, []byte(op))
		g = bytesField(g, 1, n)
	}
	x := "x"
	for i := range layers {
		w, bias, y := fmt.Sprintf("w%d", i), fmt.Sprintf("b%d", i), fmt.Sprintf("y%d", i)
		node("Conv", []string{x, w, bias}, y)
		x = y
	}
	for i := range layers {
		c := 8 + rng.IntN(64)
		g = bytesField(g, 5, tensor(fmt.Sprintf("b%d", i), []int64{8}, floats(8), nil, false))
		for k := range rng.IntN(3) {
			g = bytesField(g, 5, tensor(fmt.Sprintf("extra%d_%d", i, k), []int64{int64(c)}, floats(c), nil, false))
		}
		var after []byte
		if odd && i%5 == 3 {
			after = bytesField(nil, 12, []byte("doc after raw_data"))
		}
		g = bytesField(g, 5, tensor(fmt.Sprintf("w%d", i), []int64{8, 8, 64, 64}, floats(8*8*64*64), after, odd && i%7 == 5))
	}
	if odd {
		g = bytesField(g, 5, bytesField(head("typed", Float32, 3), 4, floats(3)))
		g = bytesField(g, 5, bytesField(head("shape", Int64, 2), 9, []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}))
	}
	valueInfo := func(name string, dims ...int64) []byte {
		var shape []byte
		for _, d := range dims {
			var dim []byte
			dim = protowire.AppendTag(dim, 1, protowire.VarintType)
			dim = protowire.AppendVarint(dim, uint64(d))
			shape = bytesField(shape, 1, dim)
		}
		var tt []byte
		tt = protowire.AppendTag(tt, 1, protowire.VarintType)
		tt = protowire.AppendVarint(tt, uint64(Float32))
		tt = bytesField(tt, 2, shape)
		var typ []byte
		typ = bytesField(typ, 1, tt)
		var vi []byte
		vi = bytesField(vi, 1, []byte(name))
		return bytesField(vi, 2, typ)
	}
	g = bytesField(g, 2, []byte("weights"))
	g = bytesField(g, 11, valueInfo("x", 1, 64, 32, 32))
	g = bytesField(g, 12, valueInfo(x))
	var m []byte
	m = protowire.AppendTag(m, 1, protowire.VarintType)
	m = protowire.AppendVarint(m, 8)
	var op []byte
	op = protowire.AppendTag(op, 2, protowire.VarintType)
	op = protowire.AppendVarint(op, 17)
	m = bytesField(m, 8, op)
	return bytesField(m, 7, g)
}

// TestColdReadSameModel: ReadFile of weights-heavy files (the cold path)
// gives what reading the same bytes from memory gives, with and without
// the cases the cold path leaves to the mapping.
func TestColdReadSameModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for i, odd := range []bool{false, true} {
		data := weightsModel(rng, 12, odd)
		if len(data) < coldMinFile {
			t.Fatalf("model of %d bytes: too small for the cold path (%d)", len(data), coldMinFile)
		}
		path := filepath.Join(dir, fmt.Sprintf("w%d.onnx", i))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		plain, err := Read(data, ReadOptions{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		viaFile, err := ReadFile(path, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := Dump(plain.Graph), Dump(viaFile.Graph); a != b {
			t.Fatalf("odd=%v: ReadFile dumps differently:\n%s\n---\n%s", odd, a, b)
		}
		if a, b := initializerFacts(plain.Graph), initializerFacts(viaFile.Graph); a != b {
			t.Fatalf("odd=%v: ReadFile's initializers differ:\n%s\n---\n%s", odd, a, b)
		}
		// Every payload cold, the smallest ones included.
		checkColdRead(t, data, plain, nil, 1)
		// And the cold path was taken: the plain reader saw the same file.
		r := &reader{data: data, src: bytes.NewReader(data), coldMin: coldPayload, lim: &DefaultLimits}
		fields, ok := r.listTop(graphPayload(t, data))
		cold := 0
		for _, f := range fields {
			if f.cold != nil {
				cold++
			}
		}
		if !ok || cold < 12 {
			t.Fatalf("odd=%v: listTop ok=%v with %d cold initializers, want at least 12", odd, ok, cold)
		}
	}
}

// graphPayload finds ModelProto.graph in data.
func graphPayload(t *testing.T, data []byte) ([]byte, int64) {
	t.Helper()
	for pos := 0; pos < len(data); {
		num, typ, n := protowire.ConsumeTag(data[pos:])
		if n < 0 {
			t.Fatal("bad tag")
		}
		if num == 7 && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(data[pos+n:])
			return v, int64(pos + n + m - len(v))
		}
		m := protowire.ConsumeFieldValue(num, typ, data[pos+n:])
		pos += n + m
	}
	t.Fatal("no graph")
	return nil, 0
}

// TestColdReadTruncated: a weights-heavy file cut anywhere gives the plain
// reader's error (or model) through the cold path too.
func TestColdReadTruncated(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := weightsModel(rng, 3, true)
	for _, cut := range []int{len(data) - 1, len(data) - 40, len(data) / 2, len(data) / 3, 200, 37} {
		d := data[:cut]
		m, err := Read(d, ReadOptions{})
		checkColdRead(t, d, m, err, 64)
	}
}
