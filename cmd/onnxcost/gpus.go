package main

import (
	"io"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/spf13/cobra"
)

func init() { register("gpus", newGPUsCmd) }

// gpuDB returns the built-in database, with the user's file over it.
func gpuDB(gpuFile string) (*hwdb.DB, error) {
	return loadDB("--gpu-file", gpuFile, hwdb.Builtin, hwdb.WithUserFile)
}

// resolveGPU finds a GPU by name (aliases and case-insensitive spellings
// accepted), in the user's file first.
func resolveGPU(name, gpuFile string) (*hwdb.GPU, error) {
	db, err := gpuDB(gpuFile)
	if err != nil {
		return nil, err
	}
	return lookupFlag("--gpu", name, db.Lookup)
}

// loadDB loads a database of hwdb (GPUs, runtimes): the built-in one, or
// with the user's file over it when file is set. A bad user file is the
// user's mistake: a usage error naming flag.
func loadDB[DB any](flag, file string, builtin func() (DB, error), withFile func(string) (DB, error)) (DB, error) {
	var zero DB
	if file == "" {
		db, err := builtin()
		if err != nil {
			return zero, err
		}
		return db, nil
	}
	db, err := withFile(file)
	if err != nil {
		return zero, usageErr("%s %v", flag, err)
	}
	return db, nil
}

// lookupFlag finds the entry the value name of flag names; an unknown
// name is a usage error naming flag (the lookup lists the known ones).
func lookupFlag[T any](flag, name string, lookup func(string) (T, error)) (T, error) {
	v, err := lookup(name)
	if err != nil {
		var zero T
		return zero, usageErr("%s: %v", flag, err)
	}
	return v, nil
}

func newGPUsCmd(stdout, stderr io.Writer) *cobra.Command {
	var format, gpuFile string
	list := &cobra.Command{
		Use: "gpus", Example: "  onnxcost gpus\n  onnxcost gpus show H100",
		Short: "List the GPUs in the database (datasheet figures, dense peaks)",
		Args:  cobra.NoArgs,
		RunE:  listRunE(stdout, &format, func() (*hwdb.DB, error) { return gpuDB(gpuFile) }, hwdb.WriteTable),
	}
	show := &cobra.Command{
		Use: "show NAME", Example: "  onnxcost gpus show H100",
		Short: "Print one GPU's figures with their sources",
		Args:  exactArgs(1, "a GPU NAME"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			g, err := resolveGPU(args[0], gpuFile)
			if err != nil {
				return err
			}
			if format == "json" {
				return writeJSON(stdout, g)
			}
			hwdb.WriteDetail(stdout, g)
			return nil
		},
	}
	for _, c := range []*cobra.Command{list, show} {
		c.Flags().StringVar(&format, "format", "text", "output format: text|json")
		c.Flags().StringVar(&gpuFile, "gpu-file", "", "YAML or JSON file with your own GPU specs, searched first")
	}
	list.AddCommand(show, newRuntimesCmd(stdout), newGPUsCompareCmd(stdout, stderr))
	return list
}
