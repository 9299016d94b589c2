// Package report is the JSON contract of onnxcost's outputs: the cost
// report (`onnxcost report --format json`) and the plan comparison
// (`onnxcost compare --format json`), with the types every consumer reads
// (viz, cost/render, cost/gate, scripts). It holds data and the small
// amount of logic that belongs to the data (summing Counts, matching the
// groups of a comparison), never rules or the time model, so readers of a
// saved report need not import the cost model.
//
// Invariants:
//   - Fields are added, never renamed; SchemaVersion changes only on an
//     incompatible change. The committed schemas match the structs (a test
//     regenerates and compares them) and real CLI output validates against
//     them (cmd/onnxcost/schema_test.go).
//   - Counts is embedded where its five fields stand together in the JSON,
//     so embedding does not move a field.
package report
