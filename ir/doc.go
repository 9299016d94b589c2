// Package ir is onnxcost's in-memory form of an ONNX model: a graph of
// nodes and values, read from and written to the ONNX protobuf, with shape
// inference over a table of operator schemas. It imports no other package
// of this module; passes, cost, viz and the CLI build on it.
//
// # Invariants
//
//   - A graph is changed only through Graph methods: they keep
//     Value.Producer and Value.Consumers consistent with Node.Inputs and
//     Node.Outputs. Code outside this package never assigns those fields;
//     a rewrite that replaces nodes calls ReplaceNodes, which checks
//     everything before it changes anything.
//   - Nodes are in topological order; Verify checks it and the links.
//   - Every output a shape rule sets passes Limits (rank, element count,
//     small-tensor size), so hostile files fail with an error, not an
//     allocation.
//   - What a pass, cost rule or picture needs to know about an op is in its
//     OpSchema (Traits, Family, EpilogueAttrs), not in a private list.
//
// Shape errors are *OpError values (errors.As) naming the op and node.
//
// # Adding an op
//
// The registry test (internal/registrytest) fails until every step below
// that applies is done, so follow it top to bottom:
//
//  1. Shape rule and traits: add an &OpSchema{...} to the ops_*.go file of
//     its family (Domain "" for ONNX, Since = the opset that introduced it
//     and Until = the last for a removed op, both from the ONNX changelog:
//     inference refuses the op outside them; arity bounds, Infer, and Check
//     for operand constraints Infer does not need, validate.go). Reuse inferSameAsInput, inferAxisSameShape or
//     inferDataType where they fit. Set Family (viz colours by it) and any
//     Traits it has: Elementwise (a chain may fuse it; needs a per-element
//     count in cost/rules_elementwise.go), FusableActivation (a Conv/Gemm
//     epilogue may absorb it; list carried attributes in EpilogueAttrs),
//     View/Alias (no kernel, shares its input's buffer), InPlace (a kernel
//     that writes output 0 into input 0's buffer, or the outputs into the
//     inputs InPlacePairs names), Commutative.
//     Test it in ops_<family>_test.go with runFAOutputs (shape) and
//     runFATypeCases (errors).
//  2. Cost rule: RegisterRule in the cost/rules_*.go file of its kind
//     (rules_elementwise.go, rules_gemm.go, rules_reduce.go, rules_data.go,
//     rules_misc.go), with the formula in its comment; or, if it cannot be
//     costed, an entry with the reason on cost.NoCostRule. Test the counts
//     with the arithmetic written out (cost/analyze_test.go).
//  3. Backward rule: training rules will live beside the cost rule in
//     package cost, keyed by the same op; not built yet.
//  4. Fusion (only if a pass should rewrite it): a matcher in passes/, one
//     line in passes/table.go, a guard test (the pattern it must refuse)
//     and a reference-evaluator test (passes/refeval_test.go checkPreserves)
//     proving the rewrite keeps the outputs. A new fused op gets its name,
//     attribute keys and shape rule here (fused.go, ops_fused.go) and its
//     cost rule in cost/rules_fused*.go.
//  5. Run go test ./ir ./cost ./internal/registrytest: the registry test
//     checks both directions (shape rule ⇔ cost rule) and that each trait
//     keeps its promise.
package ir
