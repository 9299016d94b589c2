package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/cost/gate"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/config"
	"github.com/onnxcost/onnxcost/internal/outfile"
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

// loadDiffSide estimates a model file or reads a saved JSON file.
func loadDiffSide(path string, f *costFlags) (*gate.Side, error) {
	data, isJSON, err := gate.SniffJSON(path)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if !isJSON {
		r, _, err := estimate(path, f)
		if err != nil {
			return nil, err
		}
		return &gate.Side{Path: path, Reports: []gate.Saved{{Report: r}}}, nil
	}
	rs, err := gate.DecodeSaved(data)
	if err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	return &gate.Side{Path: path, Saved: true, Reports: rs}, nil
}

// oneRuntime prices both models of a diff under one runtime when none is
// named and each named its own (pipeline.ModelRuntime): a model holding
// operators only onnxruntime runs against one without (an ORT-optimized
// export against its source) is a change of model, not of runtime, so the
// side priced under the default is priced again under the other's. It
// returns a warning saying so ("" when nothing was priced again).
func oneRuntime(paths []string, sides []*gate.Side, f *costFlags) (string, error) {
	if strings.TrimSpace(f.runtime) != "" || sides[0].Saved || sides[1].Saved {
		return "", nil
	}
	name := func(s *gate.Side) string {
		if rt := s.Reports[0].Report.Runtime; rt != nil {
			return rt.Name
		}
		return "" // counted without a GPU
	}
	again := -1
	switch {
	case name(sides[0]) == name(sides[1]) || name(sides[0]) == "" || name(sides[1]) == "":
		return "", nil
	case name(sides[0]) == hwdb.DefaultRuntime:
		again = 0
	case name(sides[1]) == hwdb.DefaultRuntime:
		again = 1
	default:
		return "", nil // two onnxruntime profiles: Diff says they differ
	}
	g := *f
	g.runtime = name(sides[1-again])
	r, _, err := estimate(paths[again], &g)
	if err != nil {
		return "", err
	}
	sides[again].Reports = []gate.Saved{{Report: r}}
	which := [2]string{"base", "head"}
	return fmt.Sprintf("%s is priced under %s too, as %s is (%s holds operators only onnxruntime runs; the default is %s), so that the difference is the models' and not the runtimes'; --runtime names one runtime for both",
		which[again], g.runtime, which[1-again], which[1-again], hwdb.DefaultRuntime), nil
}

// pickSide returns s's report for a diff against other, warning on
// stderr about each flag that cannot apply to a saved report.
func pickSide(s, other *gate.Side, f *costFlags, stderr io.Writer) (*report.Report, error) {
	r, err := s.Pick(other)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if s.Saved {
		for _, m := range savedMismatches(r, f) {
			fmt.Fprintf(stderr, "onnxcost: warning: %s is a saved report; %s does not apply to it (it was computed with %s)\n", s.Path, m.Flag, m.Saved)
		}
	}
	return r, nil
}

// savedMismatches lists the given flags saved report r was not computed with.
func savedMismatches(r *report.Report, f *costFlags) []gate.Mismatch {
	q := gate.Requested{GPU: f.gpu, DType: f.dtype, Runtime: f.runtime,
		RuntimeGiven: f.given("runtime"), RuntimeFile: f.given("runtime-file")}
	if f.gpu != "" {
		if g, err := resolveGPU(f.gpu, f.gpuFile); err == nil {
			q.GPUName = g.Name
		}
	}
	if f.given("plan") {
		q.Plan = f.plan
	}
	if f.given("batch") {
		q.Batch = &f.batch
	}
	q.Dims, _ = parseDims(f.dims)
	return gate.Mismatches(r, q)
}

