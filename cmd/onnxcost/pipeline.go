package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/spf13/cobra"
)

// modelFlags are the flags of every command that reads a model.
type modelFlags struct {
	batch     int64
	dims      []string
	inputData string
}

func (f *modelFlags) add(c *cobra.Command) {
	c.Flags().Int64Var(&f.batch, "batch", 0, "bind the leading symbolic dim of every graph input to `N`")
	c.Flags().StringArrayVar(&f.dims, "dim", nil, "bind a symbolic dim: `NAME=VALUE` (repeatable)")
	c.Flags().StringVar(&f.inputData, "input-data", "", "bind graph inputs to the tensors in `DIR`/input_<i>.pb (graph-input order)")
}

// loaded is a model after reading, function inlining and shape inference.
type loaded struct {
	path  string
	model *ir.Model
	infer *ir.InferResult
	// bindings holds every symbol given a value, by the user or by the
	// assume-1 default (those also produce a warning).
	bindings map[string]int64
	warnings []string
}

// loadOptions tune loadModel for a command.
type loadOptions struct {
	// bindAll gives unbound input symbols the value 1 (with a warning) so
	// that a cost can be computed; `shapes` keeps them symbolic instead.
	bindAll bool
}

// loadModel reads, inlines and infers a model. Every error names the file.
func loadModel(path string, f *modelFlags, opt loadOptions) (*loaded, error) {
	if f.batch < 0 {
		return nil, usageErr("--batch must be positive, got %d", f.batch)
	}
	bindings, err := parseDims(f.dims)
	if err != nil {
		return nil, err
	}
	m, err := ir.ReadFile(path, ir.ReadOptions{})
	if err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	if err := ir.InlineFunctions(m); err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	ir.NameNodes(m.Graph)
	iopt := ir.InferOptions{Bindings: bindings, Batch: f.batch}
	if f.inputData != "" {
		iopt.InputData, err = readInputData(f.inputData, m.Graph)
		if err != nil {
			return nil, err
		}
	}
	l := &loaded{path: path, model: m, bindings: map[string]int64{}}
	if opt.bindAll {
		// Find the symbols no flag binds and bind them to 1, loudly.
		probe := unboundSymbols(m.Graph, iopt)
		if len(probe) > 0 {
			if iopt.Bindings == nil {
				iopt.Bindings = map[string]int64{}
			}
			for _, s := range probe {
				iopt.Bindings[s] = 1
				l.warnings = append(l.warnings, fmt.Sprintf("symbol %s is unbound; assumed 1 (bind it with --batch N or --dim %s=N)", s, s))
			}
		}
	}
	res, err := ir.InferShapes(m, iopt)
	if err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	l.infer = res
	for k, v := range res.Bound {
		l.bindings[k] = v
	}
	l.warnings = append(l.warnings, res.Warnings...)
	for _, op := range res.UnknownOps {
		l.warnings = append(l.warnings, fmt.Sprintf("no shape rule for op %s; its outputs have unknown shapes", strings.TrimPrefix(op, "::")))
	}
	return l, nil
}

// unboundSymbols lists, sorted, the symbolic dims of graph inputs that
// neither --dim nor --batch nor --input-data binds.
func unboundSymbols(g *ir.Graph, opt ir.InferOptions) []string {
	set := map[string]bool{}
	for _, in := range g.Inputs {
		if in.Declared == nil {
			continue
		}
		if _, ok := opt.InputData[in.Name]; ok {
			continue
		}
		for i, d := range in.Declared.Shape.Dims {
			if d.IsKnown() {
				continue
			}
			if _, ok := opt.Bindings[d.Sym]; ok {
				continue
			}
			if i == 0 && opt.Batch > 0 {
				continue
			}
			set[d.Sym] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// parseDims parses repeated --dim NAME=VALUE flags.
func parseDims(flags []string) (map[string]int64, error) {
	return parseKeyValues("--dim", "NAME=VALUE", flags, true)
}

// parseKeyValues parses the values of a repeatable KEY=N flag into a map;
// a repeated key takes its last value. With positive, N must be ≥ 1 (a
// dim size); otherwise any integer is accepted.
func parseKeyValues(flag, form string, flags []string, positive bool) (map[string]int64, error) {
	out := map[string]int64{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usageErr("%s %q: want %s", flag, f, form)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch {
		case err != nil && !positive:
			return nil, usageErr("%s %q: value must be an integer", flag, f)
		case err != nil || (positive && n <= 0):
			return nil, usageErr("%s %q: value must be a positive integer", flag, f)
		}
		out[k] = n
	}
	return out, nil
}

// readInputData reads DIR/input_<i>.pb for each graph input, in order.
// A missing file leaves that input unbound; an unreadable one is an error.
func readInputData(dir string, g *ir.Graph) (map[string]*ir.Tensor, error) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, usageErr("--input-data %s: not a readable folder", dir)
	}
	out := map[string]*ir.Tensor{}
	for i, in := range g.Inputs {
		p := filepath.Join(dir, fmt.Sprintf("input_%d.pb", i))
		if _, err := os.Stat(p); err != nil {
			continue
		}
		t, err := ir.ReadTensorFile(p)
		if err != nil {
			return nil, usageErr("%s: %v", p, err)
		}
		out[in.Name] = t
	}
	return out, nil
}
