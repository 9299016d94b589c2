package hwdbdata

import (
	"reflect"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestMatchesYAML holds data.json to what hwdb parses from its YAML,
// field for field, so the page and the CLI cost on the same figures. It
// fails after an edit of hwdb/gpus.yaml or runtimes.yaml until data.json
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
	const regen = "web/hwdbdata/data.json is stale: run go generate ./web/hwdbdata (scripts/build_web.sh does)"
	yamlGPUs := gdb.All()
	if len(d.GPUs) != len(yamlGPUs) {
		t.Fatalf("%d GPUs in data.json, the YAML has %d: %s", len(d.GPUs), len(yamlGPUs), regen)
	}
	for i := range d.GPUs {
		if !reflect.DeepEqual(d.GPUs[i], yamlGPUs[i]) {
			t.Errorf("GPU %s differs from the YAML's %s: %s", d.GPUs[i].Name, yamlGPUs[i].Name, regen)
		}
	}
	if !reflect.DeepEqual(d.Runtimes, rdb.All()) {
		t.Errorf("the runtime profiles differ from the YAML's: %s", regen)
	}
}
