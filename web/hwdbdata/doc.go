// Package hwdbdata is the built-in hardware database (hwdb/gpus.yaml and
// hwdb/runtimes.yaml) already parsed and checked, as the JSON of its
// entries, generated from the YAML by ./gen into data.go: the WebAssembly
// build hands them to hwdb (Install) instead of parsing the YAML at every
// page load (0.4 s there), and so does the command (13 ms of a 2-core
// machine's start). Each GPU is its own JSON string beside its name and
// aliases, decoded when it is first looked up: a report needs one of the
// 35, and decoding all of them took 2.4 ms of a 36 ms DenseNet-121 report.
// Its test fails when they differ from what the YAML parses to;
// scripts/build_web.sh regenerates them before each build.
//
// JSON strings rather than Go literals of the structs: a literal of every
// GPU compiles to one huge function, which grew the WebAssembly by 280 kB
// and its start-up; strings are static data.
package hwdbdata

import (
	"encoding/json"
	"fmt"

	"github.com/onnxcost/onnxcost/hwdb"
)

//go:generate go run ./gen -o data.go

// gpuJSON is one built-in GPU: its names, to look it up by, and the JSON
// of its gpuEntry.
type gpuJSON struct {
	name    string
	aliases []string
	json    string
}

// gpuEntry is a GPU with its sources as indices into texts (the outer
// field hides the GPU's own "sources"). Each distinct text is held once:
// 675 sources, 251 distinct texts, four fifths of the bytes.
type gpuEntry struct {
	*hwdb.GPU
	Sources map[string]int `json:"sources"`
}

// decode decodes one GPU.
func (j *gpuJSON) decode() (*hwdb.GPU, error) {
	var e gpuEntry
	if err := json.Unmarshal([]byte(j.json), &e); err != nil {
		return nil, fmt.Errorf("web/hwdbdata: GPU %s: %w", j.name, err)
	}
	if e.GPU == nil {
		return nil, fmt.Errorf("web/hwdbdata: GPU %s: empty entry", j.name)
	}
	g := e.GPU
	g.Sources = nil
	if e.Sources != nil {
		g.Sources = make(map[string]string, len(e.Sources))
	}
	for k, t := range e.Sources {
		if t < 0 || t >= len(texts) {
			return nil, fmt.Errorf("web/hwdbdata: GPU %s: source %d of %s is not in the texts", j.name, t, k)
		}
		g.Sources[k] = texts[t]
	}
	return g, nil
}

// decodeRuntimes decodes the runtime profiles.
func decodeRuntimes() ([]*hwdb.Runtime, error) {
	var rs []*hwdb.Runtime
	if err := json.Unmarshal([]byte(runtimesJSON), &rs); err != nil {
		return nil, fmt.Errorf("web/hwdbdata: runtime profiles: %w", err)
	}
	return rs, nil
}

// Data is every entry of data.go, decoded: hwdb's entries, each sorted by
// name.
type Data struct {
	GPUs     []*hwdb.GPU
	Runtimes []*hwdb.Runtime
}

// Load decodes every entry.
func Load() (*Data, error) {
	d := &Data{GPUs: make([]*hwdb.GPU, len(gpus))}
	for i := range gpus {
		g, err := gpus[i].decode()
		if err != nil {
			return nil, err
		}
		d.GPUs[i] = g
	}
	rs, err := decodeRuntimes()
	if err != nil {
		return nil, err
	}
	d.Runtimes = rs
	return d, nil
}

// Install makes hwdb's built-in entries those of data.go, each GPU decoded
// on first lookup. Call it from an init function, before hwdb is used.
func Install() {
	ls := make([]hwdb.LazyGPU, len(gpus))
	for i := range gpus {
		j := &gpus[i]
		ls[i] = hwdb.LazyGPU{Name: j.name, Aliases: j.aliases, Decode: j.decode}
	}
	hwdb.UseLazy(ls, decodeRuntimes)
}
