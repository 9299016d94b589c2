// Package passes rewrites an inferred ir.Graph into the graph a GPU
// inference engine would run: dead and no-op nodes removed, batch norms
// folded, convolutions, GEMMs and elementwise chains fused, attention
// fused, 3x3 convolutions substituted by Winograd. Passes never compute
// costs; fused nodes record the nodes they replaced (Node.FusedFrom) so the
// cost model and reports can show what was merged.
//
// # Contracts
//
// Passes ask ops' traits of the ir op table (ir.LookupOp, ir.NodeHas) and
// write fused nodes in ir.FusedDomain with the names, attribute keys and
// shape rules of ir/fused.go and ir/ops_fused.go; cost prices them from the
// same constants. A pass edits the graph only through ir.Graph methods.
// Each fusion has a guard test (patterns it must refuse) and a
// reference-evaluator test (refeval_test.go checkPreserves) proving the
// rewrite keeps every output.
package passes
