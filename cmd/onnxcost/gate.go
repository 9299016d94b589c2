package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/gate"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/spf13/cobra"
)

func init() {
	register("diff", newDiffCmd)
	register("check", newCheckCmd)
	register("budget", newBudgetCmd)
}

// outFlags are the report files one run can write besides stdout.
type outFlags struct {
	json, markdown, junit string
}

func (o *outFlags) add(c *cobra.Command, junit bool) {
	c.Flags().StringVar(&o.json, "out-json", "", "also write the result as JSON to `FILE`")
	c.Flags().StringVar(&o.markdown, "out-markdown", "", "also write a Markdown PR comment to `FILE`")
	if junit {
		c.Flags().StringVar(&o.junit, "out-junit", "", "also write JUnit XML (one test case per model × assertion) to `FILE`")
	}
}

// diffSide is one argument of diff: a model, estimated with the flags, or
// the reports a saved JSON file holds (one for 'report --format json', one
// per model for 'check --out-json').
type diffSide struct {
	path    string
	saved   bool
	reports []savedReport
}

// savedReport is one report of a saved file, with the name the budget gave
// its model ("" for a plain saved report).
type savedReport struct {
	name string
	r    *report.Report
}

// loadDiffSide estimates a model file or reads a saved JSON file.
func loadDiffSide(path string, f *costFlags) (*diffSide, error) {
	data, isJSON, err := sniffJSON(path)
	if err != nil {
		return nil, err
	}
	if !isJSON {
		r, _, err := estimate(path, f)
		if err != nil {
			return nil, err
		}
		return &diffSide{path: path, reports: []savedReport{{r: r}}}, nil
	}
	rs, err := decodeSaved(data)
	if err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	return &diffSide{path: path, saved: true, reports: rs}, nil
}

// pick returns the side's report: its only one, or, for a saved check
// result of several models, the one that is the other side's model (by
// budget name, path or file name). A flag that cannot apply to a saved
// report is warned about on stderr.
func (s *diffSide) pick(other *diffSide, f *costFlags, stderr io.Writer) (*report.Report, error) {
	r := s.reports[0].r
	if len(s.reports) > 1 {
		var err error
		if r, err = s.match(other); err != nil {
			return nil, err
		}
	}
	if s.saved {
		for _, m := range savedMismatches(r, f) {
			fmt.Fprintf(stderr, "onnxcost: warning: %s is a saved report; %s does not apply to it (it was computed with %s)\n", s.path, m.flag, m.saved)
		}
	}
	return r, nil
}

// match finds the report of s (a check result of several models) whose
// model the other side names.
func (s *diffSide) match(other *diffSide) (*report.Report, error) {
	list := checkResultOf(s.reports)
	if len(other.reports) > 1 {
		return nil, usageErr("%s: %s, and %s holds several too: diff one model against a saved check result, or save one model with 'report --format json'", s.path, list, other.path)
	}
	want := other.reports[0].r.Model
	var hits []*report.Report
	for _, c := range s.reports {
		m := c.r.Model
		if c.name == want || m == want || filepath.Base(m) == filepath.Base(want) {
			hits = append(hits, c.r)
		}
	}
	if len(hits) != 1 {
		return nil, usageErr("%s: %s; none or more than one is the model of %s (%s): diff it against that model's file, or save one model with 'report --format json'", s.path, list, other.path, want)
	}
	return hits[0], nil
}

// mismatch is a flag a saved report contradicts.
type mismatch struct{ flag, saved string }

