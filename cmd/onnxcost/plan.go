package main

import (
	"io"
	"os"
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
	// cmd tells `--passes ""` from an absent --passes.
	cmd *cobra.Command
}

func (f *passFlags) add(c *cobra.Command) {
	f.cmd = c
	c.Flags().StringVar(&f.passes, "passes", "", "comma-separated passes to run (default: all, in table order; see 'onnxcost optimize --list')")
	c.Flags().StringArrayVar(&f.disable, "disable", nil, "disable the pass `NAME` (repeatable)")
	c.Flags().BoolVar(&f.check, "check", false, "verify the graph after every pass")
	c.Flags().StringVar(&f.dumpAfter, "dump-after", "", "print the canonical graph dump to stderr after pass `NAME`")
}

// validate refuses an explicitly empty --passes: read literally it would
// run every pass (an empty selection means "all" to the pass runner),
// which is the opposite of what it says; the graph as read is
// --plan unfused.
func (f *passFlags) validate() error {
	if f.cmd != nil && f.cmd.Flags().Changed("passes") && strings.Trim(f.passes, ", \t") == "" {
		return usageErr("--passes %q names no pass; to cost the graph without passes use --plan unfused (the default runs them all)", f.passes)
	}
	return nil
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
