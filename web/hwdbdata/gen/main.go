// Command gen writes web/hwdbdata/data.json: hwdb's built-in GPUs and
// runtime profiles, parsed and checked from the embedded YAML, as JSON
// (encoding/json writes every float so that it reads back as the same
// float64).
//
// Usage: go run ./web/hwdbdata/gen -o web/hwdbdata/data.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/onnxcost/onnxcost/hwdb"
)

func main() {
	out := flag.String("o", "data.json", "the file to write")
	flag.Parse()
	b, err := generate()
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// generate is data.json's content.
func generate() ([]byte, error) {
	gdb, err := hwdb.Builtin()
	if err != nil {
		return nil, err
	}
	rdb, err := hwdb.BuiltinRuntimes()
	if err != nil {
		return nil, err
	}
	// The shape of hwdbdata's file (not imported: it embeds this file):
	// each GPU's sources as indices into one list of distinct texts (see
	// hwdbdata.file).
	type gpu struct {
		*hwdb.GPU
		Sources map[string]int `json:"sources"`
	}
	var texts []string
	index := map[string]int{}
	var gpus []gpu
	for _, g := range gdb.All() {
		e := gpu{GPU: g}
		if g.Sources != nil {
			e.Sources = make(map[string]int, len(g.Sources))
		}
		for _, k := range slices.Sorted(maps.Keys(g.Sources)) {
			src := g.Sources[k]
			i, ok := index[src]
			if !ok {
				i = len(texts)
				index[src] = i
				texts = append(texts, src)
			}
			e.Sources[k] = i
		}
		gpus = append(gpus, e)
	}
	d := struct {
		Texts    []string        `json:"texts"`
		GPUs     []gpu           `json:"gpus"`
		Runtimes []*hwdb.Runtime `json:"runtimes"`
	}{texts, gpus, rdb.All()}
	b, err := json.Marshal(d) // compact: the decoder scans every byte twice
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
