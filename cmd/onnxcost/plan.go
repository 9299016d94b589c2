package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

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

// applyPlan runs the fusion passes for the fused plan; the unfused plan
// costs the graph as read (and checks the pass flags all the same, so a
// typo is an error whichever plan is asked for).
func applyPlan(l *loaded, plan string, f *passFlags) error {
	opt := f.options()
	if _, err := passes.Selected(opt); err != nil {
		return usageErr("%v", err)
	}
	if plan != "fused" {
		return nil
	}
	st, err := passes.Run(l.model.Graph, opt)
	if err != nil {
		return usageErr("%s: %v", l.path, err)
	}
	if !st.Converged {
		l.warnings = append(l.warnings, fmt.Sprintf("fusion passes did not reach a fixpoint in %d iterations (still changing: %s); the fused plan may be incompletely optimised", st.Iterations, changedList(st)))
	}
	return nil
}

// changedList names the passes that changed the graph, sorted.
func changedList(st *passes.Stats) string {
	names := make([]string, 0, len(st.Changed))
	for n := range st.Changed {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
