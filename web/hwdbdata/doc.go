// Package hwdbdata is the built-in hardware database (hwdb/gpus.yaml and
// hwdb/runtimes.yaml) already parsed and checked, as the JSON of its
// entries, generated from the YAML by ./gen: the WebAssembly build hands
// them to hwdb (Install) instead of parsing the YAML at every page load
// (0.4 s there; decoding the JSON takes a few milliseconds), and so does
// the command (13 ms of a 2-core machine's start against 1.6 ms). Its test
// fails when they differ from what the YAML parses to;
// scripts/build_web.sh regenerates them before each build.
//
// JSON rather than Go literals: a literal of every GPU compiles to one
// huge function, which grew the WebAssembly by 280 kB and its start-up.
package hwdbdata

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/onnxcost/onnxcost/hwdb"
)

//go:generate go run ./gen -o data.json

//go:embed data.json
var data []byte

// Data is what data.json holds: hwdb's entries, each sorted by name.
type Data struct {
	GPUs     []*hwdb.GPU     `json:"gpus"`
	Runtimes []*hwdb.Runtime `json:"runtimes"`
}

// Load decodes data.json.
func Load() (*Data, error) {
	var d Data
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("web/hwdbdata/data.json: %w", err)
	}
	return &d, nil
}

// Install makes hwdb's built-in entries those of data.json, decoded on
// first use. Call it from an init function, before hwdb is used.
func Install() {
	hwdb.UseParsed(func() ([]*hwdb.GPU, []*hwdb.Runtime, error) {
		d, err := Load()
		if err != nil {
			return nil, nil, err
		}
		return d.GPUs, d.Runtimes, nil
	})
}
