package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/energy"
	"github.com/onnxcost/onnxcost/generate"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/sweep"
	"github.com/spf13/cobra"
)

// eachCommand calls f on the root and every command under it.
func eachCommand(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		eachCommand(sub, f)
	}
}

// TestFlagCompletion: every command with --gpu, --dtype, --runtime or
// --plan completes its values through cobra's __complete, --gpu with
// every GPU name and alias, and a comma list completes its last element.
func TestFlagCompletion(t *testing.T) {
	var gpus, runtimes []string
	for _, g := range hwdb.All() {
		gpus = append(append(gpus, g.Name), g.Aliases...)
	}
	for _, r := range hwdb.Runtimes() {
		runtimes = append(runtimes, r.Name)
	}
	want := map[string][]string{"gpu": gpus, "dtype": cost.DTypes(), "runtime": runtimes, "plan": passes.PlanNames()}
	seen := map[string]int{}
	eachCommand(newRootCmd(io.Discard, io.Discard), func(c *cobra.Command) {
		for flag, values := range want {
			if c.Flags().Lookup(flag) == nil {
				continue
			}
			seen[flag]++
			path := strings.Fields(c.CommandPath())[1:]
			code, out, errs := runCLI(t, append(append([]string{"__complete"}, path...), "--"+flag, "")...)
			got := strings.Split(strings.TrimSpace(out), "\n")
			if code != 0 || len(got) == 0 || got[len(got)-1] != ":4" || !slices.Equal(got[:len(got)-1], values) {
				t.Errorf("%s --%s completes %q (exit %d, %s); want %q and no files", c.CommandPath(), flag, out, code, errs, values)
			}
		}
	})
	for flag := range want {
		if seen[flag] < 2 {
			t.Errorf("--%s found on %d commands; the walk misses some", flag, seen[flag])
		}
	}
	_, out, _ := runCLI(t, "__complete", "sweep", "zoo:alexnet", "--gpu", "V100,t")
	if !strings.Contains(out, "\nV100,T4\n") {
		t.Errorf("sweep --gpu V100,t completes %q; want V100,T4 among them", out)
	}
}

// TestExamples: every command's help has an Examples section of one to
// three lines that run that command with flags it has, on models that
// ship with the repository.
func TestExamples(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	eachCommand(root, func(c *cobra.Command) {
		lines := strings.Split(c.Example, "\n")
		if c.Example == "" || len(lines) > 3 {
			t.Errorf("%s: Example %q; want 1 to 3 lines", c.CommandPath(), c.Example)
			return
		}
		for _, l := range lines {
			words := strings.Fields(l)
			if !strings.HasPrefix(l, "  "+c.CommandPath()+" ") && l != "  "+c.CommandPath() {
				t.Errorf("%s: example %q does not run it", c.CommandPath(), l)
				continue
			}
			sub, rest, err := root.Find(words[1:])
			if err == nil {
				err = sub.ParseFlags(rest)
			}
			if err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), l, err)
			}
			for _, w := range words {
				if strings.HasPrefix(w, "testdata/") {
					if _, err := os.Stat(filepath.Join(repoRoot, w)); err != nil {
						t.Errorf("%s: example %q: %v", c.CommandPath(), l, err)
					}
				}
			}
		}
	})
}

// TestSchemasAcceptAddedFields: the JSON contracts only ever add fields,
// so every committed schema accepts a real document carrying a field it
// does not know, at the top and inside the objects of its lists, and
// still checks the fields it knows.
func TestSchemasAcceptAddedFields(t *testing.T) {
	for _, c := range []struct {
		schema []byte
		args   []string
	}{
		{report.ReportSchema, []string{"report", "zoo:alexnet", "--gpu", "T4", "--train"}},
		{report.CompareSchema, []string{"compare", "zoo:alexnet", "--gpu", "T4"}},
		{sweep.Schema, []string{"sweep", "zoo:alexnet", "--gpu", "T4", "--batch", "1,2", "--find-max-batch"}},
		{energy.Schema, []string{"energy", "zoo:alexnet", "--gpu", "V100"}},
		{generate.Schema, []string{"generate", "zoo:llama-tiny", "--gpu", "T4", "--prompt", "8", "--output", "4", "--concurrency", "1,2"}},
	} {
		rs := resolveSchema(t, c.schema)
		var inst map[string]any
		runJSON(t, &inst, append(c.args, "--format", "json")...)
		inst["added_later"] = "x"
		nested := 0
		for _, v := range inst {
			if list, ok := v.([]any); ok && len(list) > 0 {
				if obj, ok := list[0].(map[string]any); ok {
					obj["added_later"] = []any{1.0}
					nested++
				}
			}
		}
		if err := rs.Validate(inst); err != nil || nested == 0 {
			t.Errorf("%s: a document with added fields (%d nested) fails the schema: %v", c.args[0], nested, err)
		}
		inst["schema_version"] = "one"
		if rs.Validate(inst) == nil {
			t.Errorf("%s: the schema accepts a string schema_version", c.args[0])
		}
	}
}

// TestSchemasHoldPricingSettings: the JSON each command writes under the
// settings its first line names (a training step, a warm call) follows
// its committed schema, with the fields that name them.
func TestSchemasHoldPricingSettings(t *testing.T) {
	for _, c := range []struct {
		schema []byte
		args   []string
		field  string
	}{
		{report.CompareSchema, []string{"compare", "zoo:alexnet", "--gpu", "T4", "--train", "--grad-accum", "2"}, "train"},
		{report.CompareSchema, []string{"compare", "zoo:alexnet", "--gpu", "T4", "--warm"}, "warm"},
		{sweep.Schema, []string{"sweep", "zoo:alexnet", "--gpu", "T4", "--batch", "1,2", "--train", "--optimizer", "sgd"}, "train"},
		{sweep.Schema, []string{"sweep", "zoo:alexnet", "--gpu", "T4", "--batch", "1,2", "--warm"}, "warm"},
		{energy.Schema, []string{"energy", "zoo:alexnet", "--gpu", "V100", "--warm"}, "warm"},
	} {
		rs := resolveSchema(t, c.schema)
		var inst map[string]any
		runJSON(t, &inst, append(c.args, "--format", "json")...)
		if err := rs.Validate(inst); err != nil {
			t.Errorf("%v: fails its schema: %v", c.args, err)
		}
		if _, ok := inst[c.field]; !ok {
			t.Errorf("%v: no %q field", c.args, c.field)
		}
	}
}
