// Package viz draws cost reports: Graphviz DOT graphs annotated with each
// node's roofline bound, roofline charts (gonum.org/v1/plot) and a
// self-contained HTML report.
//
// Everything here is drawn from a *report.Report (plus the GPU's ceilings),
// never from the IR, so a saved JSON report draws the same picture as the
// model it came from. viz decides nothing about cost: times, bounds and
// memory levels come from the report. The one thing asked of package ir
// is an op's declared family (ir.OpFamily via style.go's familyOf), which
// colours boxes under --color op. The shapes listing (shapes.go) is the
// exception: it prints the IR itself, the dtypes and shapes inference
// gave every value, before anything is costed.
//
// Output is deterministic: the same report gives byte-identical DOT and
// SVG. Rendering DOT to SVG/PNG/PDF runs the system `dot` (Graphviz) when
// it is on PATH; viz never embeds a WASM Graphviz (it costs seconds at
// every process start).
package viz
