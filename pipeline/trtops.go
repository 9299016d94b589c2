package pipeline

import (
	"fmt"

	"github.com/onnxcost/onnxcost/hwdb"
)

// Which of the default domain's operators a TensorRT release's ONNX
// parser imports. Read from onnx/onnx-tensorrt at each release's commit
// (the parser's DEFINE_BUILTIN_OP_IMPORTER list, which its
// docs/operators.md table follows but for Reciprocal in 8.0-8.4 and
// HardSwish in 8.4, listed unsupported with an importer): 8.0 8fea430,
// 8.2 85e79f6, 8.4 1da7332, 8.5 7029da0, 8.6 6872a94, 9.1 877b5dc,
// 9.2 306247b, 9.3 1def182, 10.0 eb43908, 10.1 96e7811 (2024-06-17).

// trtReleases are the releases read, oldest first.
var trtReleases = []string{"8.0", "8.2", "8.4", "8.5", "8.6", "9.1", "9.2", "9.3", "10.0", "10.1"}

// trtFirstImported maps each default-domain op onnxcost reads that some
// release read lacks to the first release whose parser imports it; ""
// for one none of them imports (an engine needs a plugin for it; those
// of opset 21 and later are past 10.1's range, opsets 9-20). Every other
// op onnxcost reads is imported by all of them.
var trtFirstImported = map[string]string{
	"CastLike": "9.1", "DeformConv": "10.1", "Einsum": "8.2", "GatherND": "8.2", "Gelu": "10.0", "GridSample": "8.5",
	"GroupNormalization": "8.6", "HardSwish": "8.4", "Hardmax": "9.2", "IsInf": "8.6", "IsNaN": "8.2", "LayerNormalization": "8.6",
	"MeanVarianceNormalization": "8.5", "Mish": "10.0", "Mod": "8.5", "NonZero": "8.5", "OneHot": "8.5", "RandomNormal": "8.5",
	"RandomNormalLike": "8.5", "RoiAlign": "8.5", "Round": "8.2", "Scatter": "8.2", "ScatterElements": "8.2", "ScatterND": "8.2",
	"Shrink": "8.4", "Sign": "8.2", "Trilu": "8.5", "Xor": "8.4",

	"AffineGrid": "", "Attention": "", "Bernoulli": "", "BitShift": "", "BitwiseAnd": "", "BitwiseNot": "", "BitwiseOr": "",
	"BitwiseXor": "", "BlackmanWindow": "", "CenterCropPad": "", "Col2Im": "", "Compress": "", "ConcatFromSequence": "",
	"ConvInteger": "", "DFT": "", "Det": "", "DynamicQuantizeLinear": "", "HammingWindow": "", "HannWindow": "",
	"MatMulInteger": "", "MaxRoiPool": "", "MaxUnpool": "", "MelWeightMatrix": "", "Multinomial": "",
	"NegativeLogLikelihoodLoss": "", "Optional": "", "OptionalGetElement": "", "OptionalHasElement": "", "QLinearConv": "",
	"QLinearMatMul": "", "RMSNormalization": "", "RegexFullMatch": "", "RotaryEmbedding": "", "STFT": "", "SequenceAt": "",
	"SequenceConstruct": "", "SequenceEmpty": "", "SequenceErase": "", "SequenceInsert": "", "SequenceLength": "",
	"SequenceMap": "", "SimplifiedLayerNormalization": "", "SoftmaxCrossEntropyLoss": "", "SplitToSequence": "",
	"StringConcat": "", "StringNormalizer": "", "StringSplit": "", "Swish": "", "TfIdfVectorizer": "", "Unique": "",
}

// DefaultTensorRTVersion is the release a TensorRT profile that names
// none parses with: the newest read.
const DefaultTensorRTVersion = "10.1"

// trtVersion is a release as major and minor.
type trtVersion struct{ major, minor int }

// parseTRTVersion reads "10.1" or "8.6.1" as a profile gives it
// (hwdb.ParseTensorRTVersion; the patch is ignored: the tables change by
// minor release).
func parseTRTVersion(s string) (trtVersion, error) {
	major, minor, ok := hwdb.ParseTensorRTVersion(s)
	if !ok {
		return trtVersion{}, fmt.Errorf("TensorRT version %q: want major.minor, as 10.1", s)
	}
	return trtVersion{major, minor}, nil
}

func (a trtVersion) less(b trtVersion) bool {
	return a.major < b.major || (a.major == b.major && a.minor < b.minor)
}

// trtTable is the release whose table answers for version s: the newest
// read that is not newer than s (8.3 is 8.2's parser), the oldest read
// for an older one, and DefaultTensorRTVersion for "".
func trtTable(s string) (string, error) {
	if s == "" {
		return DefaultTensorRTVersion, nil
	}
	want, err := parseTRTVersion(s)
	if err != nil {
		return "", err
	}
	table := trtReleases[0]
	for _, r := range trtReleases {
		if v, _ := parseTRTVersion(r); !want.less(v) {
			table = r
		}
	}
	return table, nil
}

// trtImports reports whether release table's parser imports op.
func trtImports(table, op string) bool {
	first, listed := trtFirstImported[op]
	switch {
	case !listed:
		return true
	case first == "":
		return false
	}
	f, _ := parseTRTVersion(first)
	t, _ := parseTRTVersion(table)
	return !t.less(f)
}
