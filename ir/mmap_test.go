package ir

import (
	"testing"
	"unsafe"
)

// TestDropFilePages: after DropFilePages the model read from a mapped
// file still reads the same (its names point into the mapping, whose
// pages come back from the file cache), shapes infer as before, and a
// model built in memory (no file) ignores the call.
func TestDropFilePages(t *testing.T) {
	paths := fixtureModels()
	if len(paths) == 0 {
		t.Skip("no fixtures")
	}
	for _, p := range paths[:min(len(paths), 4)] {
		m, err := ReadFile(p, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := InferShapes(m, InferOptions{Assume: 1}); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		before := Dump(m.Graph)
		m.DropFilePages()
		if after := Dump(m.Graph); after != before {
			t.Errorf("%s: the graph reads differently after DropFilePages", p)
		}
		if _, err := InferShapes(m, InferOptions{Assume: 1}); err != nil {
			t.Errorf("%s: inference after DropFilePages: %v", p, err)
		}
		if after := Dump(m.Graph); after != before {
			t.Errorf("%s: inference after DropFilePages gives another graph", p)
		}
	}
	(&Model{}).DropFilePages()
}

// TestAttributeNamesShared: attribute names read from a mapped file are
// one shared copy per distinct name, not pointers into the mapping (each
// lookup by name would read back a page the command dropped).
func TestAttributeNamesShared(t *testing.T) {
	m, err := ReadFile("../testdata/models/resnet50.onnx", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]*byte{}
	count := 0
	for _, n := range m.Graph.Nodes {
		for _, a := range n.Attrs {
			p := unsafe.StringData(a.Name)
			if q, ok := first[a.Name]; ok && q != p {
				t.Fatalf("attribute name %q of node %q is a copy of its own", a.Name, n.Name)
			}
			first[a.Name] = p
			count++
		}
	}
	if count < 100 {
		t.Fatalf("only %d attributes read: not the case this test is about", count)
	}
}
