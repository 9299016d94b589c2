// Package render writes cost reports for people: aligned text, CSV and
// Markdown, with human units. JSON is the report struct itself. It reads
// only cost/report types.
//
// Files:
//
//	format.go number formatting with units (Seconds, FLOPs, Bytes, significant digits)
//	table.go  column alignment
//	report.go the report as text, CSV and Markdown; per-op totals (ByOp)
//	clean.go  Clean: turns control characters and line separators in names into visible escapes
//
// Invariants: output is deterministic (ties broken by position or name),
// and CSV carries exact numbers, text and Markdown rounded ones.
package render
