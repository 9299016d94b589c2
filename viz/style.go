package viz

import (
	"math"

	"github.com/onnxcost/onnxcost/ir"
)

// Colours follow the convention users know from perf tools (research
// notes §4.2, Intel Advisor, trex): compute blue, memory orange (HBM dark,
// L2 light), fixed kernel latency lilac, launch grey; time share as a ColorBrewer YlOrRd heat ramp.
var ceilingFill = map[Ceiling]string{
	CeilCompute: "#9ecae1",
	CeilHBM:     "#fd8d3c",
	CeilL2:      "#fdd49e",
	CeilLatency: "#dadaeb",
	CeilLaunch:  "#d9d9d9",
	CeilNone:    "#ffffff",
}

// ceilingOrder is the legend order of the bound colours.
var ceilingOrder = []Ceiling{CeilCompute, CeilHBM, CeilL2, CeilLatency, CeilLaunch}

// heatRamp is ColorBrewer's 9-class YlOrRd.
var heatRamp = []string{"#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#bd0026", "#800026"}

// heatIndex maps a share of the largest share to a ramp class. A square
// root spreads the many small shares over more classes than a linear
// scale would, so the tail stays distinguishable.
func heatIndex(share, maxShare float64) int {
	if maxShare <= 0 || share <= 0 {
		return 0
	}
	k := int(math.Sqrt(share/maxShare) * float64(len(heatRamp)))
	return min(max(k, 0), len(heatRamp)-1)
}

// heatBinLow is the smallest share (as a fraction of maxShare) of class k.
func heatBinLow(k int) float64 {
	f := float64(k) / float64(len(heatRamp))
	return f * f
}

// darkFill reports whether a fill needs white text.
func darkFill(fill string) bool {
	for _, d := range heatRamp[6:] {
		if fill == d {
			return true
		}
	}
	return false
}

// opFamily groups op types for --color op (trex's layer-type palette,
// lightened so that black text stays readable).
type opFamily struct {
	name string
	fill string
}

var (
	famConv    = opFamily{"convolution", "#8fb8de"}
	famGEMM    = opFamily{"matmul / gemm", "#7fa7f0"}
	famAttn    = opFamily{"attention", "#c9a0e8"}
	famRNN     = opFamily{"recurrent", "#f4a6a6"}
	famPool    = opFamily{"pooling", "#f4c27a"}
	famNorm    = opFamily{"norm / softmax / reduce", "#e3a6e3"}
	famData    = opFamily{"data movement", "#a6e3e9"}
	famElem    = opFamily{"elementwise", "#bde39c"}
	famOther   = opFamily{"other", "#e0e0e0"}
	familyList = []opFamily{famConv, famGEMM, famAttn, famRNN, famPool, famNorm, famData, famElem, famOther}
)

// familyOf is the colour family of an op, from the family its schema
// declares (ir.Family). Normalisations, softmax and reductions share one
// colour; every other registered op (elementwise, control, quantisation,
// ...) is drawn as elementwise work; an op with no schema is "other".
func familyOf(domain, op string) opFamily {
	s := ir.LookupOp(domain, op)
	if s == nil {
		return famOther
	}
	switch s.Family {
	case ir.FamilyConv:
		return famConv
	case ir.FamilyGEMM:
		return famGEMM
	case ir.FamilyAttention:
		return famAttn
	case ir.FamilyRNN:
		return famRNN
	case ir.FamilyPool:
		return famPool
	case ir.FamilyNorm, ir.FamilyReduce:
		return famNorm
	case ir.FamilyData:
		return famData
	}
	return famElem
}

// shortDType abbreviates dtype names for edge labels.
func shortDType(dt string) string {
	switch dt {
	case "float32":
		return "f32"
	case "float16":
		return "f16"
	case "bfloat16":
		return "bf16"
	case "float64":
		return "f64"
	case "int64":
		return "i64"
	case "int32":
		return "i32"
	case "int8":
		return "i8"
	case "uint8":
		return "u8"
	}
	return dt
}
