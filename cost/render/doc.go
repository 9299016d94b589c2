// Package render writes cost reports for people: aligned text, CSV and
// Markdown, with human units; the comparison of two plans; and a report's
// figures as model metadata for viewers (Annotate). JSON is the report
// struct itself. It reads only cost/report types, and writes ir only in
// Annotate. Its column and chunk writers (WriteRows, WriteChunks) lay out
// tables of any size in tabwriter's bytes, formatting chunks in parallel.
//
// Invariants: output is deterministic (ties broken by position or name),
// and CSV carries exact numbers, text and Markdown rounded ones.
package render
