package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestIntLanesPerSM: unified CUDA cores before Volta, 64 INT32 lanes per
// SM from Volta on, 64 per AMD CU.
func TestIntLanesPerSM(t *testing.T) {
	for name, want := range map[string]float64{
		"M40": 128, "GTX-1080-Ti": 128, "P100-PCIe-16GB": 64, "V100-SXM2-16GB": 64,
		"T4": 64, "A100-SXM4-80GB": 64, "RTX-3090": 64, "H100-SXM5-80GB": 64, "MI25": 64,
	} {
		g, err := hwdb.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := intLanesPerSM(g); got != want {
			t.Errorf("%s (%s): %g integer lanes per SM, want %g", name, g.Arch, got, want)
		}
	}
}

// TestDirectConvWaves: a layer of fewer blocks than SMs costs one block's
// work on one SM, whatever the SM count; a large one spreads over all.
func TestDirectConvWaves(t *testing.T) {
	g, err := hwdb.Lookup("H100-SXM5-80GB")
	if err != nil {
		t.Fatal(err)
	}
	at := func(outputs float64) float64 {
		return directConvTime(g, Kernel{Direct: DirectConv{Outputs: outputs, Taps: 9}})
	}
	one := DirectConvInstr(9) * depthwiseBlock / (64 * g.BoostClockMHz * 1e6)
	if got := at(10 * depthwiseBlock); got != one {
		t.Errorf("10 blocks: %g s, want one block on one SM, %g s", got, one)
	}
	if got := at(depthwiseBlock / 2); got != one/2 {
		t.Errorf("half a block: %g s, want %g s", got, one/2)
	}
	big := 1000 * 132 * depthwiseBlock
	if got, want := at(float64(big)), 1000*one; got != want {
		t.Errorf("1000 waves: %g s, want %g s", got, want)
	}
	if at(0) != 0 || directConvTime(g, Kernel{}) != 0 {
		t.Error("no outputs: want 0")
	}
}
