// Package pipeline is the model pipeline behind every onnxcost command:
// read an ONNX model (from a file or from bytes), inline its functions,
// name its nodes, bind its symbolic dims and infer every shape (Load); run
// the fusion passes of a plan (Loaded.Plan); and cost it on a GPU
// (Estimate). The command line and the WebAssembly build share it, so a
// model gives the same numbers in both.
//
// Every error it returns for bad input is an *Error, so a caller can tell
// bad input (the command line exits 2) from anything else.
package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
)

// Error is bad input: an unreadable or invalid model, a bad binding, a
// bad pass selection. Its message already names the file when there is one.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// inputErr builds an *Error.
func inputErr(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}

// IsInputError reports whether err is (or wraps) bad input.
func IsInputError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Options say how to bind a model's symbolic dims.
type Options struct {
	// Batch, when > 0, binds the leading symbolic dim of every graph input.
	Batch int64
	// Dims binds symbols by name.
	Dims map[string]int64
	// InputDataDir, when set, binds graph inputs to the tensors in
	// DIR/input_<i>.pb (graph-input order). File reads only.
	InputDataDir string
	// InputData binds graph inputs by name to tensors (used instead of
	// InputDataDir when the caller already holds them).
	InputData map[string]*ir.Tensor
	// BindAll gives unbound input symbols the value 1 (with a warning) so
	// that a cost can be computed; `shapes` keeps them symbolic instead.
	BindAll bool
}

// Loaded is a model after reading, function inlining and shape inference.
type Loaded struct {
	// Path names the model in messages (the file path, or the name given
	// to LoadBytes).
	Path  string
	Model *ir.Model
	Infer *ir.InferResult
	// Bindings holds every symbol given a value, by the user or by the
	// assume-1 default (those also produce a warning).
	Bindings map[string]int64
	Warnings []string
}

// Load reads, inlines and infers the model at path. Every error names the
// file. A path "zoo:NAME?k=v" builds a zoo model instead (see loadZoo).
func Load(path string, opt Options) (*Loaded, error) {
	if opt.Batch < 0 {
		return nil, inputErr("--batch must be positive, got %d", opt.Batch)
	}
	if IsZoo(path) {
		return loadZoo(path, opt)
	}
	m, err := ir.ReadFile(path, ir.ReadOptions{})
	if err != nil {
		return nil, inputErr("%s: %w", path, err)
	}
	return finish(path, m, opt)
}

// LoadBytes is Load for a model held in memory (a browser upload); name
// stands for the path in messages. External data cannot be resolved, so
// tensors stored outside the file are marked missing.
func LoadBytes(name string, data []byte, opt Options) (*Loaded, error) {
	if opt.Batch < 0 {
		return nil, inputErr("--batch must be positive, got %d", opt.Batch)
	}
	m, err := ir.Read(data, ir.ReadOptions{})
	if err != nil {
		return nil, inputErr("%s: %w", name, err)
	}
	m.Path = name
	return finish(name, m, opt)
}

// finish inlines, names, binds and infers a model that was just read.
func finish(path string, m *ir.Model, opt Options) (*Loaded, error) {
	if err := ir.InlineFunctions(m); err != nil {
		return nil, inputErr("%s: %w", path, err)
	}
	ir.NameNodes(m.Graph)
	bindings := opt.Dims
	iopt := ir.InferOptions{Bindings: bindings, Batch: opt.Batch, InputData: opt.InputData}
	if opt.InputDataDir != "" {
		var err error
		iopt.InputData, err = readInputData(opt.InputDataDir, m.Graph)
		if err != nil {
			return nil, err
		}
	}
	l := &Loaded{Path: path, Model: m, Bindings: map[string]int64{}}
	if opt.BindAll {
		// Find the symbols no option binds and bind them to 1, loudly.
		probe := unboundSymbols(m.Graph, iopt)
		if len(probe) > 0 {
			b := map[string]int64{}
			for k, v := range iopt.Bindings {
				b[k] = v
			}
			iopt.Bindings = b
			for _, s := range probe {
				iopt.Bindings[s] = 1
				l.Warnings = append(l.Warnings, fmt.Sprintf("symbol %s is unbound; assumed 1 (bind it with --batch N or --dim %s=N)", s, s))
			}
		}
	}
	res, err := ir.InferShapes(m, iopt)
	if err != nil {
		return nil, inputErr("%s: %w", path, err)
	}
	l.Infer = res
	for k, v := range res.Bound {
		l.Bindings[k] = v
	}
	l.Warnings = append(l.Warnings, res.Warnings...)
	for _, op := range res.UnknownOps {
		l.Warnings = append(l.Warnings, fmt.Sprintf("no shape rule for op %s; its outputs have unknown shapes", strings.TrimPrefix(op, "::")))
	}
	return l, nil
}

// unboundSymbols lists, sorted, the symbolic dims of graph inputs that
// neither Dims nor Batch nor input data binds.
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

// readInputData reads DIR/input_<i>.pb for each graph input, in order.
// A missing file leaves that input unbound; an unreadable one is an error.
func readInputData(dir string, g *ir.Graph) (map[string]*ir.Tensor, error) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, inputErr("--input-data %s: not a readable folder", dir)
	}
	out := map[string]*ir.Tensor{}
	for i, in := range g.Inputs {
		p := filepath.Join(dir, fmt.Sprintf("input_%d.pb", i))
		if _, err := os.Stat(p); err != nil {
			continue
		}
		t, err := ir.ReadTensorFile(p)
		if err != nil {
			return nil, inputErr("%s: %w", p, err)
		}
		out[in.Name] = t
	}
	return out, nil
}

// Plan runs the fusion passes for the fused plan; the unfused plan costs
// the graph as read (and checks the pass selection all the same, so a typo
// is an error whichever plan is asked for).
func (l *Loaded) Plan(plan string, opt passes.Options) error {
	if _, err := passes.Selected(opt); err != nil {
		return &Error{Err: err}
	}
	if plan != "fused" {
		return nil
	}
	st, err := passes.Run(l.Model.Graph, opt)
	if err != nil {
		return inputErr("%s: %w", l.Path, err)
	}
	if !st.Converged {
		l.Warnings = append(l.Warnings, fmt.Sprintf("fusion passes did not reach a fixpoint in %d iterations (still changing: %s); the fused plan may be incompletely optimised", st.Iterations, ChangedList(st)))
	}
	return nil
}

// ChangedList names the passes that changed the graph, sorted.
func ChangedList(st *passes.Stats) string {
	names := make([]string, 0, len(st.Changed))
	for n := range st.Changed {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// EstimateOptions choose what Estimate costs.
type EstimateOptions struct {
	DType       string // "" is the model's own
	Plan        string // fused|unfused
	ToolVersion string
	ModelName   string // "" is the Loaded's Path
}

// Estimate runs the cost model on a loaded (and planned) model and
// attaches its bindings and warnings to the report.
func Estimate(l *Loaded, gpu *hwdb.GPU, opt EstimateOptions) (*cost.Report, error) {
	name := opt.ModelName
	if name == "" {
		name = l.Path
	}
	r, err := cost.Analyze(l.Model.Graph, l.Model, gpu, cost.Options{
		DType:       opt.DType,
		Plan:        opt.Plan,
		ToolVersion: opt.ToolVersion,
		ModelName:   name,
	})
	if err != nil {
		return nil, inputErr("%s: %w", l.Path, err)
	}
	r.Bindings = l.Bindings
	r.Warnings = append(append([]string{}, l.Warnings...), r.Warnings...)
	return r, nil
}
