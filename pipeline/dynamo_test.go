package pipeline

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/train"
)

// dynamoNames rewrites a TorchScript-style export as the dynamo exporter
// writes it: every node named "node_<op>_<i>", its module path moved into
// metadata_props' pkg.torch.onnx.name_scopes as cumulative dotted paths
// (the root's empty name, then 'layer1', 'layer1.0', 'layer1.0.conv1',
// then the node's own name).
func dynamoNames(m *ir.Model) {
	for i, n := range m.Graph.Nodes {
		path := ir.NamePath(n.Name)
		n.Name = fmt.Sprintf("node_%s_%d", strings.ToLower(n.OpType), i)
		if path == "" {
			continue
		}
		scopes := []string{"''"}
		cum := ""
		for _, c := range strings.Split(strings.Trim(path, "/"), "/") {
			switch {
			case cum == "":
				cum = c
			case strings.HasPrefix(c, cum+"."):
				cum = c
			default:
				cum += "." + c
			}
			scopes = append(scopes, "'"+cum+"'")
		}
		scopes = append(scopes, "'"+strings.ToLower(n.OpType)+"'")
		n.SetMetadata([]ir.KeyValue{{Key: ir.NameScopesKey, Value: "[" + strings.Join(scopes, ", ") + "]"}})
	}
}

// TestDynamoExportPricedAsTorchScript: the dynamo exporter (the default
// of torch.onnx.export since PyTorch 2.9) keeps a node's modules in
// metadata, not in its name. The eager runtime's module dispatch, eager
// memory's module-held arguments and activation checkpointing's blocks
// must read them there: the same network exported either way is priced
// the same.
func TestDynamoExportPricedAsTorchScript(t *testing.T) {
	e, _ := models.Lookup("resnet50")
	dir := t.TempDir()
	paths := map[string]string{}
	for _, form := range []string{"torchscript", "dynamo"} {
		m, err := e.Build(map[string]int64{"batch": 32})
		if err != nil {
			t.Fatal(err)
		}
		if form == "dynamo" {
			dynamoNames(m)
		}
		paths[form] = filepath.Join(dir, form+".onnx")
		if err := ir.WriteFile(paths[form], m); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		runtime string
		train   bool
	}{{"pytorch", false}, {"graph", false}, {"pytorch", true}} {
		var got [2][3]float64
		for i, form := range []string{"torchscript", "dynamo"} {
			cfg := Config{GPU: "A100", Runtime: c.runtime, DType: "fp16"}
			if c.train {
				cfg.Train = (&train.Options{Checkpoint: "blocks"}).Training()
			}
			r, err := Run(paths[form], cfg)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = [3]float64{r.Runtime.LatencyS, r.Totals.PeakMemoryBytes, r.Totals.TimeS}
		}
		if got[0] != got[1] {
			t.Errorf("%s (train %v): TorchScript export priced %v (latency, peak memory, time), dynamo export %v", c.runtime, c.train, got[0], got[1])
		}
	}
}

// TestOptimizedKeepsModulePaths: `onnxcost optimize` writes the fused
// graph; a fused node of a dynamo export has no name_scopes of its own and
// a fused node's name is one member's, so the module path its pass
// inherited (the members' common path) must be written with it, or the
// re-read file's checkpoint blocks, eager memory and module dispatch
// differ from the model it was made from.
func TestOptimizedKeepsModulePaths(t *testing.T) {
	e, _ := models.Lookup("resnet50")
	for _, form := range []string{"torchscript", "dynamo"} {
		m, err := e.Build(map[string]int64{"batch": 1})
		if err != nil {
			t.Fatal(err)
		}
		if form == "dynamo" {
			dynamoNames(m)
		}
		if _, err := passes.Run(m.Graph, passes.Options{Disable: []string{"winograd"}}); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		fused := 0
		for _, n := range m.Graph.Nodes {
			want[n.Name] = n.ModulePath()
			if len(n.FusedFrom) > 0 {
				fused++
			}
		}
		if fused == 0 {
			t.Fatalf("%s: the passes fused nothing", form)
		}
		path := filepath.Join(t.TempDir(), form+".fused.onnx")
		if err := ir.WriteFile(path, m); err != nil {
			t.Fatal(err)
		}
		back, err := ir.ReadFile(path, ir.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		lost := 0
		for _, n := range back.Graph.Nodes {
			if got := n.ModulePath(); got != want[n.Name] {
				if lost++; lost <= 3 {
					t.Errorf("%s: node %s (%s) re-read with module path %q, written with %q", form, n.Name, n.OpType, got, want[n.Name])
				}
			}
		}
		if lost > 3 {
			t.Errorf("%s: %d of %d nodes lost their module path", form, lost, len(back.Graph.Nodes))
		}
	}
}
