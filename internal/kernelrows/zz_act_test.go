package kernelrows

import (
	"fmt"
	"os"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

func TestZZAct(t *testing.T) {
	op := os.Getenv("ZZOP")
	if op == "" {
		t.Skip()
	}
	rows, _, _ := LoadAll(root)
	for _, r := range rows {
		if r.Op != op || r.Source != "vidur" {
			continue
		}
		g, _ := hwdb.Lookup(r.GPU)
		kt := Price(r, g)
		fmt.Printf("%s\t%s\t%.2f\t%.2f\t%+.3f\tmem=%.2f comp=%.2f ramp=%.2f launch=%.2f bytes=%.3g\n", r.GPU, r.Shape, r.MeasuredS*1e6, kt.TimeS*1e6, kt.TimeS/r.MeasuredS-1, kt.MemoryS*1e6, kt.ComputeS*1e6, kt.RampS*1e6, kt.LaunchS*1e6, r.Kernel.Bytes)
	}
}
