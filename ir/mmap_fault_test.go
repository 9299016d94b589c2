//go:build linux

package ir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// truncatedRead reads a copy of data from a file that hook shrinks after
// it is mapped.
func truncatedRead(t *testing.T, data []byte, hook func(path string)) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	TestHookAfterMap = hook
	defer func() { TestHookAfterMap = nil }()
	m, err := ReadFile(path, ReadOptions{})
	if err == nil {
		t.Fatalf("read a model of %d nodes from a truncated file", len(m.Graph.Nodes))
	}
	return err
}

// truncate shrinks path to size bytes.
func truncate(t *testing.T, path string, size int64) {
	if err := os.Truncate(path, size); err != nil {
		t.Error(err)
	}
}

// TestReadFileTruncated: a file truncated between mapping and decoding
// faults where the decoder touches the lost pages (the first byte, or the
// graph past the first page); the read returns ErrFileChanged, which
// only a recovered fault produces, and the process lives on.
func TestReadFileTruncated(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/bert_base.onnx")
	if err != nil {
		t.Fatal(err)
	}
	page := int64(os.Getpagesize())
	if int64(len(data)) < 4*page {
		t.Fatalf("fixture of %d bytes: too small to truncate past its first page", len(data))
	}
	for _, size := range []int64{0, page} {
		err := truncatedRead(t, data, func(path string) { truncate(t, path, size) })
		if !errors.Is(err, ErrFileChanged) {
			t.Errorf("truncated to %d bytes: error %v, want ErrFileChanged", size, err)
		}
	}
}

// TestReadFileTruncatedUnderWorkers: with a graph's nodes split among
// goroutines, a fault on a worker's goroutine, not the reader's own,
// also ends as ErrFileChanged: the first range stays readable, the others
// lose their pages once split.
func TestReadFileTruncatedUnderWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	old := parallelNodes
	parallelNodes = 2
	defer func() { parallelNodes = old }()
	data := buildModel(t, func(g *Graph) {
		prev := input(t, g, "x", D(1))
		for i := range 2000 {
			out := mustValue(t, g, fmt.Sprintf("a_long_value_name_to_spread_nodes_over_pages_%d", i))
			g.AddNode(&Node{Name: fmt.Sprintf("node_%d", i), OpType: "Relu", Inputs: []*Value{prev}, Outputs: []*Value{out}})
			prev = out
		}
		g.AddOutput(prev)
	})
	page := int64(os.Getpagesize())
	var path string
	split := false
	testHookSplit = func(firstEnd int64) {
		split = true
		// Rounded up: the first range's bytes stay whole.
		size := (firstEnd + page - 1) / page * page
		if size+2*page > int64(len(data)) {
			t.Errorf("first range ends at %d of %d bytes: nothing left to lose", firstEnd, len(data))
		}
		truncate(t, path, size)
	}
	defer func() { testHookSplit = nil }()
	err := truncatedRead(t, data, func(p string) { path = p })
	if !split {
		t.Fatal("the graph was not split among workers")
	}
	if !errors.Is(err, ErrFileChanged) {
		t.Errorf("error %v, want ErrFileChanged", err)
	}
}

// TestGuardMappedPanicsOn: a panic that is not a fault inside the mapping
// (a nil dereference here) is not mistaken for a changed file.
func TestGuardMappedPanicsOn(t *testing.T) {
	defer func() {
		if p := recover(); p == nil {
			t.Error("the panic was swallowed")
		}
	}()
	var n *Node
	_ = guardMapped(make([]byte, 8), func() error { _ = n.Name; return nil })
}

// BenchmarkGuardMapped is what guarding costs each goroutine that
// decodes: a read runs one guard, plus one per node worker.
func BenchmarkGuardMapped(b *testing.B) {
	data := make([]byte, 8)
	for i := 0; i < b.N; i++ {
		_ = guardMapped(data, func() error { return nil })
	}
}
