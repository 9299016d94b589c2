package perf

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestIndexedCopyFloors: on every GPU, under PyTorch's gather and under
// the older index_select loop, for slices that are whole rows of 16-byte
// vectors and for those that are not, an indexed copy is never faster
// than its bytes over DRAM bandwidth and never faster for more indices.
func TestIndexedCopyFloors(t *testing.T) {
	graph, err := hwdb.LookupRuntime("graph")
	if err != nil {
		t.Fatal(err)
	}
	older := graph.Clone()
	older.IndexSelectGather = 0
	o := PlanOptions()
	for _, g := range hwdb.All() {
		for _, rt := range []*hwdb.Runtime{graph, older} {
			o.Runtime = rt
			for _, c := range []struct {
				slice int64
				eb    float64
				rows  bool
			}{{256, 2, true}, {4097, 2, true}, {768, 4, true}, {4096, 2, false}, {1, 4, true}} {
				prev := 0.0
				for n := int64(1); n <= 1<<20; n *= 4 {
					bytes := 2 * float64(n*c.slice) * c.eb
					k := Kernel{Class: ClassData, Precision: hwdb.FP16, ElemBytes: c.eb, Bytes: bytes, WorkingSet: bytes,
						Resident: true, DRAMBytes: bytes, Launches: 1, Indexed: IndexedCopy{Indices: n, SliceElems: c.slice, Rows: c.rows}}
					kt := EstimateKernel(g, k, o)
					if math.IsNaN(kt.TimeS) || math.IsInf(kt.TimeS, 0) || kt.TimeS <= 0 {
						t.Fatalf("%s %s %+v n=%d: time %g", g.Name, rt.Name, c, n, kt.TimeS)
					}
					if g.MemBW > 0 && kt.TimeS < bytes/g.MemBW*(1-1e-9) {
						t.Errorf("%s gather %v %+v n=%d: %g s under its bytes' %g s", g.Name, GathersIndexSelect(rt), c, n, kt.TimeS, bytes/g.MemBW)
					}
					if kt.TimeS < prev*(1-1e-9) {
						t.Errorf("%s gather %v %+v: %d indices %g s after %g s for a quarter of them", g.Name, GathersIndexSelect(rt), c, n, kt.TimeS, prev)
					}
					prev = kt.TimeS
				}
			}
		}
	}
}
