package main

import (
	"io"
	"os"
	"strings"

	"github.com/onnxcost/onnxcost/internal/pipeline"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/spf13/cobra"
)

// passFlags select and check the fusion passes.
type passFlags struct {
	passes    string
	disable   []string
	check     bool
	dumpAfter string
	// dumpTo receives --dump-after output; nil means os.Stderr. Commands
	// with a testable stderr set it.
	dumpTo io.Writer
}

func (f *passFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.passes, "passes", "", "comma-separated passes to run (default: all, in table order; see 'onnxcost optimize --list')")
	c.Flags().StringArrayVar(&f.disable, "disable", nil, "disable the pass `NAME` (repeatable)")
	c.Flags().BoolVar(&f.check, "check", false, "verify the graph after every pass")
	c.Flags().StringVar(&f.dumpAfter, "dump-after", "", "print the canonical graph dump to stderr after pass `NAME`")
}

// options turns the flags into passes.Options.
func (f *passFlags) options() passes.Options {
	opt := passes.Options{Disable: f.disable, Check: f.check, DumpAfter: f.dumpAfter, DumpTo: f.dumpTo}
	if opt.DumpTo == nil {
		opt.DumpTo = os.Stderr
	}
	for _, p := range strings.Split(f.passes, ",") {
		if p = strings.TrimSpace(p); p != "" {
			opt.Only = append(opt.Only, p)
		}
	}
	return opt
}

// applyPlan runs the plan's passes through the shared pipeline.
func applyPlan(l *pipeline.Loaded, plan string, f *passFlags) error {
	return pipeErr(l.Plan(plan, f.options()))
}

// changedList names the passes that changed the graph, sorted.
func changedList(st *passes.Stats) string { return pipeline.ChangedList(st) }
