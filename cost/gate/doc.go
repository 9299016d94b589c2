// Package gate turns cost reports into CI verdicts: diffs between two
// reports (the `diff` command), budget files with absolute and relative
// limits (`check`), and the outputs a pipeline consumes (text, JSON,
// Markdown PR comment, JUnit, GitHub Actions annotations), saved reports
// (`report --format json`, `check --out-json`) and the budget files
// `budget init` writes. It works on cost/report types; from pipeline it
// takes only the naming of zoo models and batch symbols, and from cost
// and train the lists a budget's settings are checked against.
//
// Invariants:
//   - Outputs are deterministic: metrics in table order, changed nodes
//     largest |Δtime| first.
//   - Node and model names reach annotation and Markdown output only
//     through render.Clean, so a name cannot inject a workflow command.
package gate
