package passes

import (
	"path/filepath"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
)

// TestSweepsByTypeMissNothing runs every pass on the fixtures and on zoo
// models twice, sweeping only the op types each pass starts at (ir's
// op-type index) and sweeping every node as before it: the fused graphs
// must be identical, or some sweep's op-type list misses a type its test
// accepts.
func TestSweepsByTypeMissNothing(t *testing.T) {
	type source struct {
		name string
		load func(t *testing.T) *ir.Model
	}
	var sources []source
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "models", "*.onnx"))
	paths = append(paths, filepath.Join("testdata", "mha_seqfirst.onnx"))
	for _, p := range paths {
		sources = append(sources, source{filepath.Base(p), func(t *testing.T) *ir.Model { return loadInferred(t, p, 1) }})
	}
	for _, e := range models.Zoo() {
		switch e.Name {
		case "resnet18", "vgg11", "transformer", "gpt2-small", "llama-tiny", "lstm-ptb":
		default:
			continue
		}
		sources = append(sources, source{"zoo " + e.Name, func(t *testing.T) *ir.Model {
			m, err := e.Build(nil)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}})
	}
	if len(sources) < 7 {
		t.Fatalf("only %d models to check", len(sources))
	}
	fused := func(t *testing.T, s source, full bool) string {
		m := s.load(t)
		fullSweeps = full
		defer func() { fullSweeps = false }()
		if _, err := Run(m.Graph, Options{}); err != nil {
			t.Fatal(err)
		}
		return ir.Dump(m.Graph)
	}
	for _, s := range sources {
		t.Run(s.name, func(t *testing.T) {
			byType, full := fused(t, s, false), fused(t, s, true)
			if byType != full {
				t.Errorf("sweeping by op type fused differently from sweeping every node")
			}
		})
	}
}
