package main

import (
	"github.com/onnxcost/onnxcost/internal/gctune"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/spf13/cobra"
)

// modelFlags are the flags of every command that reads a model.
type modelFlags struct {
	batch     int64
	dims      []string
	inputData string
	// cmd tells a given flag from its default (--batch 0 is refused, not
	// read as "unset").
	cmd *cobra.Command
}

func (f *modelFlags) add(c *cobra.Command) {
	f.cmd = c
	c.Flags().Int64Var(&f.batch, "batch", 0, "batch size `N`: binds the input dim named batch (else the symbolic dim every input shares); a static batch-1 model has its leading dim rewritten, with a warning")
	c.Flags().StringArrayVar(&f.dims, "dim", nil, "bind a symbolic dim: `NAME=VALUE` (repeatable)")
	c.Flags().StringVar(&f.inputData, "input-data", "", "bind graph inputs to the tensors in `DIR`/input_<i>.pb (graph-input order)")
}

// loadOptions tune loadModel for a command.
type loadOptions struct {
	// bindAll gives unbound input symbols the value 1 (with a warning) so
	// that a cost can be computed; `shapes` keeps them symbolic instead.
	bindAll bool
	// dropFilePages: see pipeline.Options.DropFilePages.
	dropFilePages bool
}

// loadModel parses the model flags and runs the shared pipeline's Load.
// Every error names the file.
func loadModel(path string, f *modelFlags, opt loadOptions) (*pipeline.Loaded, error) {
	if f.batch < 0 || f.batch == 0 && f.given("batch") {
		return nil, usageErr("--batch must be ≥ 1, got %d", f.batch)
	}
	bindings, err := parseDims(f.dims)
	if err != nil {
		return nil, err
	}
	l, err := pipeline.Load(path, pipeline.Options{
		Batch:         f.batch,
		Dims:          bindings,
		InputDataDir:  f.inputData,
		BindAll:       opt.bindAll,
		DropFilePages: opt.dropFilePages,
		Counted:       gctune.SizeHeap,
	})
	return l, pipeErr(err)
}

// config puts the model flags into a pipeline configuration, checked as
// loadModel checks them.
func (f *modelFlags) config(cfg *pipeline.Config) error {
	if f.batch < 0 || f.batch == 0 && f.given("batch") {
		return usageErr("--batch must be ≥ 1, got %d", f.batch)
	}
	dims, err := parseDims(f.dims)
	if err != nil {
		return err
	}
	cfg.Batch, cfg.Dims, cfg.InputDataDir = f.batch, dims, f.inputData
	return nil
}

// given reports whether the user set the named flag.
func (f *modelFlags) given(name string) bool {
	return f.cmd != nil && f.cmd.Flags().Changed(name)
}

// pipeErr maps the pipeline's errors to exit codes: bad input is a usage
// error (exit 2).
func pipeErr(err error) error {
	if err == nil {
		return nil
	}
	if pipeline.IsInputError(err) {
		return &exitError{code: 2, err: err}
	}
	return err
}

// parseDims parses repeated --dim NAME=VALUE flags. A size may be 0: a
// prompt step binds an empty KV cache (past_sequence_length=0).
func parseDims(flags []string) (map[string]int64, error) {
	return parseKeyValues("--dim", "NAME=VALUE", flags, true)
}

// parseKeyValues is pipeline.ParseKeyValues as a usage error.
func parseKeyValues(flag, form string, flags []string, sizes bool) (map[string]int64, error) {
	m, err := pipeline.ParseKeyValues(flag, form, flags, sizes)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return m, nil
}
