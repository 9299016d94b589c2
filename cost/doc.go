// Package cost counts what every node of an inferred graph computes and
// moves (MACs, FLOPs, transcendentals, bytes, launches), prices each node's
// kernel with the time model of package cost/perf on one GPU from hwdb, and
// returns the result as a cost/report.Report. It is to onnxcost what XLA's
// HloCostAnalysis is to XLA: one rule per op, returning a summable
// estimate; the GPU performance model lives apart, in cost/perf.
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
