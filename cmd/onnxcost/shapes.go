package main

import (
	"encoding/json"
	"io"

	"github.com/onnxcost/onnxcost/viz"
	"github.com/spf13/cobra"
)

func init() { register("shapes", newShapesCmd) }

func newShapesCmd(stdout, stderr io.Writer) *cobra.Command {
	var mf modelFlags
	var format string
	c := &cobra.Command{
		Use: "shapes MODEL.onnx", Example: "  onnxcost shapes testdata/models/lstm_ptb_dyn.onnx --batch 20 --dim seq=35",
		Short: "Print every node with its inputs' and outputs' dtypes and inferred shapes",
		Args:  exactArgs(1, "MODEL.onnx"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			l, err := loadModel(args[0], &mf, loadOptions{})
			if err != nil {
				return err
			}
			printWarnings(stderr, l.Warnings)
			if format == "json" {
				return viz.WriteShapesJSON(stdout, viz.NewShapes(l.Path, l.Model, l.Bindings, l.Warnings, l.Infer.UnknownOps, l.Infer.Unbound, version))
			}
			return viz.WriteShapesText(stdout, l.Path, l.Model.Graph)
		},
	}
	mf.add(c)
	c.Flags().StringVar(&format, "format", "text", "output format: text|json")
	return c
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeAs writes a result as --format asks: "json", "csv", or text for
// anything else (the command has checked the value already).
func writeAs[T any](w io.Writer, format string, v T, csv, text func(io.Writer, T) error) error {
	switch format {
	case "json":
		return writeJSON(w, v)
	case "csv":
		return csv(w, v)
	}
	return text(w, v)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func checkFormat(got string, allowed ...string) error {
	return checkValue("--format", got, allowed...)
}

// exactArgs is cobra.ExactArgs with a usage error naming what is missing.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s: want %s, got %d argument(s) (see '%s --help')", c.Name(), names, len(args), c.CommandPath())
		}
		return nil
	}
}
