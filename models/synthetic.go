package models

import (
	"fmt"
	"strconv"

	"github.com/onnxcost/onnxcost/ir"
)

// MaxSyntheticNodes bounds Synthetic so that a mistyped size cannot ask
// for gigabytes of graph.
const MaxSyntheticNodes = 1_000_000

// Synthetic builds a deep graph of about n nodes (at least n, at most one
// block more) for pass, cost and render benchmarks. It alternates two
// blocks on a [1,16,32,32] activation:
//
//	conv block: Conv 3×3 → BatchNormalization → Relu → Add(residual)
//	mlp block:  MatMul(·, W[32,32]) → Add(bias) → exact GELU (Div, Erf, Add, Mul, Mul)
//
// The residual Add makes it a DAG rather than a chain, and every fusion
// the passes know for CNNs and MLPs has something to match.
func Synthetic(n int) (*ir.Model, error) {
	if n < 1 || n > MaxSyntheticNodes {
		return nil, fmt.Errorf("synthetic: nodes must be between 1 and %d", MaxSyntheticNodes)
	}
	const c, hw = 16, 32
	b := newBuilder("synthetic")
	x := b.input("input", ir.Float32, ir.D(1), ir.D(c), ir.D(hw), ir.D(hw))
	for i := 0; len(b.g.Nodes) < n && b.err == nil; i++ {
		scope := "/blocks." + strconv.Itoa(i)
		prefix := "blocks." + strconv.Itoa(i)
		if i%2 == 0 {
			y := b.conv(scope+"/conv", prefix+".conv", x, c, c, 3, 1, 1, false)
			y = b.batchNorm(scope+"/bn", prefix+".bn", y, c)
			y = b.op(scope+"/relu", "Relu", []*ir.Value{y})
			x = b.op(scope, "Add", []*ir.Value{y, x})
		} else {
			y := b.linear(scope+"/fc", prefix+".fc", x, hw, hw, true)
			x = b.geluErf(scope+"/act", y)
		}
	}
	b.output(x, "output")
	return b.finish()
}
