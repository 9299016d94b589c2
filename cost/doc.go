// Package cost counts what every node of an inferred graph computes and
// moves (MACs, FLOPs, transcendentals, bytes, launches), prices each node's
// kernel with the time model of package cost/perf on one GPU from hwdb, and
// returns the result as a cost/report.Report. It is to onnxcost what XLA's
// HloCostAnalysis is to XLA: one rule per op, returning a summable
// estimate; the GPU performance model lives apart, in cost/perf.
//
// Files:
//
//	analyze.go          Analyze: walks the graph, runs the rules, times, sums and sanitises
//	memory.go           peak activation memory over a topological walk
//	parallel.go         tensor parallelism (--gpus N): split GEMM work and weights, all-reduces, per-GPU memory
//	runtime.go          the execution profile: host/device pipeline, per-call cost, memory floor (report.Runtime)
//	modeldtype.go       the compute dtype a model runs at when --dtype is not given
//	precision.go        the compute path (tensor cores or not) of each node, fallback warnings
//	quantized.go        quantized nodes (QLinear*/Integer ops, Q/DQ-wrapped ops) and the type they run at
//	rules.go            Rule, NodeEstimate, RuleCtx, the rule table, NoCostRule, FLOPConvention
//	rules_gemm.go       Conv, ConvTranspose, Gemm, MatMul, Einsum, Attention
//	rules_elementwise.go pointwise ops (opCounts: flops and transcendentals per element)
//	rules_reduce.go     reductions, softmax, normalisations, pooling
//	rules_data.go       views, copies, gathers, scatters, random and write ops
//	rules_rnn.go        LSTM, GRU, RNN
//	rules_control.go    If, Loop, Scan (the cost of their bodies)
//	rules_nms.go        NonMaxSuppression
//	rules_misc.go       com.microsoft, training-preview and legacy ops
//	rules_fusedapi.go   FusedEstimate and the parts API for fused-op rules
//	rules_fused.go      rules of the epilogue and Winograd passes' fused ops
//	rules_fused_attn.go rules of the decomposition, elementwise and attention passes' fused ops
//
// Invariants:
//   - macs and flops are the model's arithmetic, the same in every plan and
//     dtype; executed_macs and executed_flops are what the plan's kernels
//     run (Winograd: fewer products plus transforms) and what the time
//     model prices. A rule sets the executed counts only when they differ.
//   - A rule never panics on a model; Analyze recovers one that does and
//     lists its node under unsupported_ops. Every quantity a rule returns is
//     float64 (sums never wrap) and Analyze replaces NaN, Inf and negative
//     values before they reach a report.
//   - Every op with a shape rule in ir has a cost rule here or an entry in
//     NoCostRule with its reason; RuleKeys lists the ops that have one,
//     named by ir.QualifiedOp.
//   - The same graph on the same GPU gives a byte-identical report.
//
// Adding an op: the recipe (shape rule, cost rule, traits, fusion, test) is
// in ir/doc.go. A cost rule is a Rule registered with RegisterRule from the
// rules_*.go file of its family; its doc comment states the formula.
package cost
