package gate

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/cost/render"
)

// CommentMarker is a hidden line in every Markdown comment so that a bot
// can find its previous comment and update it in place.
const CommentMarker = "<!-- onnxcost-report -->"

// maxNodeRows bounds the changed-node tables.
const maxNodeRows = 15

var clean, md = render.Clean, render.MarkdownEscape

// WriteCheckText prints one line per assertion and a verdict.
func WriteCheckText(w io.Writer, res *CheckResult) {
	for _, m := range res.Models {
		fmt.Fprintf(w, "%s (%s)\n", clean(m.Name), clean(reportLine(m)))
		for _, a := range m.Results {
			mark := map[string]string{"pass": "ok  ", "fail": "FAIL", "skipped": "skip"}[a.Status]
			if a.Status == "fail" && a.Level == Warn {
				mark = "warn"
			}
			fmt.Fprintf(w, "  %s %s:%d  %s\n", mark, clean(res.BudgetFile), a.Line, clean(a.Message))
		}
	}
	fmt.Fprintf(w, "%s\n", verdictLine(res))
}

func reportLine(m ModelResult) string {
	if m.Report == nil {
		return "no report"
	}
	r := m.Report
	line := fmt.Sprintf("GPU %s, %s, %s", r.GPU, r.DType, render.PricedText(r, " · "))
	if name := r.CalibrationName(); name != "" {
		line += ", calibrated by " + name
	}
	return line
}

func verdictLine(res *CheckResult) string {
	switch res.Verdict {
	case "fail":
		return fmt.Sprintf("onnxcost check: FAIL — %d budget(s) exceeded, %d warning(s)", res.Errors, res.Warnings)
	case "warn":
		return fmt.Sprintf("onnxcost check: pass with %d warning(s)", res.Warnings)
	case "error":
		return "onnxcost check: ERROR — " + res.Error
	}
	return "onnxcost check: pass — all budgets met"
}

