package hwdbdata

import (
	"reflect"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestMatchesYAML holds data.go to what hwdb parses from its YAML,
// field for field, so the page and the CLI cost on the same figures. It
// fails after an edit of hwdb/gpus.yaml or runtimes.yaml until data.go
// is regenerated (scripts/build_web.sh does it, or: go generate
// ./web/hwdbdata).
func TestMatchesYAML(t *testing.T) {
	gdb, err := hwdb.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	rdb, err := hwdb.BuiltinRuntimes()
	if err != nil {
		t.Fatal(err)
	}
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	const regen = "web/hwdbdata/data.go is stale: run go generate ./web/hwdbdata (scripts/build_web.sh does)"
	yamlGPUs := gdb.All()
	if len(d.GPUs) != len(yamlGPUs) {
		t.Fatalf("%d GPUs in data.go, the YAML has %d: %s", len(d.GPUs), len(yamlGPUs), regen)
	}
	for i := range d.GPUs {
		if !reflect.DeepEqual(d.GPUs[i], yamlGPUs[i]) {
			t.Errorf("GPU %s differs from the YAML's %s: %s", d.GPUs[i].Name, yamlGPUs[i].Name, regen)
		}
	}
	if !reflect.DeepEqual(d.Runtimes, rdb.All()) {
		t.Errorf("the runtime profiles differ from the YAML's: %s", regen)
	}
	for i, g := range d.GPUs {
		if j := gpus[i]; j.name != g.Name || !reflect.DeepEqual(j.aliases, g.Aliases) {
			t.Errorf("entry %d is looked up as %s %q but decodes as %s %q: %s", i, j.name, j.aliases, g.Name, g.Aliases, regen)
		}
	}

	// Install replaces hwdb's built-in entries (for the rest of this
	// process): each GPU must be found by its name and every alias, as
	// the YAML's, and decode to the YAML's figures.
	Install()
	ldb, err := hwdb.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range yamlGPUs {
		for _, name := range append([]string{want.Name}, want.Aliases...) {
			got, err := ldb.Lookup(name)
			if err != nil {
				t.Errorf("installed: %v", err)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("installed: %s gives %s, not the YAML's figures", name, got.Name)
			}
		}
	}
	if _, err := ldb.Lookup("A100X"); err == nil || !strings.Contains(err.Error(), "did you mean") {
		t.Errorf("installed: an unknown name gives %v, want suggestions", err)
	}
	if !reflect.DeepEqual(ldb.All(), yamlGPUs) {
		t.Error("installed: All differs from the YAML's")
	}
	lrt, err := hwdb.BuiltinRuntimes()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lrt.All(), rdb.All()) {
		t.Error("installed: the runtime profiles differ from the YAML's")
	}
}