func newDiffCmd(stdout, stderr io.Writer) *cobra.Command {
	var f costFlags
	var failOn, format string
	var out outFlags
	c := &cobra.Command{
		Use: "diff BASE HEAD", Example: "  onnxcost diff testdata/models/resnet50.onnx testdata/models/resnet50_plus_block.onnx --gpu T4 --batch 1",
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
			if err := out.check(f.inputs(args...)...); err != nil {
				return err
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
			repriced, err := oneRuntime(args, []*gate.Side{bs, hs}, &f)
			if err != nil {
				return err
			}
			base, err := pickSide(bs, hs, &f, stderr)
			if err != nil {
				return err
			}
			head, err := pickSide(hs, bs, &f, stderr)
			if err != nil {
				return err
			}
			d := gate.Diff(base, head)
			if repriced != "" {
				d.Warnings = append(d.Warnings, repriced)
			}
			violations := d.Violations(conds)
			printWarnings(stderr, d.Warnings)
			result := gate.DiffResult{ReportDiff: d, FailOn: failOn, Violations: nonNil(violations)}
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
	f.addWarm(c)
	c.Flags().StringVar(&failOn, "fail-on", "", "exit 1 when a condition holds, e.g. 'time>+5%,launches>+0'")
	c.Flags().StringVar(&format, "format", "text", "output format: text|json|markdown")
	out.add(c, false)
	return c
}

// check refuses, before any work, a side file that would destroy
// something (refuseOutputs).
func (o *outFlags) check(inputs ...string) error {
	return refuseOutputs(inputs, outfile.Target{Flag: "--out-json", Path: o.json},
		outfile.Target{Flag: "--out-markdown", Path: o.markdown}, outfile.Target{Flag: "--out-junit", Path: o.junit})
}

// writeOutputs writes the requested side files: all of them or, when one
// fails, none.
func writeOutputs(out outFlags, jsonW, mdW, junitW func(io.Writer) error) error {
	return writeFiles(nil, outfile.File{Path: out.json, Write: jsonW}, outfile.File{Path: out.markdown, Write: mdW},
		outfile.File{Path: out.junit, Write: junitW})
}

func newCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	var configPath, baseReport string
	var out outFlags
	var pf passFlags
	c := &cobra.Command{
		Use: "check [-c .onnxcost.yaml] [--base-report FILE]", Example: "  onnxcost check\n  onnxcost check --out-markdown cost.md --out-junit cost.xml",
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
				return checkError(out, configPath, []string{configPath, baseReport}, usageErr("%v", err), stdout, stderr)
			}
			if err := out.check(b.Inputs(configPath, baseReport)...); err != nil {
				return err
			}
			reports := map[string]*report.Report{}
			prog := con.Start("check", len(b.Models))
			for _, mb := range b.Models {
				prog.Phase(mb.Name)
				r, err := estimateBudgetModel(b, mb, pf)
				if err != nil {
					prog.Stop()
					return checkError(out, b.File, b.Inputs(configPath, baseReport), err, stdout, stderr)
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
					return checkError(out, b.File, b.Inputs(configPath, baseReport), err, stdout, stderr)
				}
			}
			res := gate.Evaluate(b, version, reports, bases)
			if err := writeFiles(nil, gate.CheckFiles(res, out.json, out.markdown, out.junit)...); err != nil {
				return err
			}
			gate.WriteCheckText(stdout, res)
			gate.PublishActions(stdout, stderr, res)
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

// checkError writes err to each requested file for a later CI step (unless one is an input).
func checkError(out outFlags, budgetFile string, inputs []string, err error, stdout, stderr io.Writer) error {
	if out.check(inputs...) == nil {
		res := gate.ErrorResult(budgetFile, version, err)
		gate.PublishActions(stdout, stderr, res)
		return errors.Join(err, writeFiles(nil, gate.CheckFiles(res, out.json, out.markdown, out.junit)...))
	}
	return err
}

// estimateBudgetModel estimates one budget entry with its settings.
func estimateBudgetModel(b *gate.Budget, mb gate.ModelBudget, pf passFlags) (*report.Report, error) {
	path, s := b.Resolve(mb)
	if s.GPU == "" {
		s.GPU = strings.TrimSpace(os.Getenv(config.GPUEnv))
	}
	if s.GPU == "" {
		return nil, usageErr("%s:%d: model %s has no gpu (set defaults.gpu or gpu in the entry, or $%s)", b.File, mb.Line, mb.Name, config.GPUEnv)
	}
	f := costFlags{gpu: s.GPU, gpuFile: s.GPUFile, runtime: s.Runtime, runtimeFile: s.RuntimeFile, dtype: s.DType, plan: s.Plan, passFlags: pf, calibration: s.Calibration,
		powerCap: s.PowerCapW, smClock: s.SMClockMHz, gpus: gpuCount(s.GPUs), warm: s.WarmCall()}
	f.batch, f.inputData = s.Batch, s.InputData
	f.train, f.optimizer, f.checkpoint = s.Training(), s.Optimizer, s.Checkpoint
	f.gradAccum, f.dataParallel = int(s.GradAccum), int(s.DataParallel)
	for _, k := range slices.Sorted(maps.Keys(s.Dims)) {
		f.dims = append(f.dims, fmt.Sprintf("%s=%d", k, s.Dims[k]))
	}
	r, l, err := estimate(path, &f)
	if err != nil {
		return nil, err
	}
	r.Model = mb.Path // as the budget names it, so reports compare across checkouts
	if l != nil && l.Infer != nil {
		b.BindHints(r, mb, l.Infer.Assumed)
	}
	return r, nil
}

// printModelWarnings prints a model's warnings on stderr under its name:
// budget init and check cost several models, and a warning that does not
// say which model it is about cannot be acted on.
func printModelWarnings(stderr io.Writer, model string, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(stderr, "onnxcost: warning: %s: %s\n", model, w)
	}
}

// loadBases reads --base-report (see gate.Bases).
func loadBases(path string, b *gate.Budget) (map[string]*report.Report, error) {
	data, err := gate.ReadSaved(path)
	if err != nil {
		return nil, usageErr("--base-report %s: %v", path, err)
	}
	bases, err := gate.Bases(data, b)
	if err != nil {
		return nil, usageErr("--base-report %s: %v", path, err)
	}
	return bases, nil
}

func newBudgetCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{Use: "budget", Short: "Create budget files for 'onnxcost check'", Example: "  onnxcost budget init testdata/models/mobilenet_v2.onnx --gpu T4 --batch 1"}
	var f costFlags
	var headroom, outPath string
	var force bool
	initCmd := &cobra.Command{
		Use: "init MODEL.onnx... --gpu NAME [--headroom 10%]", Example: "  onnxcost budget init testdata/models/mobilenet_v2.onnx --gpu T4 --batch 1",
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
			// Before the --force test: -o naming a model must not read as
			// "pass --force to overwrite it".
			if err := refuseOutputs(f.inputs(args...), outfile.Target{Flag: "-o", Path: outPath}); err != nil {
				return err
			}
			if !force {
				if _, err := os.Stat(outPath); err == nil {
					return usageErr("%s exists; pass --force to overwrite it", outPath)
				}
			}
			var entries []gate.BudgetEntry
			for _, p := range args {
				r, _, err := estimate(p, &f)
				if err != nil {
					return err
				}
				// The budget is written from these numbers: a symbol assumed
				// 1 (no --batch or --dim) sets every limit in it.
				printModelWarnings(stderr, p, r.Warnings)
				rel := p
				if !pipeline.IsZoo(p) {
					rel = relativeTo(filepath.Dir(outPath), p)
				}
				entries = append(entries, gate.BudgetEntry{Path: rel, Report: r})
			}
			d, err := budgetDefaults(&f, filepath.Dir(outPath))
			if err != nil {
				return err
			}
			text := gate.BudgetYAML(d, entries, h)
			if _, err := gate.ParseBudget(outPath, []byte(text)); err != nil {
				return fmt.Errorf("internal error: generated budget does not parse: %w", err)
			}
			if err := writeOut(outPath, []byte(text), f.inputs(args...)...); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s: %d model(s), %s headroom\n", outPath, len(entries), headroom)
			// check takes the pass flags itself; a budget does not hold them.
			for _, name := range []string{"passes", "disable"} {
				if f.given(name) {
					printWarnings(stderr, []string{fmt.Sprintf("--%s is not written into %s: give it to every 'onnxcost check' of it, or check prices the default passes against limits set with it", name, outPath)})
				}
			}
			return nil
		},
	}
	f.add(initCmd)
	f.addWarm(initCmd)
	initCmd.Flags().StringVar(&headroom, "headroom", "10%", "margin above the current estimates")
	initCmd.Flags().StringVarP(&outPath, "output", "o", ".onnxcost.yaml", "budget `FILE` to write")
	initCmd.Flags().BoolVar(&force, "force", false, "overwrite an existing budget file")
	root.AddCommand(initCmd)
	return root
}

