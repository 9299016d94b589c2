package kernelrows

import (
	"fmt"
	"io/fs"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/calibrate"
)

// LoadDeepBench reads DeepBench's sheets through internal/calibrate, with
// its split: the rows it holds back from the time model's fit are the
// held-out rows here. Op is the kind and the sheet's arithmetic
// ("gemm/fp32", "conv/int8"); Class is the priced kernel's (a convolution
// is conv or winograd, whichever the model picks, as cuDNN's search does).
func LoadDeepBench(fsys fs.FS) (rows []Row, skipped []string, err error) {
	cases, _, skipped, err := calibrate.LoadDeepBench(fsys, hwdb.Lookup)
	if err != nil {
		return nil, nil, fmt.Errorf("deepbench: %w", err)
	}
	if len(cases) == 0 {
		return nil, nil, fmt.Errorf("deepbench: no rows under the data folder")
	}
	p := perf.DefaultParams()
	for i := range cases {
		c := cases[i]
		_, k := c.Predict(p)
		r := c.Row
		rows = append(rows, Row{Source: SourceDeepBench, GPU: c.GPUName,
			Op:    string(r.Kind) + "/" + string(r.Precision),
			Shape: fmt.Sprintf("%s:%d", r.File, r.Line),
			Class: k.Class, Kernel: k, Setting: perf.Isolated,
			MeasuredS: r.TimeS, HeldOut: c.Holdout, bench: &c})
	}
	return rows, skipped, nil
}
