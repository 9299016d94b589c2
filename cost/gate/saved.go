package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/internal/safefile"
	"github.com/onnxcost/onnxcost/pipeline"
)

// Saved is one report of a saved JSON file, with the name the budget gave
// its model ("" for a plain saved report).
type Saved struct {
	Name   string
	Report *report.Report
}

// SniffJSON reads path whole when it is a JSON file, to tell a saved
// report from a model; a model (which may be large) is not read into
// memory. A zoo name is never JSON, and neither is a path that is not a
// regular file: it is never opened (a named pipe would block the open),
// and the model reader refuses it with its own message. A JSON file is
// read up to safefile.ReportLimit.
func SniffJSON(path string) (data []byte, isJSON bool, err error) {
	if pipeline.IsZoo(path) {
		return nil, false, nil
	}
	fh, fi, err := safefile.Open(path)
	if errors.Is(err, safefile.ErrNotRegular) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %v", path, safefile.Reason(err))
	}
	defer fh.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(fh, head)
	trimmed := bytes.TrimLeft(head[:n], " \t\r\n\xef\xbb\xbf")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, false, nil
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return nil, false, fmt.Errorf("%s: %v", path, err)
	}
	data, err = safefile.ReadAll(fh, fi, path, safefile.ReportLimit)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %v", path, safefile.Reason(err))
	}
	return data, true, nil
}

// ReadSaved reads the saved JSON report at path, up to
// safefile.ReportLimit; errors leave out the path, which the caller
// names with the flag that gave it.
func ReadSaved(path string) ([]byte, error) {
	data, err := safefile.ReadFile(path, safefile.ReportLimit)
	return data, safefile.Reason(err)
}