// relativeTo is path p, given relative to the working folder (or
// absolute), as a file in folder dir names it: relative to dir (with
// forward slashes) where p was relative, else as given. A budget file
// names its models and files so, and check resolves them against its
// own folder.
func relativeTo(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	absDir, err1 := filepath.Abs(dir)
	absP, err2 := filepath.Abs(p)
	if err1 != nil || err2 != nil {
		return p
	}
	r, err := filepath.Rel(absDir, absP)
	if err != nil {
		return absP
	}
	return filepath.ToSlash(r)
}

// budgetDefaults are the defaults a generated budget writes: every cost
// flag the estimates were priced with (check prices the budget's
// settings, so a flag left out would gate another estimate than the one
// the limits came from), the files relative to the budget's folder
// (dir), as check reads them.
func budgetDefaults(f *costFlags, dir string) (gate.Settings, error) {
	rel := func(p string) string { return relativeTo(dir, p) }
	d := gate.Settings{GPU: f.gpu, GPUFile: rel(f.gpuFile), RuntimeFile: rel(f.runtimeFile), Calibration: rel(f.calibration),
		DType: f.dtype, Plan: f.plan, Batch: f.batch, InputData: rel(f.inputData),
		PowerCapW: f.powerCap, SMClockMHz: f.smClock, GPUs: int64(f.gpus)}
	if f.train {
		d.Train = &f.train
		d.Optimizer = cmp.Or(f.optimizer, pipeline.DefaultOptimizer)
		d.Checkpoint = cmp.Or(f.checkpoint, pipeline.DefaultCheckpoint)
		d.GradAccum, d.DataParallel = int64(f.gradAccum), int64(f.dataParallel)
	}
	if f.warm {
		d.Warm = &f.warm
	}
	if d.Plan == "" { // written whole: the runtime's plan as priced today
		rt, err := resolveRuntime(f.runtime, f.runtimeFile)
		if err != nil {
			return d, err
		}
		d.Plan = rt.PlanOrFused()
	}
	// A runtime named is written even when it is the default: a model
	// holding operators only onnxruntime runs would otherwise be checked
	// under its own (pipeline.ModelRuntime).
	d.Runtime = f.runtime
	d.Dims, _ = parseDims(f.dims)
	return d, nil
}
