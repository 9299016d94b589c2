package report

import _ "embed"

// ReportSchema is the JSON Schema (draft 2020-12) of Report, generated from
// the struct by TestReportSchema (-update-schema) and committed, so scripts can
// validate saved reports and the schema changes only with the contract.
//
//go:embed report.schema.json
var ReportSchema []byte

// CompareSchema is the JSON Schema (draft 2020-12) of Comparison, the
// output of `onnxcost compare --format json`, generated and checked like
// ReportSchema.
//
//go:embed compare.schema.json
var CompareSchema []byte
