package train

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/internal/costtest"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// builder is costtest's graph builder with the cost model to price it.
type builder struct{ *costtest.Builder }

func newBuilder(t *testing.T) *builder { return &builder{costtest.New(t)} }

// analyze runs the cost model on b on costtest's GPU and checks the
// report is sane.
func (b *builder) analyze(opt cost.Options) *report.Report {
	b.T.Helper()
	r, err := cost.Analyze(b.G, b.M, costtest.GPU(), opt)
	if err != nil {
		b.T.Fatal(err)
	}
	costtest.CheckSane(b.T, r)
	return r
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
