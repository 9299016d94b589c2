package hwdb

import (
	"encoding/json"
	"fmt"
	"sync"
)

// The built-in GPUs and runtime profiles are compiled in as builtin_data.go:
// gpus.yaml and runtimes.yaml, parsed and checked, as JSON. The YAML is
// where people edit them (units, inheritance, comments) and is not in the
// binary: parsing it at start made a bert_base report 25 ms instead of 16
// (median of 20 runs, 2-core machine) and took 0.4 s of every page load
// in the WebAssembly build. Each GPU is its own JSON string beside its name
// and aliases, decoded when it is first looked up: a report needs one.
// TestBuiltinData fails when builtin_data.go is not what the YAML parses
// to; it writes the file with -update.
//
// JSON strings rather than Go literals of the structs: a literal of every
// GPU compiles to one huge function, which grew the WebAssembly by 280 kB
// and its start-up; strings are static data.

//go:generate go test -run ^TestBuiltinData$ -update

// gpuJSON is one built-in GPU: its names, to look it up by, and the JSON
// of its gpuEntry.
type gpuJSON struct {
	name    string
	aliases []string
	json    string
}

// gpuEntry is a GPU with its sources as indices into builtinTexts (the
// outer field hides the GPU's own "sources"). Each distinct text is held
// once: 675 sources, 251 distinct texts, four fifths of the bytes.
type gpuEntry struct {
	*GPU
	Sources map[string]int `json:"sources"`
}

// decode decodes one GPU.
func (j *gpuJSON) decode() (*GPU, error) {
	var e gpuEntry
	if err := json.Unmarshal([]byte(j.json), &e); err != nil {
		return nil, fmt.Errorf("built-in GPU %s: %w", j.name, err)
	}
	if e.GPU == nil || e.GPU.Name != j.name {
		return nil, fmt.Errorf("built-in GPU %s: decoded as %v", j.name, e.GPU)
	}
	g := e.GPU
	g.Sources = nil
	if e.Sources != nil {
		g.Sources = make(map[string]string, len(e.Sources))
	}
	for k, t := range e.Sources {
		if t < 0 || t >= len(builtinTexts) {
			return nil, fmt.Errorf("built-in GPU %s: source %d of %s is not in the texts", j.name, t, k)
		}
		g.Sources[k] = builtinTexts[t]
	}
	return g, nil
}

var builtin = sync.OnceValues(func() (*DB, error) {
	es := make([]*dbEntry, len(builtinGPUs))
	for i := range builtinGPUs {
		j := &builtinGPUs[i]
		es[i] = &dbEntry{j.name, j.aliases, sync.OnceValues(j.decode)}
	}
	db, err := newDB(es, nil, "")
	if err != nil {
		return nil, fmt.Errorf("built-in GPU data: %w", err)
	}
	return db, nil
})

var builtinRuntimes = sync.OnceValues(func() (*RuntimeDB, error) {
	var rs []*Runtime
	if err := json.Unmarshal([]byte(builtinRuntimesJSON), &rs); err != nil {
		return nil, fmt.Errorf("built-in runtime profiles: %w", err)
	}
	return newRuntimeDB(rs, nil), nil
})
