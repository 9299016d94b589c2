package ir

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var genFuzzSeeds = flag.Bool("fuzzseeds", false, "regenerate testdata/fuzz/FuzzRead from conformance models and bad inputs")

// FuzzRead feeds arbitrary bytes to the reader. Properties: no panic; a
// nil error implies the model verifies and dumps; a model that the writer
// accepts reads back to the same canonical dump.
func FuzzRead(f *testing.F) {
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Read(data, ReadOptions{})
		checkColdRead(t, data, m, err, 16)
		if err != nil {
			return
		}
		if err := VerifyModel(m); err != nil {
			t.Fatalf("read without error but verify fails: %v", err)
		}
		before := Dump(m.Graph)
		var buf bytes.Buffer
		if err := Write(&buf, m); err != nil {
			return // e.g. float8 values, which the writer cannot encode from memory
		}
		m2, err := Read(buf.Bytes(), ReadOptions{})
		if err != nil {
			t.Fatalf("written model does not read back: %v", err)
		}
		if after := Dump(m2.Graph); after != before {
			t.Fatalf("dump differs after round trip:\n%s\n---\n%s", before, after)
		}
	})
}

// TestGenFuzzSeeds writes the seed corpus when run with -fuzzseeds: small
// conformance models (up to 1.5 KiB each, ~600 KiB in all) and the bad
// inputs of TestReadBadInputs. Small seeds keep the fuzzer fast.
func TestGenFuzzSeeds(t *testing.T) {
	if !*genFuzzSeeds {
		t.Skip("run with -fuzzseeds to regenerate testdata/fuzz/FuzzRead")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzRead")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	total := 0
	write := func(name string, data []byte) {
		var b strings.Builder
		b.WriteString("go test fuzz v1\n[]byte(")
		b.WriteString(fmt.Sprintf("%q", data))
		b.WriteString(")\n")
		total += b.Len()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Prefer variety: the first model of each op family prefix.
	seen := map[string]bool{}
	for _, p := range conformanceModelsOrNone() {
		data, err := os.ReadFile(p)
		if err != nil || len(data) > 1536 {
			continue
		}
		name := filepath.Base(filepath.Dir(p))
		family := strings.SplitN(strings.TrimPrefix(name, "test_"), "_", 2)[0]
		if seen[family] || total > 600<<10 {
			continue
		}
		seen[family] = true
		write("conf_"+name, data)
	}
	valid := reluModel(t)
	write("bad_truncated", valid[:len(valid)/2])
	write("bad_text", []byte("version https://git-lfs.github.com/spec/v1\n"))
	write("valid_relu", valid)
	write("bad_cycle", buildModel(t, func(g *Graph) {
		a, b := mustValue(t, g, "a"), mustValue(t, g, "b")
		g.AddNode(&Node{Name: "n1", OpType: "Relu", Inputs: []*Value{b}, Outputs: []*Value{a}})
		g.AddNode(&Node{Name: "n2", OpType: "Relu", Inputs: []*Value{a}, Outputs: []*Value{b}})
		g.AddOutput(b)
	}))
	write("bad_hugedim", buildModel(t, func(g *Graph) {
		x := input(t, g, "x", D(1<<62))
		g.AddOutput(x)
	}))
	write("bad_extpath", buildModel(t, func(g *Graph) {
		w := mustValue(t, g, "w")
		g.AddInitializer(w, &Tensor{Name: "w", DType: Float32, Dims: []int64{2}, Loc: DataLocation{File: "../w.bin", Length: 8, Missing: true}})
		g.AddOutput(w)
	}))
	t.Logf("wrote %d seeds, %d bytes", len(seen)+6, total)
}
