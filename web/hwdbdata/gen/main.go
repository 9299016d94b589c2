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
	"os"

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
	// The shape of hwdbdata.Data (not imported: it embeds this file).
	d := struct {
		GPUs     []*hwdb.GPU     `json:"gpus"`
		Runtimes []*hwdb.Runtime `json:"runtimes"`
	}{gdb.All(), rdb.All()}
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