// DecodeSaved reads the reports of a saved JSON file: one for `report
// --format json`; for `check --out-json`, the head report of every model
// it checked, under the budget's name for it. Both are "saved reports" to
// the user (the README's CI section saves the baseline with check), so
// both are read wherever a saved report is.
func DecodeSaved(data []byte) ([]Saved, error) {
	var probe struct {
		SchemaVersion *int              `json:"schema_version"`
		Totals        *json.RawMessage  `json:"totals"`
		Models        []json.RawMessage `json:"models"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("not a valid JSON report: %w", err)
	}
	if probe.SchemaVersion == nil {
		return nil, fmt.Errorf("not an onnxcost report (no schema_version)")
	}
	if *probe.SchemaVersion > report.SchemaVersion {
		return nil, fmt.Errorf("report schema_version %d is newer than this onnxcost understands (%d)", *probe.SchemaVersion, report.SchemaVersion)
	}
	if probe.Totals == nil && probe.Models != nil {
		var chk CheckResult
		if err := json.Unmarshal(data, &chk); err != nil {
			return nil, fmt.Errorf("not a valid saved check result: %w", err)
		}
		var out []Saved
		for _, m := range chk.Models {
			if m.Report != nil {
				out = append(out, Saved{Name: m.Name, Report: m.Report})
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("a saved check result with no model report in it")
		}
		return out, nil
	}
	if probe.Totals == nil {
		return nil, fmt.Errorf("not an onnxcost report (no totals)")
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("not a valid JSON report: %w", err)
	}
	return []Saved{{Report: &r}}, nil
}

// DecodeReport reads a saved `report --format json`, or a saved `check
// --out-json` of one model.
func DecodeReport(data []byte) (*report.Report, error) {
	rs, err := DecodeSaved(data)
	if err != nil {
		return nil, err
	}
	if len(rs) > 1 {
		return nil, fmt.Errorf("%s, not one report: save one model with 'report --format json'", checkResultOf(rs))
	}
	return rs[0].Report, nil
}

// checkResultOf describes a saved check result's reports in messages: "a
// check result of N models (a, b, c)".
func checkResultOf(rs []Saved) string {
	names := make([]string, len(rs))
	for i, c := range rs {
		names[i] = c.Name
	}
	return fmt.Sprintf("a check result of %d models (%s)", len(rs), strings.Join(names, ", "))
}

// Bases reads --base-report: a saved check result, its model reports
// under their budget names, or one saved report, matched to the model of
// b whose path or name it names, or to the only model.
func Bases(data []byte, b *Budget) (map[string]*report.Report, error) {
	rs, err := DecodeSaved(data)
	if err != nil {
		return nil, err
	}
	if rs[0].Name != "" {
		out := map[string]*report.Report{}
		for _, s := range rs {
			out[s.Name] = s.Report
		}
		return out, nil
	}
	r := rs[0].Report
	for _, mb := range b.Models {
		if r.Model == mb.Path || r.Model == mb.Name || filepath.Base(r.Model) == filepath.Base(mb.Path) {
			return map[string]*report.Report{mb.Name: r}, nil
		}
	}
	if len(b.Models) == 1 {
		return map[string]*report.Report{b.Models[0].Name: r}, nil
	}
	return nil, fmt.Errorf("report of %q matches no model of %s", r.Model, b.File)
}

// Side is one argument of diff: the report estimated from a model, or the
// reports a saved JSON file holds.
type Side struct {
	Path    string
	Saved   bool
	Reports []Saved
}

// Pick returns the side's report: its only one, or, for a saved check
// result of several models, the one that is the other side's model (by
// budget name, path or file name).
func (s *Side) Pick(other *Side) (*report.Report, error) {
	if len(s.Reports) == 1 {
		return s.Reports[0].Report, nil
	}
	list := checkResultOf(s.Reports)
	if len(other.Reports) > 1 {
		return nil, fmt.Errorf("%s: %s, and %s holds several too: diff one model against a saved check result, or save one model with 'report --format json'", s.Path, list, other.Path)
	}
	want := other.Reports[0].Report.Model
	var hits []*report.Report
	for _, c := range s.Reports {
		m := c.Report.Model
		if c.Name == want || m == want || filepath.Base(m) == filepath.Base(want) {
			hits = append(hits, c.Report)
		}
	}
	if len(hits) != 1 {
		return nil, fmt.Errorf("%s: %s; none or more than one is the model of %s (%s): diff it against that model's file, or save one model with 'report --format json'", s.Path, list, other.Path, want)
	}
	return hits[0], nil
}

// Requested is what the cost flags of a command ask for, to hold a saved
// report against: a saved report holds its numbers, it cannot be
// re-costed for another GPU, dtype, runtime, plan or binding. A field
// left zero was not given.
type Requested struct {
	GPU     string // as given
	GPUName string // the GPU it resolves to ("" when it does not)
	DType   string
	// Runtime is the profile asked for when RuntimeGiven; RuntimeFile
	// is whether a runtime file was given.
	Runtime      string
	RuntimeGiven bool
	RuntimeFile  bool
	Plan         string
	Batch        *int64
	Dims         map[string]int64
}

// Mismatch is a flag a saved report contradicts, and what the report was
// computed with instead.
type Mismatch struct{ Flag, Saved string }

// Mismatches lists what q asks for that the saved report r was not
// computed with.
func Mismatches(r *report.Report, q Requested) []Mismatch {
	var out []Mismatch
	if q.GPU != "" && q.GPUName != r.GPU {
		out = append(out, Mismatch{"--gpu " + q.GPU, "GPU " + r.GPU})
	}
	if d := strings.ToLower(strings.TrimSpace(q.DType)); d != "" && d != r.DType {
		out = append(out, Mismatch{"--dtype " + q.DType, "dtype " + r.DType})
	}
	if q.RuntimeGiven || q.RuntimeFile {
		saved := "none (written before runtime profiles)"
		if r.Runtime != nil {
			saved = r.Runtime.Name
		}
		if r.Runtime == nil || !strings.EqualFold(q.Runtime, r.Runtime.Name) || q.RuntimeFile {
			out = append(out, Mismatch{"--runtime " + q.Runtime, "runtime " + saved})
		}
	}
	if q.Plan != "" && q.Plan != r.Plan {
		out = append(out, Mismatch{"--plan " + q.Plan, "plan " + r.Plan})
	}
	if q.Batch != nil {
		ok := false
		for k, v := range r.Bindings {
			ok = ok || pipeline.IsBatchName(k) && v == *q.Batch
		}
		if !ok {
			out = append(out, Mismatch{fmt.Sprintf("--batch %d", *q.Batch), "bindings " + bindingText(r.Bindings)})
		}
	}
	keys := make([]string, 0, len(q.Dims))
	for k := range q.Dims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := r.Bindings[k]; !ok || v != q.Dims[k] {
			out = append(out, Mismatch{fmt.Sprintf("--dim %s=%d", k, q.Dims[k]), "bindings " + bindingText(r.Bindings)})
		}
	}
	return out
}
