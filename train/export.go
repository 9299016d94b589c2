package train

import (
	"strings"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
)

// ExportAdvice is how to export a model so that --train sees the layers
// an inference export removes (README, "Training").
const ExportAdvice = "torch.onnx.export(..., training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)"

// warnInferenceExport warns when a training step is asked of a graph that
// looks like an inference-mode (eval) export of a CNN: convolutions with
// biases and not one BatchNormalization or Dropout. An eval-mode export
// folds every BatchNormalization into the convolution before it (whose
// bias then carries BN's shift) and drops Dropout, and nothing in the file
// says they were there; the step then misses BN's batch statistics and
// backward, the activations they keep and the Dropout masks (ResNet-50 at
// batch 256 "fits" a 16 GB V100 at 13.9 GB where the network needs 23.1
// GB). A network that really has neither (AlexNet-like, no dropout) gets
// the warning too: the file cannot tell the two apart, so it says "if".
//
// It runs on the planned graph. Training plans never fold BN (fold-bn is
// an inference-only pass, passes.InferenceOnly), fused convolutions keep the bias as input 2,
// and a fused node's replaced ops are in its part_ops, so what the export
// held is still visible; an inference-mode Dropout that cleanup bypassed
// is not, which errs toward warning.
func warnInferenceExport(f *cost.Forward, g *ir.Graph) {
	convs, biased, keeps := 0, 0, 0
	for _, n := range g.Nodes {
		if isConvNode(n) {
			convs++
			if n.In(2) != nil || splitBias(n) {
				biased++
			}
		}
		if trainOnlyOp(n.Domain, n.OpType) {
			keeps++
		}
		if n.Domain == ir.FusedDomain {
			if pa := n.Attr(ir.KeyPartOps); pa != nil {
				for _, op := range pa.Strings {
					if trainOnlyOp("", op) {
						keeps++
					}
				}
			}
		}
	}
	if biased == 0 || keeps > 0 {
		return
	}
	// One line under the pipeline's 400-rune cap on a warning, the advice
	// whole.
	f.Warnf("training: this looks like an inference-mode export (%d of %d convolutions have a bias; no BatchNormalization or Dropout): eval exports fold BatchNormalization into the convolutions and drop Dropout, so their training cost and memory are missing; if the network has them, export with %s",
		biased, convs, ExportAdvice)
}

// splitBias reports whether conv's bias was split into the Add that
// reads its output (the eager plan's split-conv-bias).
func splitBias(conv *ir.Node) bool {
	y := conv.Out(0)
	if y == nil || len(y.Consumers) != 1 {
		return false
	}
	add := y.Consumers[0]
	b := ir.OtherOperand(add, y)
	return add.Domain == "" && add.OpType == "Add" && b != nil && strings.HasSuffix(b.Name, passes.SplitBiasSuffix)
}

// isConvNode reports whether n is a convolution, as exported or fused
// (FusedConv, WinogradConv keep the convolution's bias as input 2).
func isConvNode(n *ir.Node) bool {
	return n.Domain == "" && (n.OpType == "Conv" || n.OpType == "ConvTranspose") ||
		ir.IsFused(n, ir.OpFusedConv) || ir.IsFused(n, ir.OpWinogradConv)
}

// trainOnlyOp reports whether an op is one an eval-mode export removes
// (BatchNormalization folded, Dropout dropped): its presence says the
// export kept the training-time layers.
func trainOnlyOp(domain, op string) bool {
	return domain == "" && (op == "BatchNormalization" || op == "Dropout")
}
