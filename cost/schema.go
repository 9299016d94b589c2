package cost

import _ "embed"

// ReportSchema is the JSON Schema (draft 2020-12) of Report, generated from
// the struct by TestReportSchema (-update) and committed, so scripts can
// validate saved reports and the schema changes only with the contract.
//
//go:embed report.schema.json
var ReportSchema []byte
