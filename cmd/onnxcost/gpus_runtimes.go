package main

import (
	"io"
	"strings"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/spf13/cobra"
)

// runtimeDB returns the built-in execution profiles, with the user's file
// over them.
func runtimeDB(runtimeFile string) (*hwdb.RuntimeDB, error) {
	return loadDB("--runtime-file", runtimeFile, hwdb.BuiltinRuntimes, hwdb.RuntimesWithUserFile)
}

// resolveRuntime finds the execution profile --runtime names, in the
// user's --runtime-file first; an unknown name is a usage error listing
// the known ones.
func resolveRuntime(name, runtimeFile string) (*hwdb.Runtime, error) {
	db, err := runtimeDB(runtimeFile)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(name) == "" {
		name = hwdb.DefaultRuntime
	}
	return lookupFlag("--runtime", name, db.Lookup)
}

// listRunE runs a listing command (gpus, gpus runtimes): check --format
// (read through the pointer when the command runs, after flag parsing),
// load the database (the built-in one plus the user's file), and print all
// its entries as JSON or as text.
func listRunE[T any, DB interface{ All() []T }](stdout io.Writer, format *string, load func() (DB, error), text func(io.Writer, []T) error) func(*cobra.Command, []string) error {
	return func(*cobra.Command, []string) error {
		if err := checkFormat(*format, "text", "json"); err != nil {
			return err
		}
		db, err := load()
		if err != nil {
			return err
		}
		if *format == "json" {
			return writeJSON(stdout, db.All())
		}
		return text(stdout, db.All())
	}
}

// newRuntimesCmd lists the runtime execution profiles (`gpus runtimes`).
func newRuntimesCmd(stdout io.Writer) *cobra.Command {
	var format, runtimeFile string
	c := &cobra.Command{
		Use: "runtimes", Example: "  onnxcost gpus runtimes",
		Short: "List the runtime execution profiles (launch gap, host dispatch, per-call cost, memory floor)",
		Args:  cobra.NoArgs,
		RunE:  listRunE(stdout, &format, func() (*hwdb.RuntimeDB, error) { return runtimeDB(runtimeFile) }, hwdb.WriteRuntimes),
	}
	c.Flags().StringVar(&format, "format", "text", "output format: text|json")
	c.Flags().StringVar(&runtimeFile, "runtime-file", "", "YAML or JSON file with your own runtime profiles, searched first")
	return c
}
