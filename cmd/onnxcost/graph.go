package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/onnxcost/onnxcost/cost/gate"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/internal/outfile"
	"github.com/onnxcost/onnxcost/viz"
	"github.com/spf13/cobra"
)

func init() { register("graph", newGraphCmd) }

// drawn is what the drawing commands need: a report, the GPU's roofs and
// the graph's inputs and outputs (known only when a model was read).
type drawn struct {
	report  *report.Report
	ceil    viz.Ceilings
	inputs  []string
	outputs []string
}

// loadDrawn estimates a model (or reads a saved JSON report) for one plan.
func loadDrawn(path string, f *costFlags, stderr io.Writer) (*drawn, error) {
	data, isJSON, err := gate.SniffJSON(path)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if isJSON {
		r, err := gate.DecodeReport(data)
		if err != nil {
			return nil, usageErr("%s: %v", path, err)
		}
		// Drawing saved numbers under another GPU's name would be a lie.
		if m := savedMismatches(r, f); len(m) > 0 {
			return nil, usageErr("%s is a saved report computed with %s; it cannot be redrawn for %s: pass the model instead, or drop the flag", path, m[0].Saved, m[0].Flag)
		}
		name := f.gpu
		if name == "" {
			name = r.GPU
		}
		d := &drawn{report: r}
		if g, err := resolveGPU(name, f.gpuFile); err == nil {
			d.ceil = viz.CeilingsOf(g)
		} else {
			fmt.Fprintf(stderr, "onnxcost: warning: GPU %q of the report is unknown; no roofs drawn\n", name)
		}
		return d, nil
	}
	r, l, err := estimate(path, f)
	if err != nil {
		return nil, err
	}
	printWarnings(stderr, r.Warnings)
	gpu, err := resolveGPU(f.gpu, f.gpuFile)
	if err != nil {
		return nil, err
	}
	d := &drawn{report: r, ceil: viz.CeilingsOf(gpu)}
	d.inputs, d.outputs = l.GraphIO()
	return d, nil
}

// graphFlags are the drawing flags of `graph` (and the graph in `html`).
type graphFlags struct {
	color, focus, rankdir string
	top, halo, collapse   int
	allNodes              bool
	timeout               time.Duration
}

func (g *graphFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&g.color, "color", "bound", "fill boxes by: bound|time|op")
	c.Flags().IntVar(&g.top, "top", 0, "keep the `N` costliest boxes and fold the rest (0: all, capped at 150 boxes)")
	c.Flags().IntVar(&g.halo, "halo", viz.DefaultHalo, "outline the `N` costliest boxes (0: none)")
	c.Flags().StringVar(&g.focus, "focus", "", "keep only nodes whose name or op type matches `REGEX`; fold the rest")
	c.Flags().IntVar(&g.collapse, "collapse", 0, "collapse exporter scopes (/layer3/attn/...) to their first `DEPTH` parts")
	c.Flags().StringVar(&g.rankdir, "rankdir", "TB", "layout direction: TB|LR")
	c.Flags().BoolVar(&g.allNodes, "all-nodes", false, "also draw nodes that run no kernel (constants, views, folded shape ops)")
	c.Flags().DurationVar(&g.timeout, "timeout", viz.DefaultRenderTimeout, "give up on Graphviz after `D`")
}

// options checks the flags and turns them into viz options.
func (g *graphFlags) options(d *drawn) (viz.GraphOptions, error) {
	o := viz.GraphOptions{Color: g.color, Top: g.top, Halo: g.halo, Collapse: g.collapse,
		RankDir: strings.ToUpper(g.rankdir), ShowFree: g.allNodes, Inputs: d.inputs, Outputs: d.outputs}
	if err := checkValue("--color", g.color, "bound", "time", "op"); err != nil {
		return o, err
	}
	if err := checkValue("--rankdir", o.RankDir, "TB", "LR"); err != nil {
		return o, err
	}
	if g.top < 0 || g.collapse < 0 || g.halo < 0 {
		return o, usageErr("--top, --halo and --collapse must be ≥ 0")
	}
	if g.halo == 0 {
		o.Halo = -1
	}
	if g.focus != "" {
		re, err := regexp.Compile(g.focus)
		if err != nil {
			return o, usageErr("--focus %q: %v", g.focus, err)
		}
		o.Focus = re
	}
	return o, nil
}

// dot draws d as DOT source under the flags.
func (g *graphFlags) dot(d *drawn) (string, error) {
	opt, err := g.options(d)
	if err != nil {
		return "", err
	}
	src, err := viz.DOT(d.report, d.ceil, opt)
	if err != nil {
		return "", usageErr("%v", err)
	}
	return src, nil
}

