package main

import (
	"io"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/spf13/cobra"
)

func init() { register(newGPUsCmd) }

// gpuDB returns the built-in database, with the user's file over it.
func gpuDB(gpuFile string) (*hwdb.DB, error) {
	if gpuFile == "" {
		db, err := hwdb.Builtin()
		if err != nil {
			return nil, err
		}
		return db, nil
	}
	db, err := hwdb.WithUserFile(gpuFile)
	if err != nil {
		return nil, usageErr("--gpu-file %v", err)
	}
	return db, nil
}

// resolveGPU finds a GPU by name (aliases and case-insensitive spellings
// accepted), in the user's file first.
func resolveGPU(name, gpuFile string) (*hwdb.GPU, error) {
	db, err := gpuDB(gpuFile)
	if err != nil {
		return nil, err
	}
	g, err := db.Lookup(name)
	if err != nil {
		return nil, usageErr("--gpu: %v", err)
	}
	return g, nil
}

func newGPUsCmd(stdout, stderr io.Writer) *cobra.Command {
	var format, gpuFile string
	list := &cobra.Command{
		Use:   "gpus",
		Short: "List the GPUs in the database (datasheet figures, dense peaks)",
		Args:  cobra.NoArgs,
		RunE:  listRunE(stdout, &format, func() (*hwdb.DB, error) { return gpuDB(gpuFile) }, hwdb.WriteTable),
	}
	show := &cobra.Command{
		Use:   "show NAME",
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
