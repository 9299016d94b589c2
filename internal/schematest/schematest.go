// Package schematest reads the committed JSON Schemas (cost/report's
// *.schema.json) for the tests that check documents against them: the
// schema tests in cost/report and the CLI's output tests in cmd/onnxcost.
package schematest

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// Resolve parses and resolves a JSON Schema, failing t if it cannot.
func Resolve(t testing.TB, schema []byte) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