// savedMismatches lists the flags given that a saved report was not
// computed with: a saved report holds its numbers, it cannot be re-costed
// for another GPU, dtype, plan or binding.
func savedMismatches(r *report.Report, f *costFlags) []mismatch {
	var out []mismatch
	if f.gpu != "" {
		g, err := resolveGPU(f.gpu, f.gpuFile)
		if err != nil || g.Name != r.GPU {
			out = append(out, mismatch{"--gpu " + f.gpu, "GPU " + r.GPU})
		}
	}
	if d := strings.ToLower(strings.TrimSpace(f.dtype)); d != "" && d != r.DType {
		out = append(out, mismatch{"--dtype " + f.dtype, "dtype " + r.DType})
	}
	if f.given("runtime") || f.given("runtime-file") {
		saved := hwdb.DefaultRuntime + " (written before runtime profiles)"
		if r.Runtime != nil {
			saved = r.Runtime.Name
		}
		if r.Runtime == nil || !strings.EqualFold(f.runtime, r.Runtime.Name) || f.given("runtime-file") {
			out = append(out, mismatch{"--runtime " + f.runtime, "runtime " + saved})
		}
	}
	if f.given("plan") && f.plan != r.Plan {
		out = append(out, mismatch{"--plan " + f.plan, "plan " + r.Plan})
	}
	if f.given("batch") {
		ok := false
		for k, v := range r.Bindings {
			ok = ok || pipeline.IsBatchName(k) && v == f.batch
		}
		if !ok {
			out = append(out, mismatch{fmt.Sprintf("--batch %d", f.batch), "bindings " + bindingText(r.Bindings)})
		}
	}
	if dims, err := parseDims(f.dims); err == nil {
		for _, k := range sortedKeys(dims) {
			if v, ok := r.Bindings[k]; !ok || v != dims[k] {
				out = append(out, mismatch{fmt.Sprintf("--dim %s=%d", k, dims[k]), "bindings " + bindingText(r.Bindings)})
			}
		}
	}
	return out
}

// bindingText prints bindings as k=v, sorted ("none" when empty).
func bindingText(b map[string]int64) string {
	if len(b) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(b))
	for _, k := range sortedKeys(b) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, b[k]))
	}
	return strings.Join(parts, " ")
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sniffJSON reads small files to tell a saved report from a model; it
// does not read a model (which may be large) into memory.
func sniffJSON(path string) (data []byte, isJSON bool, err error) {
	if pipeline.IsZoo(path) {
		return nil, false, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, false, usageErr("%s: %v", path, errors.Unwrap(err))
	}
	defer fh.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(fh, head)
	trimmed := bytes.TrimLeft(head[:n], " \t\r\n\xef\xbb\xbf")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, false, nil
	}
	rest, err := io.ReadAll(io.LimitReader(fh, 1<<30))
	if err != nil {
		return nil, false, usageErr("%s: %v", path, err)
	}
	return append(head[:n], rest...), true, nil
}

// decodeReport reads a saved `report --format json`, or a saved `check
// --out-json` of one model.
func decodeReport(data []byte) (*report.Report, error) {
	rs, err := decodeSaved(data)
	if err != nil {
		return nil, err
	}
	if len(rs) > 1 {
		return nil, fmt.Errorf("%s, not one report: save one model with 'report --format json'", checkResultOf(rs))
	}
	return rs[0].r, nil
}

// checkResultOf describes a saved check result's reports in messages: "a
// check result of N models (a, b, c)".
func checkResultOf(rs []savedReport) string {
	names := make([]string, len(rs))
	for i, c := range rs {
		names[i] = c.name
	}
	return fmt.Sprintf("a check result of %d models (%s)", len(rs), strings.Join(names, ", "))
}

