package ir

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestParallelReadMatchesSerial reads every fixture, conformance model and
// fuzz-corpus input twice, with nodes decoded on one goroutine and on
// several (the threshold lowered so that even a two-node graph splits),
// and wants the same model or the same error: the split must change
// nothing but the time.
func TestParallelReadMatchesSerial(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	paths, _ := filepath.Glob("../testdata/models/*.onnx")
	fuzz, _ := filepath.Glob("testdata/fuzz/FuzzRead/*")
	conf, _ := filepath.Glob("/usr/share/libonnx-testdata/data/*/*/model.onnx")
	if len(paths) == 0 {
		t.Fatal("no fixtures found")
	}
	read := func(data []byte, dir string, threshold int) string {
		old := parallelNodes
		parallelNodes = threshold
		defer func() { parallelNodes = old }()
		m, err := Read(data, ReadOptions{Dir: dir})
		if err != nil {
			return "error: " + err.Error()
		}
		return DumpModel(m)
	}
	for _, p := range append(append(paths, conf...), fuzz...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(p) == "testdata/fuzz/FuzzRead" {
			data = fuzzCorpusBytes(t, data)
		}
		serial := read(data, filepath.Dir(p), 1<<30)
		if parallel := read(data, filepath.Dir(p), 2); parallel != serial {
			t.Errorf("%s: parallel read differs from serial:\n%.400s\nvs\n%.400s", p, parallel, serial)
		}
	}
}

// fuzzCorpusBytes decodes a `go test fuzz v1` file holding one []byte.
func fuzzCorpusBytes(t *testing.T, file []byte) []byte {
	s := strings.TrimSpace(strings.TrimPrefix(string(file), "go test fuzz v1\n"))
	s = strings.TrimSuffix(strings.TrimPrefix(s, "[]byte("), ")")
	b, err := strconv.Unquote(s)
	if err != nil {
		t.Fatalf("fuzz corpus entry: %v", err)
	}
	return []byte(b)
}

// TestParallelReadFirstError: with bad nodes in both halves of a graph
// split between two workers, the error names the first bad node in file
// order, as a serial read does.
func TestParallelReadFirstError(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	data := buildModel(t, func(g *Graph) {
		prev := input(t, g, "x", D(1))
		for i := range 8 {
			out := mustValue(t, g, fmt.Sprintf("v%d", i))
			// An attribute of the wrong wire type is refused while the
			// node is decoded, in whichever worker holds it.
			var attrs []*Attribute
			if i == 2 || i == 6 {
				attrs = []*Attribute{{Name: "alpha", Type: AttrFloat, F: math.Inf(1)}}
			}
			g.AddNode(&Node{Name: fmt.Sprintf("n%d", i), OpType: "Relu", Inputs: []*Value{prev}, Outputs: []*Value{out}, Attrs: attrs})
			prev = out
		}
		g.AddOutput(prev)
	})
	// Corrupt both attributes' fixed32 payload into an invalid wire type.
	bad := bytes.ReplaceAll(data, []byte("alpha\x15"), []byte("alpha\x17"))
	if bytes.Equal(bad, data) {
		t.Fatal("attribute encoding not found")
	}
	old := parallelNodes
	parallelNodes = 2
	defer func() { parallelNodes = old }()
	_, err := Read(bad, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "node[2]") {
		t.Fatalf("error %v, want one at node[2]", err)
	}
}
