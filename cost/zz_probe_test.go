package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

func TestZZProbe(t *testing.T) {
	db, _ := hwdb.Builtin()
	g, _ := db.Lookup("A100-SXM4-40GB")
	for _, k := range []Kernel{
		GEMMKernel(128, 10000, 1024, 32, hwdb.FP16Tensor, 2, 2),
		GEMMKernel(4096, 10000, 1024, 1, hwdb.FP16Tensor, 2, 2),
		GEMMKernel(128, 10000, 1024, 32, hwdb.FP32, 4, 4),
		GEMMKernel(4096, 10000, 1024, 1, hwdb.FP32, 4, 4),
		GEMMKernel(1, 4096, 9216, 1, hwdb.FP32, 4, 4),
		GEMMKernel(1, 4096, 9216, 1, hwdb.FP16Tensor, 2, 2),
		GEMMKernel(128, 768, 768, 1, hwdb.FP16Tensor, 2, 2),
	} {
		kt := EstimateKernel(g, k)
		t.Logf("M=%d N=%d K=%d B=%d %s: comp %.1fus mem %.1fus launch %.1fus total %.1fus %.0f GFLOP/s", k.M, k.N, k.K, k.Batch, k.Precision, kt.ComputeS*1e6, kt.MemoryS*1e6, kt.LaunchS*1e6, kt.TimeS*1e6, k.FLOPs/kt.TimeS/1e9)
	}
}
