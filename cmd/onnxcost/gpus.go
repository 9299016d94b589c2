package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/cost/perf"
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
	return lookupGPU(db, name)
}

// lookupGPU is resolveGPU's lookup in a database already read (serve's,
// which the page also prices on).
func lookupGPU(db *hwdb.DB, name string) (*hwdb.GPU, error) {
	g, err := lookupFlag("--gpu", name, db.Lookup)
	if err != nil && (strings.Contains(name, ",") || strings.EqualFold(strings.TrimSpace(name), "all")) {
		// Reached only by the commands that price one GPU: sweep and
		// gpus compare split their lists first.
		return nil, usageErr("--gpu: %q names several GPUs, and this command prices one; 'onnxcost gpus compare' and 'onnxcost sweep' take a list (or all)", name)
	}
	return g, err
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
			if b := calib.IntervalBasis(g); b != "" {
				// A family with no measured kernels here: what its
				// estimates' intervals rest on instead.
				fmt.Fprintf(stdout, "\nestimates' 80%% intervals: %s\n", b)
			}
			writeModelClocks(stdout, g)
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

// writeModelClocks prints the sustained clock the time model prices dense
// GEMMs at on g, as a share of the clock each path's peak is quoted at
// (perf.PathClockFraction; an H100's tensor peak is quoted at 1.83 GHz,
// its fp32 peak at 1.98): derived from the figures above, not sourced, so
// it follows them under its own heading. A board
// whose power limit holds boost for one path and not another (an H100's
// tensor cores against its CUDA cores) shows why one precision's GEMMs
// fall short of their datasheet peak by more than another's, and one
// whose limit does not hold boost why its DP4A products run at a higher
// clock than its FP32 ones (perf's intVectorPowerShare).
func writeModelClocks(w io.Writer, g *hwdb.GPU) {
	if g.BoostClockMHz <= 0 {
		return
	}
	type path struct {
		name string
		pr   hwdb.Precision
	}
	var parts []string
	for _, pt := range []path{{"tensor cores (fp16)", hwdb.FP16Tensor}, {"CUDA cores (fp32)", hwdb.FP32}, {"integer dot products (DP4A)", hwdb.INT8}} {
		if perf.PathPeak(g, pt.pr) <= 0 || perf.RunPath(g, pt.pr) != pt.pr {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.2f", pt.name, perf.PathClockFraction(g, pt.pr)))
	}
	if len(parts) == 0 {
		return
	}
	scale := ""
	if g.VectorGEMMScale > 0 {
		scale = fmt.Sprintf("; its CUDA-core products' main loops take %.2f× the time that gives (vector_gemm_scale, measured)", g.VectorGEMMScale)
	}
	if g.VectorConvScale > 0 {
		scale += fmt.Sprintf("; its CUDA-core forward convolutions' %.2f× (vector_conv_scale, measured)", g.VectorConvScale)
	}
	fmt.Fprintf(w, "\ntime model (derived from the figures above): a GPU-filling GEMM at the default power limit holds this share of the clock its path's peak is quoted at: %s%s\n", strings.Join(parts, ", "), scale)
}