// WriteCheckMarkdown writes a PR comment: verdict, a base/head/Δ/budget
// table with ✅/❌, the top changed nodes folded in <details>, provenance,
// and the hidden marker.
func WriteCheckMarkdown(w io.Writer, res *CheckResult) {
	fmt.Fprintln(w, CommentMarker)
	if res.Verdict == "error" {
		fmt.Fprintf(w, "### 💥 onnxcost check: error\n\n%s\n\n<sub>onnxcost %s · budget file %s</sub>\n", md(res.Error), md(res.ToolVersion), md(res.BudgetFile))
		return
	}
	icon := map[string]string{"pass": "✅", "warn": "⚠️", "fail": "❌"}[res.Verdict]
	fmt.Fprintf(w, "### %s %s\n\n", icon, md(verdictLine(res)))
	fmt.Fprintln(w, "| model | metric | base | head | Δ | budget | |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---|:-:|")
	for _, m := range res.Models {
		for _, a := range m.Results {
			met, _ := LookupMetric(a.Metric)
			base, delta := "—", "—"
			if a.HasBase {
				base = Format(a.Base, met)
				ch := change(met.Name, a.Base, a.Head)
				delta = md(signed(ch.Delta, met) + relText(ch.Rel))
			} else if m.Base != nil {
				b := met.get(m.Base.Totals)
				base = Format(b, met)
				ch := change(met.Name, b, a.Head)
				delta = md(signed(ch.Delta, met) + relText(ch.Rel))
			}
			metric := a.Metric
			if a.Scope != "" {
				metric += " (" + a.Scope + ")"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", md(m.Name), metric, base, Format(a.Head, met), delta, md(a.Limit+levelSuffix(a.Level)), statusIcon(a))
		}
	}
	// The PR comment is where CI users read the result, so the estimate's
	// warnings (a symbol assumed 1 sets every number above) are shown.
	sep := "\n"
	for _, m := range res.Models {
		if m.Report == nil {
			continue
		}
		for _, x := range m.Report.Warnings {
			fmt.Fprintf(w, "%s> ⚠️ %s: %s\n", sep, md(m.Name), md(x))
			sep = ""
		}
	}
	for _, m := range res.Models {
		if m.Diff != nil && len(m.Diff.Nodes) > 0 {
			fmt.Fprintf(w, "\n<details><summary>%s: top changed nodes</summary>\n\n", md(m.Name))
			writeNodeTable(w, m.Diff)
			fmt.Fprintln(w, "\n</details>")
		}
	}
	fmt.Fprintln(w)
	writeProvenance(w, res)
}

func levelSuffix(l Level) string {
	if l == Warn {
		return " (warn)"
	}
	return ""
}

func statusIcon(a AssertResult) string {
	switch {
	case a.Status == "skipped":
		return "➖"
	case a.Failed():
		return "❌"
	case a.Warned():
		return "⚠️"
	}
	return "✅"
}

func writeProvenance(w io.Writer, res *CheckResult) {
	for _, m := range res.Models {
		if m.Report != nil {
			r := m.Report
			fmt.Fprintf(w, "<sub>onnxcost %s · cost model %s · GPU %s (spec %s) · %s · %s%s</sub>\n", md(r.ToolVersion), md(r.CostModelVersion), md(r.GPU), md(r.GPUSpecHash), md(r.DType), md(render.PricedText(r, " · ")), md(calibrationsText(res)))
			return
		}
	}
}

// calibrationsText names the calibrations the models' budgets were
// checked with (" · calibrated by a.yaml, b.yaml"), "" when none was: a
// budget met or missed by a calibrated estimate should say so.
func calibrationsText(res *CheckResult) string {
	var names []string
	for _, m := range res.Models {
		if m.Report == nil {
			continue
		}
		if name := m.Report.CalibrationName(); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " · calibrated by " + strings.Join(names, ", ")
}

func writeNodeTable(w io.Writer, d *ReportDiff) {
	fmt.Fprintln(w, "| node | op | status | base time | head time | Δ time |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|")
	for i, n := range d.Nodes {
		if i == maxNodeRows {
			fmt.Fprintf(w, "| … %d more | | | | | |\n", len(d.Nodes)-maxNodeRows)
			break
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", md(nodeLabel(n)), md(n.OpType), n.Status, render.Seconds(n.BaseTimeS), render.Seconds(n.HeadTimeS), signedSeconds(n.DeltaTimeS))
	}
}

// nodeLabel names a changed node, and its head name when it was matched
// by structure under another one.
func nodeLabel(n NodeChange) string {
	if n.HeadName != "" {
		return n.Name + " → " + n.HeadName
	}
	return n.Name
}

func signedSeconds(s float64) string {
	if s >= 0 {
		return "+" + render.Seconds(s)
	}
	return "-" + render.Seconds(-s)
}

// pricedUnder names the GPU, dtype and runtime the two sides were priced
// with, each once where both agree and as base → head where they differ
// (a warning says why that matters): "A100-SXM4-80GB · fp32 · runtime
// onnxruntime". "" for counts without a GPU on both sides.
func pricedUnder(b, h Provenance) string {
	if b.GPU == "" && h.GPU == "" {
		return ""
	}
	pair := func(x, y string) string {
		x, y = orDefault(x, "none"), orDefault(y, "none")
		if x == y {
			return x
		}
		return x + " → " + y
	}
	s := fmt.Sprintf("%s · %s · runtime %s", pair(b.GPU, h.GPU), pair(b.DType, h.DType), pair(b.Runtime, h.Runtime))
	if b.Warm || h.Warm {
		s += " · " + pair(callText(b.Warm), callText(h.Warm))
	}
	if b.Train != nil || h.Train != nil {
		s += " · " + pair(stepText(b.Train), stepText(h.Train))
	}
	return s
}

// WriteDiffText prints totals and the top changed nodes. The warnings are
// not repeated here: the command prints them on stderr, where every
// warning goes.
func WriteDiffText(w io.Writer, d *ReportDiff, violations []string) {
	fmt.Fprintf(w, "base %s · head %s", clean(d.Base.Model), clean(d.Head.Model))
	if where := pricedUnder(d.Base, d.Head); where != "" {
		fmt.Fprintf(w, " · %s", clean(where))
	}
	if c := d.Head.Calibration; c != "" && c == d.Base.Calibration {
		// Both sides' times are the calibration's (different ones are a
		// warning of their own).
		fmt.Fprintf(w, " · both calibrated by %s", clean(d.Head.CalibrationFile))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-12s %14s %14s %14s %9s\n", "metric", "base", "head", "Δ", "Δ%")
	for _, c := range d.Totals {
		m, _ := LookupMetric(c.Metric)
		fmt.Fprintf(w, "%-12s %14s %14s %14s %9s\n", c.Metric, Format(c.Base, m), Format(c.Head, m), signed(c.Delta, m), relPercent(c.Rel))
	}
	if len(d.Nodes) > 0 {
		fmt.Fprintf(w, "\nchanged nodes (largest time change first):\n")
		for i, n := range d.Nodes {
			if i == maxNodeRows {
				fmt.Fprintf(w, "  … %d more\n", len(d.Nodes)-maxNodeRows)
				break
			}
			fmt.Fprintf(w, "  %-8s %-40s %-18s %12s → %-12s %s\n", n.Status, clean(nodeLabel(n)), clean(n.OpType), render.Seconds(n.BaseTimeS), render.Seconds(n.HeadTimeS), signedSeconds(n.DeltaTimeS))
		}
	}
	for _, v := range violations {
		fmt.Fprintf(w, "FAIL %s\n", clean(v))
	}
}

func relPercent(r *float64) string {
	if r == nil {
		return "new"
	}
	if math.Abs(*r) < 0.0005 {
		return "0%"
	}
	return fmt.Sprintf("%+.1f%%", *r*100)
}

// WriteDiffMarkdown writes a diff as a PR comment.
func WriteDiffMarkdown(w io.Writer, d *ReportDiff, violations []string) {
	fmt.Fprintln(w, CommentMarker)
	if len(violations) > 0 {
		fmt.Fprintf(w, "### ❌ onnxcost diff: %d condition(s) failed\n\n", len(violations))
	} else {
		fmt.Fprintf(w, "### ✅ onnxcost diff\n\n")
	}
	if where := pricedUnder(d.Base, d.Head); where != "" {
		fmt.Fprintf(w, "%s\n\n", md(where))
	}
	for _, x := range d.Warnings {
		fmt.Fprintf(w, "> ⚠️ %s\n\n", md(x))
	}
	fmt.Fprintln(w, "| metric | base | head | Δ | Δ% |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, c := range d.Totals {
		m, _ := LookupMetric(c.Metric)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", c.Metric, Format(c.Base, m), Format(c.Head, m), signed(c.Delta, m), relPercent(c.Rel))
	}
	for _, v := range violations {
		fmt.Fprintf(w, "\n- ❌ %s", md(v))
	}
	if len(violations) > 0 {
		fmt.Fprintln(w)
	}
	if len(d.Nodes) > 0 {
		fmt.Fprintf(w, "\n<details><summary>Top changed nodes</summary>\n\n")
		writeNodeTable(w, d)
		fmt.Fprintln(w, "\n</details>")
	}
	fmt.Fprintf(w, "\n<sub>base: %s (onnxcost %s, cost model %s, GPU %s) · head: %s (onnxcost %s, cost model %s, GPU %s)</sub>\n",
		md(d.Base.Model), md(d.Base.ToolVersion), md(d.Base.CostModelVersion), md(d.Base.GPU),
		md(d.Head.Model), md(d.Head.ToolVersion), md(d.Head.CostModelVersion), md(d.Head.GPU))
}

// junit types: the JUnit XML that Jenkins' xunit plugin validates against
// its junit-10.xsd, in the schema's order. testsuite requires name and
// tests; errors, skipped and time are written too because readers that
// follow Ant's DTD require them. The check times no assertion on its own,
// so every time is 0 rather than a made-up figure.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Time     string       `xml:"time,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Classname string        `xml:"classname,attr"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// junitTime is every time attribute: see the junit types.
const junitTime = "0"

// WriteJUnit writes one test case per model × assertion. Warn-level
// failures pass with the message in system-out; skipped relative budgets
// are <skipped/>. A check that could not run (verdict "error") is one
// test case in <error>.
func WriteJUnit(w io.Writer, res *CheckResult) error {
	s := junitSuites{Name: "onnxcost", Time: junitTime}
	if res.Verdict == "error" {
		msg := xmlSafe(res.Error)
		c := junitCase{Name: "check", Time: junitTime, Classname: "onnxcost", Error: &junitMessage{Message: msg, Type: "error", Text: msg}}
		s.Tests, s.Errors = 1, 1
		s.Suites = []junitSuite{{Name: "onnxcost", Tests: 1, Errors: 1, Time: junitTime, Cases: []junitCase{c}}}
	}
	for _, m := range res.Models {
		suite := junitSuite{Name: xmlSafe(m.Name), Time: junitTime}
		for _, a := range m.Results {
			c := junitCase{Name: xmlSafe(a.Metric + " " + a.Kind), Time: junitTime, Classname: xmlSafe("onnxcost." + m.Name)}
			msg := xmlSafe(a.Message)
			switch {
			case a.Failed():
				c.Failure = &junitMessage{Message: msg, Type: "budget", Text: fmt.Sprintf("%s:%d: %s", xmlSafe(res.BudgetFile), a.Line, msg)}
				suite.Failures++
			case a.Status == "skipped":
				c.Skipped = &junitMessage{Message: msg}
				suite.Skipped++
			default:
				c.SystemOut = msg
			}
			suite.Cases = append(suite.Cases, c)
			suite.Tests++
		}
		s.Tests += suite.Tests
		s.Failures += suite.Failures
		s.Suites = append(s.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// xmlSafe drops characters XML 1.0 cannot hold at all (encoding/xml
// escapes the rest).
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == 0x9 || r == 0xA || r == 0xD || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF) {
			return r
		}
		return '\uFFFD'
	}, s)
}

// WriteAnnotations prints GitHub Actions ::error commands, one per
// error-level failure, pointing at the budget line, or one for a check
// that could not run. GitHub attaches an annotation to a file named
// relative to the repository root, so the budget file is named relative
// to root ($GITHUB_WORKSPACE; see AnnotationPath), not to the folder
// the check ran in.
func WriteAnnotations(w io.Writer, res *CheckResult, root string) {
	file := ghProperty(AnnotationPath(res.BudgetFile, root))
	if res.Verdict == "error" {
		fmt.Fprintf(w, "::error file=%s,title=%s::%s\n", file, ghProperty("onnxcost check"), ghData(res.Error))
	}
	for _, m := range res.Models {
		for _, a := range m.Results {
			if !a.Failed() {
				continue
			}
			fmt.Fprintf(w, "::error file=%s,line=%d,title=%s::%s\n", file, a.Line, ghProperty("onnxcost budget"), ghData(a.Message))
		}
	}
}

// AnnotationPath names file (relative to the working directory, or
// absolute) relative to root, with slashes. It returns file unchanged when
// root is empty or file lies outside root.
func AnnotationPath(file, root string) string {
	if root == "" {
		return file
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return file
	}
	rel := func(root, abs string) (string, bool) {
		r, err := filepath.Rel(root, abs)
		return filepath.ToSlash(r), err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
	}
	if r, ok := rel(root, abs); ok {
		return r
	}
	// One of the two may reach the folder through a symbolic link
	// (macOS runners' /var is /private/var).
	rr, err1 := filepath.EvalSymlinks(root)
	ad, err2 := filepath.EvalSymlinks(filepath.Dir(abs))
	if err1 == nil && err2 == nil {
		if r, ok := rel(rr, filepath.Join(ad, filepath.Base(abs))); ok {
			return r
		}
	}
	return file
}

// ghData escapes a workflow-command message so that it cannot end the
// command or start another (the runner unescapes %25, %0D, %0A).
func ghData(s string) string {
	r := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	return r.Replace(s)
}

// ghProperty escapes a workflow-command property value.
func ghProperty(s string) string {
	r := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
	return r.Replace(s)
}