// outFormat is the format named by an output file's extension.
func outFormat(path string, allowed ...string) (string, error) {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	for _, a := range allowed {
		if ext == a {
			return ext, nil
		}
	}
	return "", usageErr("-o %s: the extension must be one of .%s", path, strings.Join(allowed, ", ."))
}

func newGraphCmd(stdout, stderr io.Writer) *cobra.Command {
	var f costFlags
	var g graphFlags
	var out string
	c := &cobra.Command{
		Use: "graph MODEL.onnx|REPORT.json --gpu NAME -o out.{dot,svg,png,pdf}", Example: "  onnxcost graph testdata/models/resnet50.onnx --gpu T4 -o resnet50.dot",
		Short: "Draw the graph annotated with each node's time, share and roofline bound (Graphviz)",
		Long: `graph draws the model as a Graphviz graph: each box shows the op type, the
node name, its estimated time and share of the total, FLOPs, bytes,
arithmetic intensity and the roof that binds it (compute, HBM, L2 or
launch). Fused nodes list the nodes they merged. Edges carry shape and
dtype. The costliest boxes get a gold halo.

Without -o the DOT goes to stdout. .svg, .png and .pdf are rendered by the
system 'dot' (Graphviz); when it is missing the .dot is written instead,
with the command that renders it. A saved 'report --format json' can be
drawn instead of a model (edges come from the value names).`,
		Args: exactArgs(1, "MODEL.onnx"),
		RunE: func(c *cobra.Command, args []string) error {
			format := "dot"
			if out != "" {
				var err error
				if format, err = outFormat(out, "dot", "svg", "png", "pdf"); err != nil {
					return err
				}
			}
			if err := refuseOutputs(f.inputs(args[0]), outfile.Target{Flag: "-o", Path: out}); err != nil {
				return err
			}
			d, err := loadDrawn(args[0], &f, stderr)
			if err != nil {
				return err
			}
			if g.top == 0 && g.focus == "" && viz.IsHuge(d.report) && len(d.report.Nodes) > viz.DefaultMaxNodes {
				hugeNote(stderr, d, fmt.Sprintf("the graph keeps at most %d boxes, its costliest nodes or scopes, and folds the rest", viz.DefaultMaxNodes),
					"--top N keeps the N costliest (Graphviz takes minutes on thousands)")
			}
			src, err := g.dot(d)
			if err != nil {
				return err
			}
			return writeGraph(src, out, format, g.timeout, stdout, stderr)
		},
	}
	f.add(c)
	f.addWarm(c)
	g.add(c)
	c.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` (.dot, .svg, .png or .pdf); default: DOT to stdout")
	return c
}

// writeGraph writes DOT, or renders it with the system dot; without dot it
// writes the .dot beside the requested file and says how to render it.
func writeGraph(src, out, format string, timeout time.Duration, stdout, stderr io.Writer) error {
	if out == "" {
		_, err := io.WriteString(stdout, src)
		return err
	}
	if format == "dot" {
		return writeOut(out, []byte(src))
	}
	img, err := viz.Render(context.Background(), src, format, timeout)
	if errors.Is(err, viz.ErrNoDot) {
		dotPath := strings.TrimSuffix(out, filepath.Ext(out)) + ".dot"
		if err := writeOut(dotPath, []byte(src)); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "onnxcost: Graphviz 'dot' is not on PATH: wrote %s; render it with: dot -T%s %s -o %s\n",
			dotPath, format, dotPath, out)
		return nil
	}
	if err != nil {
		return usageErr("%s: %v", out, err)
	}
	return writeOut(out, img)
}

// writeOut writes the run's one output file (see outfile: atomic, never
// onto a directory, special file or input).
func writeOut(path string, data []byte, inputs ...string) error {
	return writeFiles(inputs, outfile.Bytes(path, data))
}

// writeFiles writes a run's outputs (outfile.WriteAll): all of them, or,
// on failure, none.
func writeFiles(inputs []string, files ...outfile.File) error {
	if err := outfile.WriteAll(inputs, files...); err != nil {
		return usageErr("%v", err)
	}
	return nil
}

// refuseOutputs is outfile.Refuse as a usage error, called before a run
// does any work.
func refuseOutputs(inputs []string, outs ...outfile.Target) error {
	if err := outfile.Refuse(inputs, outs...); err != nil {
		return usageErr("%v", err)
	}
	return nil
}

// inputs are the files a cost run reads besides models: none may be output.
func (f *costFlags) inputs(models ...string) []string {
	return append(slices.Clone(models), f.gpuFile, f.runtimeFile)
}
