// Package passes rewrites an inferred ir.Graph into the graph a GPU
// inference engine would run: dead and no-op nodes removed, batch norms
// folded, convolutions, GEMMs and elementwise chains fused, attention
// fused, 3x3 convolutions substituted by Winograd. Passes never compute
// costs; fused nodes record the nodes they replaced (Node.FusedFrom) so the
// cost model and reports can show what was merged.
//
// # Files
//
//   - passes.go: Pass, Options, Run (a fixpoint over the selected passes,
//     verifying after each change under Check), Lookup, Names, All.
//   - table.go: the pass table, one line per pass with its ordering
//     constraints; the order is checked by table_test.go.
//   - rewrite.go: Fusion, the selector's result, applied through
//     ir.Graph.ReplaceNodes; soleConsumer/onlyUse guards.
//   - cleanup.go: no-op removal, constant folding, dead-code removal.
//   - convbn.go: BatchNormalization folded into Conv/Gemm.
//   - decomp.go, decomp_match.go: decomposed LayerNorm, GELU and softmax
//     recognised as one op.
//   - rmsnorm.go: decomposed RMSNorm (LLaMA-style decoders) as one op.
//   - rotary.go: rotary embeddings written as rotate_half as one op.
//   - epilogue.go: Conv/Gemm + bias + residual + activation (+ pool).
//   - elementwise.go: chains of ir.Elementwise ops.
//   - attention.go, attention_heads.go: scaled dot-product attention and
//     its head split/merge.
//   - attention_packed.go: the Split of a packed Q|K|V projection absorbed.
//   - qkv.go: GEMMs sharing an activation packed into one GroupedGemm.
//   - skipln.go: residual Add + LayerNormalization.
//   - qdq.go: int8 Q/DQ around Conv/MatMul as QLinearConv/QLinearMatMul.
//   - winograd.go: 3×3 convolutions as Winograd F(m×m, 3×3).
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
