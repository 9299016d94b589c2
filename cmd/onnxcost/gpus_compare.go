package main

import (
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/internal/safefile"
	"github.com/onnxcost/onnxcost/sweep"
	"github.com/spf13/cobra"
)

func newGPUsCompareCmd(stdout, stderr io.Writer) *cobra.Command {
	var f sweepFlags
	var batch int64
	var prices []string
	var pricesFile string
	c := &cobra.Command{
		Use: "compare MODEL --gpu all|A,B,... [--batch N] [--price GPU=USD_PER_HOUR] [--prices FILE]", Example: "  onnxcost gpus compare testdata/models/resnet50.onnx --gpu A100-SXM4-80GB,H100,L4,T4 --batch 8 --price T4=0.35",
		Short: "One model on several GPUs: time, throughput, energy, memory fit, cost per million",
		Long: `compare costs one model at one batch on every GPU given (all: the whole
database) and prints, per GPU, the time of one batch, throughput (items/s),
energy per batch and per item, peak memory and whether it fits, and, when
prices are given, the cost of a million items at that throughput.

Without --batch, per-item figures use the model's own batch (a zoo
model's batch parameter, the bound batch symbol, or a static export's
batch dim). With --gpus N each row is N GPUs of its kind in tensor
parallel: time and memory are one GPU's, energy and cost the group's.
With --train each row is one training step (--optimizer, --checkpoint,
--grad-accum, --data-parallel as report takes them): items are the
samples it trains (batch × grad-accum × data-parallel), and energy and
cost count every replica.

Prices are yours: --price GPU=USD_PER_HOUR (repeatable) or --prices FILE, a
YAML or JSON mapping of GPU name to USD per hour. No price ships with
onnxcost.

  onnxcost gpus compare zoo:resnet50 --gpu T4,L4,A10 --batch 32 --price T4=0.35 --price L4=0.70`,
		Args: exactArgs(1, "MODEL"),
		RunE: func(c *cobra.Command, args []string) error {
			f.dumpTo = stderr
			if batch < 0 {
				return usageErr("--batch must be positive, got %d", batch)
			}
			if batch > 0 {
				f.batch = strconv.FormatInt(batch, 10)
			}
			if err := checkFormat(f.format, "text", "json", "csv"); err != nil {
				return err
			}
			if err := f.trainFlags.validate(); err != nil {
				return err
			}
			price, err := readPrices(prices, pricesFile, f.gpuFile)
			if err != nil {
				return err
			}
			res, err := runSweeps(args, &f)
			if err != nil {
				return err
			}
			out, err := sweep.Compare(res, price, int(f.shared.gpus))
			if err != nil {
				return usageErr("%v", err)
			}
			printWarnings(stderr, out.Warnings)
			return writeAs(stdout, f.format, out, sweep.WriteCompareCSV, sweep.WriteCompareText)
		},
	}
	c.Flags().StringVar(&f.gpus, "gpu", "", "GPUs to compare: all, or names comma-separated; required")
	f.addCostFlags(c)
	c.Flags().Int64Var(&batch, "batch", 0, "bind the leading symbolic dim of every graph input to `N`")
	c.Flags().StringArrayVar(&f.dims, "dim", nil, "bind a symbolic dim: `NAME=VALUE` (repeatable)")
	c.Flags().StringArrayVar(&prices, "price", nil, "price of a GPU: `GPU=USD_PER_HOUR` (repeatable)")
	c.Flags().StringVar(&pricesFile, "prices", "", "YAML or JSON `FILE` mapping GPU names to USD per hour")
	c.Flags().StringVar(&f.format, "format", "text", "output format: text|json|csv")
	f.passFlags.add(c)
	f.trainFlags.add(c)
	return c
}

// readPrices reads --price flags and a --prices file into canonical GPU
// names (aliases accepted); a flag overrides the file.
func readPrices(flags []string, file, gpuFile string) (map[string]float64, error) {
	var prices []sweep.Price
	if file != "" {
		data, err := safefile.ReadFile(file, safefile.SideFileLimit)
		if err != nil {
			return nil, usageErr("--prices %s: %v", file, safefile.Reason(err))
		}
		if prices, err = sweep.ParsePrices(data); err != nil {
			return nil, usageErr("--prices %s: %v", file, err)
		}
	}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usageErr("--price %q: want GPU=USD_PER_HOUR", f)
		}
		p, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return nil, usageErr("--price %q: the price must be a number", f)
		}
		if i := slices.IndexFunc(prices, func(q sweep.Price) bool { return q.GPU == k }); i >= 0 {
			prices[i].USDPerHour = p
		} else {
			prices = append(prices, sweep.Price{GPU: k, USDPerHour: p})
		}
	}
	if len(prices) == 0 {
		return map[string]float64{}, nil
	}
	db, err := gpuDB(gpuFile)
	if err != nil {
		return nil, err
	}
	out, err := sweep.ResolvePrices(db, prices)
	return out, asUsage(err)
}
