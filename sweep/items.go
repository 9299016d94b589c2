package sweep

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/pipeline"
)

// GEMMFLOPs sums the FLOPs of GEMM-like nodes (fused ones included: a
// fused node is named for what it is built around).
func GEMMFLOPs(r *report.Report) float64 {
	t := 0.0
	for _, n := range r.Nodes {
		for _, k := range []string{"Conv", "Gemm", "MatMul", "LSTM", "GRU", "RNN", "Attention"} {
			if strings.Contains(n.OpType, k) {
				t += n.FLOPs
				break
			}
		}
	}
	return t
}

// BatchBinds reports whether a batch binds anything in the model: some
// graph input with a symbolic leading dim, or a static batch-1 export,
// whose leading 1 a load at a batch rewrites (as report --batch does,
// with a warning).
func BatchBinds(l *pipeline.Loaded) bool {
	if l.BatchRewritable() {
		return true
	}
	for _, in := range l.Model.Graph.Inputs {
		if in.Declared != nil && len(in.Declared.Shape.Dims) > 0 && !in.Declared.Shape.Dims[0].IsKnown() {
			return true
		}
	}
	return false
}

// ItemsPerRun is the batch one run of the model at point p processes:
// what every per-item figure (throughput, energy per item, cost per
// million) divides by. It is b when given (b > 0), else the model's own
// batch, from the first of these that exists:
//
//  1. a zoo model's batch parameter;
//  2. the value bound to an input dim named batch (batch, batch_size, N,
//     …, the names a batch binds: pipeline.IsBatchName);
//  3. the batch dim of a recurrent op's input (LSTM, GRU, RNN: dim 1 of a
//     layout-0 [seq, batch, input] X, dim 0 of a layout-1 one), as in a
//     seq-first LM's static [32,128] tokens;
//  4. the value every ranked input has at one position, the lowest first
//     (a static [4,3,224,224] export gives 4), warning when rank-3 inputs
//     tell [seq, batch, …] from [batch, seq, …] only by guess.
//
// Failing all, it counts one item per run, and says so.
func (s *Sweeper) ItemsPerRun(b int64, p Point, l *pipeline.Loaded) int64 {
	if b > 0 {
		return b
	}
	if v, ok := s.zooBatch(p); ok {
		return v
	}
	g := l.Model.Graph
	var ins []*ir.Value
	for _, in := range g.Inputs {
		if in == nil || in.IsInitializer || !in.Shape.Ranked || len(in.Shape.Dims) == 0 {
			continue
		}
		ins = append(ins, in)
		if in.Declared == nil {
			continue
		}
		for _, d := range in.Declared.Shape.Dims {
			if v, ok := l.Bindings[d.Sym]; ok && !d.IsKnown() && pipeline.IsBatchName(d.Sym) && v > 0 {
				return v
			}
		}
	}
	if v, ok := recurrentBatch(g); ok {
		return v
	}
	if v, pos, used, ok := sharedDim(ins); ok {
		if pos == 0 && !slices.ContainsFunc(used, func(in *ir.Value) bool { return len(in.Shape.Dims) != 3 }) {
			// A leading 1 is batch 1 as a batch binding reads static
			// exports; a one-step sequence of many items is too rare to
			// warn about.
			if d := used[0].Shape.Dims; d[0].Value > 1 && d[0] != d[1] {
				s.warn(fmt.Sprintf("%s: per-item figures take the leading dim of input %s %s as the batch (%d); a sequence-first model's batch is its second dim (%d)",
					s.ModelPath(p), used[0].Name, used[0].Shape, d[0].Value, d[1].Value))
			}
		}
		return v
	}
	s.warn(fmt.Sprintf("%s: no input dim is recognizably the batch, so throughput and per-item figures count one item per run", s.ModelPath(p)))
	return 1
}

// zooBatch is a zoo model's batch at p: the point's, the path's, or the
// parameter's default; a symbolic batch (-1) is left to the binding.
func (s *Sweeper) zooBatch(p Point) (int64, bool) {
	if s.zoo == nil {
		return 0, false
	}
	v, set := p.Params["batch"]
	if !set {
		v, set = s.zoo.Params["batch"]
	}
	for _, q := range s.zoo.Entry.Params {
		if q.Name == "batch" && !set {
			v, set = q.Default, true
		}
	}
	return v, set && v > 0
}

// recurrentBatch is the batch dim of the first recurrent op's input X
// whose batch is known.
func recurrentBatch(g *ir.Graph) (int64, bool) {
	for _, n := range g.Nodes {
		if n.Domain != "" && n.Domain != "ai.onnx" || n.OpType != "LSTM" && n.OpType != "GRU" && n.OpType != "RNN" || len(n.Inputs) == 0 || n.Inputs[0] == nil {
			continue
		}
		x := n.Inputs[0].Shape
		pos := 1
		if n.AttrInt("layout", 0) == 1 {
			pos = 0
		}
		if x.Ranked && len(x.Dims) == 3 && x.Dims[pos].IsKnown() && x.Dims[pos].Value > 0 {
			return x.Dims[pos].Value, true
		}
	}
	return 0, false
}

// sharedDim finds the value every input of rank ≥ 2 (of rank ≥ 1 when
// there is none) has at one position, the lowest such position first,
// and returns it with that position and the inputs compared.
func sharedDim(ins []*ir.Value) (int64, int, []*ir.Value, bool) {
	minRank := 2
	if !slices.ContainsFunc(ins, func(v *ir.Value) bool { return len(v.Shape.Dims) >= 2 }) {
		minRank = 1
	}
	var use []*ir.Value
	for _, in := range ins {
		if len(in.Shape.Dims) >= minRank {
			use = append(use, in)
		}
	}
	if len(use) == 0 {
		return 0, 0, nil, false
	}
	for pos, d := range use[0].Shape.Dims {
		if !d.IsKnown() || d.Value < 1 {
			continue
		}
		all := true
		for _, in := range use[1:] {
			all = all && pos < len(in.Shape.Dims) && in.Shape.Dims[pos].Is(d.Value)
		}
		if all {
			return d.Value, pos, use, true
		}
	}
	return 0, 0, nil, false
}