// decodeSaved reads the reports of a saved JSON file: one for `report
// --format json`; for `check --out-json`, the head report of every model
// it checked, under the budget's name for it. Both are "saved reports" to
// the user (the README's CI section saves the baseline with check), so
// both are read wherever a saved report is.
func decodeSaved(data []byte) ([]savedReport, error) {
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
		var chk gate.CheckResult
		if err := json.Unmarshal(data, &chk); err != nil {
			return nil, fmt.Errorf("not a valid saved check result: %w", err)
		}
		var out []savedReport
		for _, m := range chk.Models {
			if m.Report != nil {
				out = append(out, savedReport{name: m.Name, r: m.Report})
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
	return []savedReport{{r: &r}}, nil
}

func newDiffCmd(stdout, stderr io.Writer) *cobra.Command {
	var f costFlags
	var failOn, format string
	var out outFlags
	c := &cobra.Command{
		Use:   "diff BASE HEAD",
		Short: "Compare two models or saved JSON reports; --fail-on turns it into a check",
		Long: `diff compares BASE and HEAD, each an .onnx model (estimated with --gpu and the
other flags), a JSON report saved by 'onnxcost report --format json', or a
check result saved by 'onnxcost check --out-json' (of several models, the
one the other side is).
It prints totals base/head/Δ/Δ% and the nodes that changed most (matched
by name, then by structure). With --fail-on it exits 1 when a condition
holds, e.g. --fail-on 'time>+5%,launches>+0,flops>+2%,peak_memory>+10%'.
A condition is METRIC>+N% (relative increase), METRIC>+N[unit] (absolute
increase) or METRIC>N[unit] (head value). Metrics: time, flops, macs,
bytes, launches, params, param_bytes, peak_memory, energy.`,
		Args: exactArgs(2, "BASE and HEAD"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json", "markdown"); err != nil {
				return err
			}
			var conds []gate.Condition
			if failOn != "" {
				var err error
				if conds, err = gate.ParseConditions(failOn); err != nil {
					return usageErr("%v", err)
				}
			}
			f.dumpTo = stderr
			bs, err := loadDiffSide(args[0], &f)
			if err != nil {
				return err
			}
			hs, err := loadDiffSide(args[1], &f)
			if err != nil {
				return err
			}
			base, err := bs.pick(hs, &f, stderr)
			if err != nil {
				return err
			}
			head, err := hs.pick(bs, &f, stderr)
			if err != nil {
				return err
			}
			d := gate.Diff(base, head)
			var violations []string
			for _, cnd := range conds {
				if holds, moved := cnd.Holds(d.ChangeFor(cnd.Metric.Name)); holds {
					violations = append(violations, fmt.Sprintf("%s: %s", cnd.Text, moved))
				}
			}
			printWarnings(stderr, d.Warnings)
			result := struct {
				*gate.ReportDiff
				FailOn     string   `json:"fail_on,omitempty"`
				Violations []string `json:"violations"`
			}{d, failOn, nonNil(violations)}
			if err := writeOutputs(out, func(w io.Writer) error { return writeJSON(w, result) },
				func(w io.Writer) error { gate.WriteDiffMarkdown(w, d, violations); return nil }, nil); err != nil {
				return err
			}
			switch format {
			case "json":
				err = writeJSON(stdout, result)
			case "markdown":
				gate.WriteDiffMarkdown(stdout, d, violations)
			default:
				gate.WriteDiffText(stdout, d, violations)
			}
			if err != nil {
				return err
			}
			if len(violations) > 0 {
				return failErr("diff: %d --fail-on condition(s) hold", len(violations))
			}
			return nil
		},
	}
	f.add(c)
	c.Flags().StringVar(&failOn, "fail-on", "", "exit 1 when a condition holds, e.g. 'time>+5%,launches>+0'")
	c.Flags().StringVar(&format, "format", "text", "output format: text|json|markdown")
	out.add(c, false)
	return c
}

// writeOutputs writes the requested side files, each atomically.
func writeOutputs(out outFlags, jsonW, mdW, junitW func(io.Writer) error) error {
	for _, o := range []struct {
		path  string
		write func(io.Writer) error
	}{{out.json, jsonW}, {out.markdown, mdW}, {out.junit, junitW}} {
		if o.path == "" || o.write == nil {
			continue
		}
		var buf bytes.Buffer
		if err := o.write(&buf); err != nil {
			return err
		}
		if err := writeFileAtomic(o.path, buf.Bytes()); err != nil {
			return usageErr("%s: %v", o.path, err)
		}
	}
	return nil
}

// writeFileAtomic writes to a temporary file beside path and renames it,
// so a reader never sees half a file. It never creates folders: a typo in
// -o must be an error, not a new directory tree.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("folder %s does not exist", dir)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Chmod(name, 0o644); err != nil {
		os.Remove(name)
		return err
	}
	return os.Rename(name, path)
}

func newCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	var configPath, baseReport string
	var out outFlags
	var pf passFlags
	c := &cobra.Command{
		Use:   "check [-c .onnxcost.yaml] [--base-report FILE]",
		Short: "Check every model of a budget file; exit 1 if an error-level budget is exceeded",
		Long: `check estimates every model listed in the budget file and tests its
assertions: absolute limits (max: "1.8 ms") and, given --base-report (a
saved 'report --format json' or 'check --out-json'), relative ones
(max_increase: 5%). Exit 0: pass (warnings printed); 1: an error-level
budget failed; 2: bad budget file or unreadable model. Under GitHub
Actions (GITHUB_ACTIONS=true) it also appends the Markdown to
$GITHUB_STEP_SUMMARY and prints ::error annotations on the budget lines.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			pf.dumpTo = stderr
			b, err := gate.LoadBudget(configPath)
			if err != nil {
				return usageErr("%v", err)
			}
			reports := map[string]*report.Report{}
			prog := startProgress("check", len(b.Models))
			for _, mb := range b.Models {
				prog.Phase(mb.Name)
				r, err := estimateBudgetModel(b, mb, pf)
				if err != nil {
					prog.Stop()
					return err
				}
				reports[mb.Name] = r
				prog.Add(1)
			}
			prog.Stop()
			// After the progress line is gone, in budget order: a symbol
			// assumed 1 changes every number the budgets are tested on.
			for _, mb := range b.Models {
				printModelWarnings(stderr, mb.Name, reports[mb.Name].Warnings)
			}
			bases := map[string]*report.Report{}
			if baseReport != "" {
				if bases, err = loadBases(baseReport, b); err != nil {
					return err
				}
			}
			res := gate.Evaluate(b, version, reports, bases)
			md := func(w io.Writer) error { gate.WriteCheckMarkdown(w, res); return nil }
			if err := writeOutputs(out, func(w io.Writer) error { return writeJSON(w, res) }, md,
				func(w io.Writer) error { return gate.WriteJUnit(w, res) }); err != nil {
				return err
			}
			gate.WriteCheckText(stdout, res)
			if os.Getenv("GITHUB_ACTIONS") == "true" {
				gate.WriteAnnotations(stdout, res)
				if p := os.Getenv("GITHUB_STEP_SUMMARY"); p != "" {
					if err := appendFile(p, md); err != nil {
						fmt.Fprintf(stderr, "onnxcost: warning: cannot append to GITHUB_STEP_SUMMARY %s: %v\n", p, err)
					}
				}
			}
			if res.Errors > 0 {
				return failErr("check: %d budget(s) exceeded", res.Errors)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&configPath, "config", "c", ".onnxcost.yaml", "budget `FILE` (YAML or JSON)")
	c.Flags().StringVar(&baseReport, "base-report", "", "saved JSON report(s) to test max_increase budgets against")
	out.add(c, true)
	pf.add(c)
	return c
}

func appendFile(path string, write func(io.Writer) error) error {
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// estimateBudgetModel estimates one budget entry with its settings; the
// model path is relative to the budget file's folder.
func estimateBudgetModel(b *gate.Budget, mb gate.ModelBudget, pf passFlags) (*report.Report, error) {
	s := mb.Settings
	if s.GPU == "" {
		s.GPU = strings.TrimSpace(os.Getenv(gpuEnv))
	}
	if s.GPU == "" {
		return nil, usageErr("%s:%d: model %s has no gpu (set defaults.gpu or gpu in the entry, or $%s)", b.File, mb.Line, mb.Name, gpuEnv)
	}
	path := mb.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(b.File), path)
	}
	f := costFlags{gpu: s.GPU, gpuFile: s.GPUFile, runtime: s.Runtime, runtimeFile: s.RuntimeFile, dtype: s.DType, plan: s.Plan, passFlags: pf}
	if f.plan == "" {
		f.plan = "fused"
	}
	if f.gpuFile != "" && !filepath.IsAbs(f.gpuFile) {
		f.gpuFile = filepath.Join(filepath.Dir(b.File), f.gpuFile)
	}
	if f.runtimeFile != "" && !filepath.IsAbs(f.runtimeFile) {
		f.runtimeFile = filepath.Join(filepath.Dir(b.File), f.runtimeFile)
	}
	f.batch = s.Batch
	names := make([]string, 0, len(s.Dims))
	for k := range s.Dims {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		f.dims = append(f.dims, fmt.Sprintf("%s=%d", k, s.Dims[k]))
	}
	r, l, err := estimate(path, &f)
	if err != nil {
		return nil, err
	}
	r.Model = mb.Path // as the budget names it, so reports compare across checkouts
	if l != nil && l.Infer != nil {
		budgetBindHints(r, l.Infer.Assumed, b, mb)
	}
	return r, nil
}

// budgetBindHints rewrites the hint of each "symbol S is unbound; assumed
// 1" warning for check, where no --batch or --dim flag exists: the binding
// goes in the budget file. The warning stays in the report, so the JSON
// carries it too.
func budgetBindHints(r *report.Report, assumed []string, b *gate.Budget, mb gate.ModelBudget) {
	for _, sym := range assumed {
		how := fmt.Sprintf("dims: {%s: N}", sym)
		if pipeline.IsBatchName(sym) {
			how = "batch: N or " + how
		}
		prefix := fmt.Sprintf("symbol %s is unbound; assumed 1", sym)
		for i, w := range r.Warnings {
			if strings.HasPrefix(w, prefix) {
				r.Warnings[i] = fmt.Sprintf("%s (bind it with %s in %s, under defaults or the model's entry at line %d)", prefix, how, b.File, mb.Line)
			}
		}
	}
}

// printModelWarnings prints a model's warnings on stderr under its name:
// budget init and check cost several models, and a warning that does not
// say which model it is about cannot be acted on.
func printModelWarnings(stderr io.Writer, model string, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(stderr, "onnxcost: warning: %s: %s\n", model, w)
	}
}

// loadBases reads --base-report: one saved report (matched to the model
// whose path or name it names, or to the only model), or a saved check
// result with a report per model.
func loadBases(path string, b *gate.Budget) (map[string]*report.Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("--base-report %s: %v", path, errors.Unwrap(err))
	}
	var chk gate.CheckResult
	if json.Unmarshal(data, &chk) == nil && len(chk.Models) > 0 {
		out := map[string]*report.Report{}
		for _, m := range chk.Models {
			if m.Report != nil {
				out[m.Name] = m.Report
			}
		}
		return out, nil
	}
	r, err := decodeReport(data)
	if err != nil {
		return nil, usageErr("--base-report %s: %v", path, err)
	}
	for _, mb := range b.Models {
		if r.Model == mb.Path || r.Model == mb.Name || filepath.Base(r.Model) == filepath.Base(mb.Path) {
			return map[string]*report.Report{mb.Name: r}, nil
		}
	}
	if len(b.Models) == 1 {
		return map[string]*report.Report{b.Models[0].Name: r}, nil
	}
	return nil, usageErr("--base-report %s: report of %q matches no model of %s", path, r.Model, b.File)
}

func newBudgetCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{Use: "budget", Short: "Create budget files for 'onnxcost check'"}
	var f costFlags
	var headroom, outPath string
	var force bool
	initCmd := &cobra.Command{
		Use:   "init MODEL.onnx... --gpu NAME [--headroom 10%]",
		Short: "Write a budget file from the current estimates plus headroom",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("budget init: name at least one model")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			h, err := gate.ParsePercent(headroom)
			if err != nil || h < 0 {
				return usageErr("--headroom %q: want a non-negative percentage like 10%%", headroom)
			}
			if !force {
				if _, err := os.Stat(outPath); err == nil {
					return usageErr("%s exists; pass --force to overwrite it", outPath)
				}
			}
			var entries []budgetEntry
			for _, p := range args {
				r, _, err := estimate(p, &f)
				if err != nil {
					return err
				}
				// The budget is written from these numbers: a symbol assumed
				// 1 (no --batch or --dim) sets every limit in it.
				printModelWarnings(stderr, p, r.Warnings)
				rel := p
				if r2, err := filepath.Rel(filepath.Dir(outPath), p); err == nil && !filepath.IsAbs(p) {
					rel = r2
				}
				entries = append(entries, budgetEntry{path: filepath.ToSlash(rel), report: r})
			}
			text := budgetYAML(&f, entries, h)
			if _, err := gate.ParseBudget(outPath, []byte(text)); err != nil {
				return fmt.Errorf("internal error: generated budget does not parse: %w", err)
			}
			if err := writeFileAtomic(outPath, []byte(text)); err != nil {
				return usageErr("%s: %v", outPath, err)
			}
			fmt.Fprintf(stdout, "wrote %s: %d model(s), %s headroom\n", outPath, len(entries), headroom)
			return nil
		},
	}
	f.add(initCmd)
	initCmd.Flags().StringVar(&headroom, "headroom", "10%", "margin above the current estimates")
	initCmd.Flags().StringVarP(&outPath, "output", "o", ".onnxcost.yaml", "budget `FILE` to write")
	initCmd.Flags().BoolVar(&force, "force", false, "overwrite an existing budget file")
	root.AddCommand(initCmd)
	return root
}

type budgetEntry struct {
	path   string
	report *report.Report
}

// budgetYAML renders a budget file: settings as given on the command
// line, and for each model max limits at estimate × (1 + headroom),
// rounded up so the current model passes.
func budgetYAML(f *costFlags, entries []budgetEntry, headroom float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# onnxcost budget: 'onnxcost check' tests every model below.\n")
	fmt.Fprintf(&b, "# Generated by 'onnxcost budget init' with %g%% headroom; edit freely.\n", headroom*100)
	fmt.Fprintf(&b, "# Levels: error (exit 1), warn (printed), off. max_increase needs --base-report.\n")
	fmt.Fprintf(&b, "version: 1\ndefaults:\n  gpu: %s\n", yamlQuote(f.gpu))
	if f.gpuFile != "" {
		fmt.Fprintf(&b, "  gpu_file: %s\n", yamlQuote(f.gpuFile))
	}
	if f.runtime != "" && f.runtime != hwdb.DefaultRuntime {
		fmt.Fprintf(&b, "  runtime: %s\n", yamlQuote(f.runtime))
	}
	if f.runtimeFile != "" {
		fmt.Fprintf(&b, "  runtime_file: %s\n", yamlQuote(f.runtimeFile))
	}
	if f.dtype != "" {
		fmt.Fprintf(&b, "  dtype: %s\n", f.dtype)
	}
	fmt.Fprintf(&b, "  plan: %s\n", f.plan)
	if f.batch > 0 {
		fmt.Fprintf(&b, "  batch: %d\n", f.batch)
	}
	if dims, _ := parseDims(f.dims); len(dims) > 0 {
		fmt.Fprintf(&b, "  dims:\n")
		keys := make([]string, 0, len(dims))
		for k := range dims {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "    %s: %d\n", yamlQuote(k), dims[k])
		}
	}
	fmt.Fprintf(&b, "models:\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "  - path: %s\n    budgets:\n", yamlQuote(e.path))
		for _, name := range []string{"time", "flops", "launches", "peak_memory"} {
			m, _ := gate.LookupMetric(name)
			v := gate.MetricValue(m, e.report.Totals) * (1 + headroom)
			line := fmt.Sprintf("      %s: { max: %s", name, yamlQuote(ceilQuantity(v, m)))
			if name == "time" {
				line += `, max_increase: "5%"`
			}
			if name == "flops" {
				line += ", level: warn"
			}
			fmt.Fprintf(&b, "%s }\n", line)
		}
	}
	return b.String()
}

// ceilQuantity formats v in m's human unit, rounded up at 3 significant
// digits so that a budget never sits below the value it was made from.
func ceilQuantity(v float64, m *gate.Metric) string {
	if v <= 0 {
		return gate.Format(0, m)
	}
	if m.Unit == "" && v < 1e6 {
		return strconv.FormatFloat(math.Ceil(v), 'f', 0, 64) // a count
	}
	exp := math.Floor(math.Log10(v))
	step := math.Pow(10, exp-2)
	up := math.Ceil(v/step-1e-9) * step
	s := gate.Format(up, m)
	if q, err := gate.ParseQuantity(s, m); err != nil || q < v {
		// The display rounding lost the ceiling: fall back to exact base units.
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return s
}

func yamlQuote(s string) string { return strconv.Quote(s) }
