package gate

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/report"
)

// AssertResult is the outcome of one assertion on one model.
type AssertResult struct {
	Model  string `json:"model"`
	Metric string `json:"metric"`
	// Scope is "forward pass" where a training step's budget tests a
	// count of its forward pass alone (flops, macs, executed_flops,
	// bytes, launches), absent otherwise.
	Scope   string  `json:"scope,omitempty"`
	Kind    string  `json:"kind"` // "max" or "max_increase"
	Level   Level   `json:"level"`
	Status  string  `json:"status"` // "pass", "fail" or "skipped" (relative budget without a base)
	Limit   string  `json:"limit"`
	Head    float64 `json:"head"`
	Base    float64 `json:"base,omitempty"`
	HasBase bool    `json:"has_base"`
	Message string  `json:"message"`
	// Interval says, for an absolute time budget, where the limit sits
	// in the estimate's 80% interval (report.Totals.TimeIntervalS):
	// "beyond" (even the interval's low end exceeds it: over the budget
	// on the hardware too, four times in five), "inside" (the limit falls
	// within the interval: the measured time may land on either side), or
	// "clear" (the interval's high end is within it). Absent for other
	// metrics and for reports with no interval.
	Interval string `json:"interval,omitempty"`
	Line     int    `json:"line"`
	fileName string
}

// Failed reports whether the assertion failed at error level.
func (a *AssertResult) Failed() bool { return a.Status == "fail" && a.Level == Error }

// Warned reports whether the assertion failed at warn level.
func (a *AssertResult) Warned() bool { return a.Status == "fail" && a.Level == Warn }

// ModelResult is every assertion of one model, with its reports.
type ModelResult struct {
	Name    string         `json:"name"`
	Path    string         `json:"path"`
	Report  *report.Report `json:"report"`
	Base    *report.Report `json:"base_report,omitempty"`
	Results []AssertResult `json:"results"`
	Diff    *ReportDiff    `json:"diff,omitempty"`
}

// CheckResult is the outcome of a whole budget file.
type CheckResult struct {
	SchemaVersion int    `json:"schema_version"`
	ToolVersion   string `json:"tool_version"`
	BudgetFile    string `json:"budget_file"`
	Verdict       string `json:"verdict"` // "pass", "warn", "fail" or "error"
	// Error is why the check could not run (verdict "error", exit 2): a
	// bad budget file, an unreadable model or base report.
	Error    string        `json:"error,omitempty"`
	Errors   int           `json:"errors"`
	Warnings int           `json:"warnings"`
	Models   []ModelResult `json:"models"`
}

// ErrorResult is the result of a check that could not run: written to
// the requested outputs all the same, so that a CI step reading them
// finds the error rather than no file.
func ErrorResult(budgetFile, toolVersion string, err error) *CheckResult {
	return &CheckResult{SchemaVersion: report.SchemaVersion, ToolVersion: toolVersion, BudgetFile: budgetFile,
		Verdict: "error", Error: err.Error(), Models: []ModelResult{}}
}

// Evaluate checks each model's report against its budget. bases may hold
// a base report per model name (nil: relative budgets are skipped).
func Evaluate(b *Budget, toolVersion string, reports, bases map[string]*report.Report) *CheckResult {
	res := &CheckResult{SchemaVersion: report.SchemaVersion, ToolVersion: toolVersion, BudgetFile: b.File, Models: []ModelResult{}}
	for _, mb := range b.Models {
		r := reports[mb.Name]
		mr := ModelResult{Name: mb.Name, Path: mb.Path, Report: r, Base: bases[mb.Name], Results: []AssertResult{}}
		if mr.Base != nil && r != nil {
			mr.Diff = Diff(mr.Base, r)
		}
		for _, a := range mb.Assertions {
			if a.Level == Off {
				continue
			}
			mr.Results = append(mr.Results, evalAssertion(b.File, mb.Name, a, r, mr.Base)...)
		}
		for i := range mr.Results {
			if mr.Results[i].Failed() {
				res.Errors++
			} else if mr.Results[i].Warned() {
				res.Warnings++
			}
		}
		res.Models = append(res.Models, mr)
	}
	switch {
	case res.Errors > 0:
		res.Verdict = "fail"
	case res.Warnings > 0:
		res.Verdict = "warn"
	default:
		res.Verdict = "pass"
	}
	return res
}

func evalAssertion(file, model string, a Assertion, r, base *report.Report) []AssertResult {
	m := a.Metric
	head := m.get(r.Totals)
	label := m.Label(r.Totals)
	var out []AssertResult
	mk := func(kind, limit string) AssertResult {
		return AssertResult{Model: model, Metric: m.Name, Scope: m.Scope(r.Totals), Kind: kind, Level: a.Level, Limit: limit, Head: head, Line: a.Line, fileName: file}
	}
	if a.HasMax {
		ar := mk("max", "≤ "+Format(a.Max, m))
		if head > a.Max {
			ar.Status = "fail"
			ar.Message = fmt.Sprintf("%s: %s %s exceeds the budget of %s (by %s)", model, label, Format(head, m), Format(a.Max, m), Format(head-a.Max, m))
		} else {
			ar.Status = "pass"
			ar.Message = fmt.Sprintf("%s: %s %s within %s", model, label, Format(head, m), Format(a.Max, m))
		}
		if iv := r.Totals.TimeIntervalS; m.Name == "time" && len(iv) == 2 {
			ar.Interval = intervalVerdict(iv[0], iv[1], a.Max)
			ar.Message += fmt.Sprintf(" (80%% interval %s – %s: %s)", Format(iv[0], m), Format(iv[1], m), intervalWords[ar.Interval])
		}
		out = append(out, ar)
	}
	if a.HasMaxIncrease {
		ar := mk("max_increase", fmt.Sprintf("≤ +%g%% vs base", a.MaxIncrease*100))
		if base == nil {
			ar.Status = "skipped"
			ar.Message = fmt.Sprintf("%s: %s relative budget skipped: no base report (pass --base-report)", model, label)
		} else {
			ar.Base, ar.HasBase = m.get(base.Totals), true
			ch := change(m.Name, ar.Base, head)
			over := ch.Delta > 0 && (ch.Rel == nil || *ch.Rel > a.MaxIncrease)
			if over {
				ar.Status = "fail"
				ar.Message = fmt.Sprintf("%s: %s rose from %s to %s (%s%s), more than the allowed +%g%%", model, label, Format(ar.Base, m), Format(head, m), signed(ch.Delta, m), relText(ch.Rel), a.MaxIncrease*100)
			} else {
				ar.Status = "pass"
				ar.Message = fmt.Sprintf("%s: %s %s → %s (%s%s) within +%g%%", model, label, Format(ar.Base, m), Format(head, m), signed(ch.Delta, m), relText(ch.Rel), a.MaxIncrease*100)
			}
		}
		out = append(out, ar)
	}
	return out
}

// intervalVerdict places limit against the interval [lo, hi].
func intervalVerdict(lo, hi, limit float64) string {
	switch {
	case lo > limit:
		return "beyond"
	case hi > limit:
		return "inside"
	}
	return "clear"
}

// intervalWords says each verdict for a message.
var intervalWords = map[string]string{
	"beyond": "over the budget beyond the interval",
	"inside": "the budget lies inside the interval",
	"clear":  "within the budget across the interval",
}
