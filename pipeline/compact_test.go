package pipeline

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
	"github.com/onnxcost/onnxcost/passes"
)

// TestCompactNodesKeepsTheGraph: the fused plan of every repository model
// is the same graph after Plan's node compaction as without it (same dump,
// verified, same report to the byte), with no pointer left to a node that
// moved; and Graph.Holds, which the cost model's memory walk asks instead
// of the name table, agrees with the table for every value nodes read or
// write.
func TestCompactNodesKeepsTheGraph(t *testing.T) {
	paths, err := filepath.Glob("../testdata/models/*.onnx")
	if err != nil || len(paths) < 10 {
		t.Fatalf("models: %v (%d found)", err, len(paths))
	}
	gpu, err := hwdb.Lookup("A100")
	if err != nil {
		t.Fatal(err)
	}
	report := func(l *Loaded) []byte {
		r, err := Estimate(l, gpu, EstimateOptions{Plan: "fused", ModelName: "m"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			plain, err := Load(path, Options{BindAll: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := passes.Run(plain.Model.Graph, passes.Options{}); err != nil {
				t.Fatal(err)
			}
			compacted, err := Load(path, Options{BindAll: true, DropFilePages: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := compacted.Plan("fused", passes.Options{}); err != nil {
				t.Fatal(err)
			}
			g := compacted.Model.Graph
			if err := ir.Verify(g); err != nil {
				t.Fatalf("compacted graph: %v", err)
			}
			if a, b := ir.Dump(plain.Model.Graph), ir.Dump(g); a != b {
				t.Fatalf("dump differs after compaction:\n%s\nvs\n%s", a, b)
			}
			listed := make(map[*ir.Node]bool, len(g.Nodes))
			for _, n := range g.Nodes {
				listed[n] = true
			}
			for _, n := range g.Nodes {
				for _, v := range append(append([]*ir.Value(nil), n.Inputs...), n.Outputs...) {
					if v == nil {
						continue
					}
					if got, want := g.Holds(v), g.Local(v.Name) == v; got != want {
						t.Fatalf("Holds(%q) = %v, Local says %v", v.Name, got, want)
					}
					if p := v.Producer; p != nil && p.Graph() == g && !listed[p] {
						t.Fatalf("value %q: producer %q is a node that moved", v.Name, p.Name)
					}
					for _, c := range v.Consumers {
						if c.Graph() == g && !listed[c] {
							t.Fatalf("value %q: consumer %q is a node that moved", v.Name, c.Name)
						}
					}
				}
			}
			if a, b := report(plain), report(compacted); string(a) != string(b) {
				t.Fatal("report differs after compaction")
			}
		})
	}
}

// TestCompactNodesFreesStorage: on a graph read from a file (whose nodes
// the reader allocates together), compacting after the fused plan lets
// the collector free the storage of the nodes the passes removed: at least
// half their size, once nothing else holds it (a stale pointer anywhere,
// such as a slot past the end of a list, would keep all of it).
func TestCompactNodesFreesStorage(t *testing.T) {
	c := models.LlamaTiny
	c.Layers = 60
	m, err := models.Llama(c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "llama.onnx")
	if err := ir.WriteFile(path, m); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path, Options{BindAll: true})
	if err != nil {
		t.Fatal(err)
	}
	read := len(l.Model.Graph.Nodes)
	if _, err := passes.Run(l.Model.Graph, passes.Options{}); err != nil {
		t.Fatal(err)
	}
	g := l.Model.Graph
	left := len(g.Nodes)
	if left > read/2 {
		t.Fatalf("the fused plan kept %d of %d nodes: not the case this test is about", left, read)
	}
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := live()
	g.CompactNodes()
	after := live()
	want := uint64(read-left) * uint64(unsafe.Sizeof(ir.Node{})) / 2
	if after+want > before {
		t.Fatalf("compaction freed %d bytes (live %d → %d), want ≥ %d (%d of %d nodes removed)",
			int64(before)-int64(after), before, after, want, read-left, read)
	}
	if err := ir.Verify(g); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(l)
}
