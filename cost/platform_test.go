package cost

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestPlatformDigests writes a digest of every report of seven fixtures on
// every GPU at fp32, fp16 and int8 to the file ONNXCOST_DIGESTS names
// (skipped without it). .ci/run writes it natively and again with the
// package compiled to WebAssembly, as the browser app runs it, and fails
// when the two differ: an estimate must be the same bits on both (the
// standard library's Exp and Log are assembly on amd64 and Go on
// WebAssembly, and differed in the last bit for 19 of these 735 reports
// before internal/detmath).
func TestPlatformDigests(t *testing.T) {
	out := os.Getenv("ONNXCOST_DIGESTS")
	if out == "" {
		t.Skip("ONNXCOST_DIGESTS names the file to write (.ci/run compares native against WebAssembly)")
	}
	var b strings.Builder
	for _, name := range []string{"resnet50", "bert_base", "mobilenet_v2", "alexnet", "gpt_small", "densenet121", "lstm_ptb"} {
		m := loadFixture(t, name, map[string]int64{"batch": 8, "batch_size": 8, "N": 8, "seq": 128, "sequence": 128})
		for _, g := range hwdb.All() {
			for _, dt := range []string{"fp32", "fp16", "int8"} {
				r, err := Analyze(m.Graph, m, g, Options{DType: dt})
				if err != nil {
					fmt.Fprintf(&b, "%s %s %s error %v\n", name, g.Name, dt, err)
					continue
				}
				js, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "%s %s %s %x\n", name, g.Name, dt, sha256.Sum256(js))
			}
		}
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
