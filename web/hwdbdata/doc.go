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
	GPUs     []*hwdb.GPU
	Runtimes []*hwdb.Runtime
}

// file is data.json's layout. A GPU's sources (four fifths of the bytes:
// 675 texts, 251 of them distinct) are indices into Texts, which holds
// each distinct text once: decoding the file took ~3.8 ms of a fresh
// `report` with the texts inline.
type file struct {
	Texts    []string        `json:"texts"`
	GPUs     []gpuEntry      `json:"gpus"`
	Runtimes []*hwdb.Runtime `json:"runtimes"`
}

// gpuEntry is a GPU with its sources as indices into file.Texts (the
// outer field hides the GPU's own "sources").
type gpuEntry struct {
	*hwdb.GPU
	Sources map[string]int `json:"sources"`
}

// Load decodes data.json.
func Load() (*Data, error) {
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("web/hwdbdata/data.json: %w", err)
	}
	d := &Data{GPUs: make([]*hwdb.GPU, len(f.GPUs)), Runtimes: f.Runtimes}
	for i, e := range f.GPUs {
		if e.GPU == nil {
			return nil, fmt.Errorf("web/hwdbdata/data.json: GPU entry %d is empty", i)
		}
		g := e.GPU
		g.Sources = nil
		if e.Sources != nil {
			g.Sources = make(map[string]string, len(e.Sources))
		}
		for k, t := range e.Sources {
			if t < 0 || t >= len(f.Texts) {
				return nil, fmt.Errorf("web/hwdbdata/data.json: GPU %s: source %d of %s is not in the texts", g.Name, t, k)
			}
			g.Sources[k] = f.Texts[t]
		}
		d.GPUs[i] = g
	}
	return d, nil
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
