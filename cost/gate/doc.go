// Package gate turns cost reports into CI verdicts: diffs between two
// reports (the `diff` command), budget files with absolute and relative
// limits (`check`), and the outputs a pipeline consumes (text, JSON,
// Markdown PR comment, JUnit, GitHub Actions annotations). It reads only
// cost/report types.
//
// Files:
//
//	metrics.go the metric table budgets and --fail-on test, and quantity parsing ("1.5 ms", "2 GB")
//	diff.go    Diff (report vs report), ReportDiff, --fail-on conditions
//	budget.go  budget files: parsing with positioned errors (ConfigError)
//	check.go   Evaluate: a budget against a set of reports
//	output.go  text, Markdown, JUnit and annotation writers
//
// Invariants:
//   - Outputs are deterministic: metrics in table order, changed nodes
//     largest |Δtime| first.
//   - Node and model names reach annotation and Markdown output only
//     through render.Clean, so a name cannot inject a workflow command.
package gate
