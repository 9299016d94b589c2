package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/onnxcost/onnxcost/internal/outfile"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
	"github.com/spf13/cobra"
)

func init() { register("zoo", newZooCmd) }

func newZooCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		out, format string
		params      []string
	)
	c := &cobra.Command{
		Use: "zoo [NAME [--param K=V]... -o OUT.onnx]", Example: "  onnxcost zoo\n  onnxcost zoo llama-tiny --param layers=4 -o llama-tiny.onnx",
		Short: "List the built-in reference models, or write one as a graph-only .onnx",
		Long: `Without arguments, zoo lists the reference models (AlexNet, VGG, ResNet,
the PTB LSTM, a Transformer encoder, GPT-2 and LLaMA-style decoders, and a
synthetic benchmark graph) with their parameters and defaults.

With NAME it describes that model's parameters; with -o it writes the
model as ONNX (opset 17): real structure and shapes, weights as external
data whose file is absent, so the file is small and every onnxcost command
reads it. batch=-1 or seq=-1 leaves that dim symbolic, to be bound with
--batch / --dim later.

  onnxcost zoo llama-70b --param batch=8 --param seq=2048 -o llama70b.onnx
  onnxcost report llama70b.onnx --gpu H100 --dtype bf16`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("zoo: want at most one model NAME, got %d arguments (see '%s --help')", len(args), c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			if len(args) == 0 {
				if out != "" || len(params) > 0 {
					return usageErr("zoo: -o and --param need a model NAME (one of %s)", strings.Join(models.Names(), ", "))
				}
				return listZoo(stdout, models.Zoo(), format)
			}
			e, ok := models.Lookup(args[0])
			if !ok {
				return usageErr("zoo: unknown model %q (one of %s)", args[0], strings.Join(models.Names(), ", "))
			}
			given, err := parseParams(params)
			if err != nil {
				return err
			}
			if out == "" {
				if len(params) > 0 {
					return usageErr("zoo %s: --param given without -o OUT.onnx", e.Name)
				}
				return listZoo(stdout, []models.Entry{e}, format)
			}
			if err := refuseOutputs(nil, outfile.Target{Flag: "-o", Path: out}); err != nil {
				return err
			}
			m, err := e.Build(given)
			if err != nil {
				return usageErr("zoo %s: %v", e.Name, err)
			}
			models.SetDataFile(m, filepath.Base(out)+".data")
			if err := writeFiles(nil, outfile.File{Path: out, Write: func(w io.Writer) error { return ir.Write(w, m) }}); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "onnxcost: %s: %s, %d nodes, %d weights (graph-only)\n", out, e.Name, len(m.Graph.Nodes), len(m.Graph.Initializers))
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "write the model to `OUT.onnx`")
	c.Flags().StringArrayVar(&params, "param", nil, "set a model parameter, `K=V` (repeatable; see 'zoo NAME')")
	c.Flags().StringVar(&format, "format", "text", "listing format: text|json")
	return c
}

// parseParams parses repeated --param K=V flags.
func parseParams(flags []string) (map[string]int64, error) {
	return parseKeyValues("--param", "K=V", flags, false)
}

// listZoo writes the zoo's listing of entries in format (text or json).
func listZoo(w io.Writer, entries []models.Entry, format string) error {
	if format == "json" {
		return writeJSON(w, models.Listing(entries))
	}
	return models.WriteList(w, entries)
}
