package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/internal/golden"
)

var updateNumbers = flag.Bool("update-numbers", false, "rewrite testdata/numbers.golden")

// numbersConfigs are the command lines whose output the numbers golden
// pins, each run on every fixture. Together they cover both plans, four
// GPUs, every dtype family and every output format of the cost commands.
var numbersConfigs = [][]string{
	{"report", "--gpu", "T4", "--format", "json"},
	{"report", "--gpu", "A100-SXM4-40GB", "--dtype", "fp16", "--plan", "unfused", "--format", "json"},
	{"report", "--gpu", "H100-SXM5-80GB", "--dtype", "int8", "--batch", "8", "--format", "json"},
	{"report", "--gpu", "V100", "--format", "csv"},
	{"report", "--gpu", "L4", "--dtype", "bf16", "--format", "markdown"},
	{"report", "--gpu", "T4", "--top", "10"},
	{"compare", "--gpu", "A100-SXM4-40GB", "--format", "json"},
	{"shapes", "--format", "json"},
}

// TestNumbersGolden pins every number the tool prints on the fixtures: the
// totals of each JSON report in readable form, a hash of every command's
// whole stdout (byte-identical output), and the prediction for every
// published row. A refactor must leave this file unchanged; a deliberate
// model change rewrites it with -update-numbers and shows the diff.
func TestNumbersGolden(t *testing.T) {
	models, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "models", "*.onnx"))
	if err != nil || len(models) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	sort.Strings(models)
	var b bytes.Buffer
	for _, m := range models {
		name := filepath.Base(m)
		for _, cfg := range numbersConfigs {
			args := append([]string{cfg[0], m}, cfg[1:]...)
			code, out, _ := runCLI(t, args...)
			fmt.Fprintf(&b, "%s | %s | exit %d | sha256 %x\n", name, strings.Join(cfg, " "), code, sha256.Sum256([]byte(out)))
			if code != 0 || cfg[0] == "shapes" || !strings.Contains(strings.Join(cfg, " "), "json") {
				continue
			}
			var doc map[string]any
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("%s: %v", strings.Join(args, " "), err)
			}
			for _, key := range []string{"totals", "fused", "unfused"} {
				if v, ok := doc[key]; ok {
					js, _ := json.Marshal(v)
					fmt.Fprintf(&b, "  %s %s\n", key, js)
				}
			}
		}
	}
	golden.Check(t, filepath.Join("testdata", "numbers.golden"), b.Bytes(), *updateNumbers)
}
