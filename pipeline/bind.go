package pipeline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// How a batch size reaches a model, in the order tried:
//
//  1. by name: the symbolic input dims the exporter called batch
//     (batch, batch_size, N, bs, …) take the value, wherever they sit —
//     a [seq, batch] input binds its second dim;
//  2. by role: failing a name, the symbol that every input with symbolic
//     dims carries at the same position (the leading one preferred), else
//     the leading symbol of each input when every such input has one
//     (distinct unk__N symbols per input); both with a warning. Not when
//     every input of rank 2 or more leads with a static 1: that is a
//     batch-1 export whose other dims (a sequence, a cache) are dynamic,
//     and its shared symbol is not the batch (case 3);
//  3. static: a model whose inputs are all static, or whose every input
//     of rank 2 or more leads with a static 1, has those leading 1s
//     rewritten (with one warning naming the inputs), and the rewrite must
//     carry through to the outputs that were declared with a leading 1;
//  4. otherwise --batch is refused with the reason, never ignored.

// batchNames are the spellings exporters give the batch dim, compared
// after lower-casing and dropping everything but letters and digits.
var batchNames = map[string]bool{
	"batch": true, "batchsize": true, "n": true, "b": true, "bs": true,
	"nbatch": true, "batchdim": true, "batches": true, "numbatch": true,
	"unkbatch": true,
}

// IsBatchName reports whether a symbol's name says it is the batch dim
// (batch, batch_size, N, bs, …).
func IsBatchName(sym string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(sym) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	k := b.String()
	return batchNames[k] || strings.HasPrefix(k, "batch")
}

// symUse is one symbolic dim of a graph input.
type symUse struct {
	input string
	pos   int
	sym   string
}

// batchPlan is how Batch is applied to a graph.
type batchPlan struct {
	// bind maps the batch symbols to the batch size (cases 1 and 2).
	bind map[string]int64
	// rewritten names the static inputs whose leading 1 became the batch
	// size (case 3).
	rewritten []string
	// note explains a binding a user might not predict (case 2).
	note string
}

// dataInputs lists the graph inputs a binding can reach: declared,
// not initializers, not fed by input data.
func dataInputs(g *ir.Graph, data map[string]*ir.Tensor) []*ir.Value {
	var out []*ir.Value
	for _, in := range g.Inputs {
		if in == nil || in.Declared == nil || in.IsInitializer {
			continue
		}
		if _, ok := data[in.Name]; ok {
			continue
		}
		out = append(out, in)
	}
	return out
}

// inputSymbols lists every symbolic dim of the inputs, in input order.
func inputSymbols(ins []*ir.Value) []symUse {
	var out []symUse
	for _, in := range ins {
		for i, d := range in.Declared.Shape.Dims {
			if !d.IsKnown() && d.Sym != "" {
				out = append(out, symUse{in.Name, i, d.Sym})
			}
		}
	}
	return out
}

// planBatch decides how batch n applies to g (see the cases above). The
// returned error is the refusal, without the file name.
func planBatch(g *ir.Graph, n int64, data map[string]*ir.Tensor) (*batchPlan, error) {
	ins := dataInputs(g, data)
	uses := inputSymbols(ins)
	p := &batchPlan{bind: map[string]int64{}}
	for _, u := range uses {
		if IsBatchName(u.sym) {
			p.bind[u.sym] = n
		}
	}
	if len(p.bind) > 0 {
		return p, nil
	}
	if len(uses) > 0 && !leadsWithStaticOne(ins) {
		sym, ok := sharedSymbol(ins)
		if !ok {
			if leads := leadingSymbols(ins); leads != nil {
				for _, s := range leads {
					p.bind[s] = n
				}
				p.note = fmt.Sprintf("--batch %d bound the leading dim of every input (%s): no input dim is named batch and none is shared", n, strings.Join(leads, ", "))
				return p, nil
			}
			return nil, fmt.Errorf("--batch %d: no input dim is named batch and no symbolic dim is shared by every input (%s); bind the one you mean with --dim NAME=%d", n, describeInputs(ins), n)
		}
		p.bind[sym] = n
		p.note = fmt.Sprintf("--batch %d bound symbol %s: no input dim is named batch, and %s is the dim every input shares", n, sym, sym)
		return p, nil
	}
	for _, in := range ins {
		dims := in.Declared.Shape.Dims
		if !in.Declared.Shape.Ranked || len(dims) < 2 || !dims[0].Is(1) {
			continue
		}
		p.rewritten = append(p.rewritten, in.Name)
	}
	if len(p.rewritten) == 0 {
		return nil, fmt.Errorf("--batch %d: the model's inputs are static (%s) with no leading dim of 1 to rewrite, so its batch size is fixed; re-export it with a dynamic batch axis", n, describeInputs(ins))
	}
	return p, nil
}

// leadsWithStaticOne reports whether every input of rank 2 or more has
// a static leading dim of 1 (and there is one): a model exported for
// batch 1, whatever its other dims.
func leadsWithStaticOne(ins []*ir.Value) bool {
	n := 0
	for _, in := range ins {
		dims := in.Declared.Shape.Dims
		if !in.Declared.Shape.Ranked || len(dims) < 2 {
			continue
		}
		if !dims[0].Is(1) {
			return false
		}
		n++
	}
	return n > 0
}

// sharedSymbol finds the symbol every input with symbolic dims carries at
// the same position, the lowest such position first.
func sharedSymbol(ins []*ir.Value) (string, bool) {
	var with []*ir.Value
	for _, in := range ins {
		if len(inputSymbols([]*ir.Value{in})) > 0 {
			with = append(with, in)
		}
	}
	if len(with) == 0 {
		return "", false
	}
	first := with[0].Declared.Shape.Dims
	for pos, d := range first {
		if d.IsKnown() || d.Sym == "" {
			continue
		}
		shared := true
		for _, in := range with[1:] {
			dims := in.Declared.Shape.Dims
			if pos >= len(dims) || dims[pos].IsKnown() || dims[pos].Sym != d.Sym {
				shared = false
				break
			}
		}
		if shared {
			return d.Sym, true
		}
	}
	return "", false
}

// leadingSymbols lists the leading symbol of every input with symbolic
// dims (exporters such as tf2onnx give each input its own unk__N batch
// symbol), or nil when some such input has a static leading dim.
func leadingSymbols(ins []*ir.Value) []string {
	var out []string
	seen := map[string]bool{}
	for _, in := range ins {
		dims := in.Declared.Shape.Dims
		if len(inputSymbols([]*ir.Value{in})) == 0 {
			continue
		}
		if len(dims) == 0 || dims[0].IsKnown() {
			return nil
		}
		if !seen[dims[0].Sym] {
			seen[dims[0].Sym] = true
			out = append(out, dims[0].Sym)
		}
	}
	return out
}

// describeInputs prints the inputs as name[dims], for refusals.
func describeInputs(ins []*ir.Value) string {
	parts := make([]string, 0, len(ins))
	for _, in := range ins {
		parts = append(parts, in.Name+in.Declared.Shape.String())
	}
	if len(parts) > 4 {
		parts = append(parts[:4], fmt.Sprintf("and %d more", len(parts)-4))
	}
	return strings.Join(parts, ", ")
}

// rewriteStatic sets the leading dim of the named inputs, and of the
// graph outputs declared with a leading 1, to n; it returns those outputs
// so the caller can check the rewrite carried through. The value_info
// declarations (which inference only compares against) are dropped: they
// were written for batch 1.
func rewriteStatic(g *ir.Graph, inputs []string, n int64) []*ir.Value {
	want := map[string]bool{}
	for _, name := range inputs {
		want[name] = true
	}
	for _, in := range g.Inputs {
		if in != nil && in.Declared != nil && want[in.Name] {
			in.Declared = withLeading(in.Declared, n)
		}
	}
	var outs []*ir.Value
	for _, o := range g.Outputs {
		if o == nil || o.Declared == nil {
			continue
		}
		d := o.Declared.Shape.Dims
		if o.Declared.Shape.Ranked && len(d) >= 1 && d[0].Is(1) {
			o.Declared = withLeading(o.Declared, n)
			outs = append(outs, o)
		}
	}
	g.DropValueInfo()
	return outs
}

// withLeading returns a copy of t with its leading dim set to n.
func withLeading(t *ir.TypeInfo, n int64) *ir.TypeInfo {
	c := *t
	c.Shape = t.Shape.Clone()
	c.Shape.Dims[0] = ir.D(n)
	return &c
}

// checkRewrite refuses a static rewrite that did not reach the outputs: a
// Reshape or a constant that hard-codes batch 1 leaves them at 1 (or
// elsewhere), and costing that graph would not be batch n.
func checkRewrite(outs []*ir.Value, n int64) error {
	for _, o := range outs {
		d := o.Shape.Dims
		if !o.Shape.Ranked || len(d) == 0 || !d[0].Is(n) {
			return fmt.Errorf("--batch %d: the model has a static batch of 1 and rewriting its inputs to %d does not carry through to output %s (inferred %s): the graph hard-codes batch 1 (e.g. in a Reshape); re-export it with a dynamic batch axis", n, n, o.Name, o.Shape.String())
		}
	}
	return nil
}

// saveDeclared records the declared types of g's inputs and outputs and
// returns what puts them back (rewriteStatic replaces them, never edits
// them in place).
func saveDeclared(g *ir.Graph) func() {
	ins := make([]*ir.TypeInfo, len(g.Inputs))
	outs := make([]*ir.TypeInfo, len(g.Outputs))
	for i, v := range g.Inputs {
		if v != nil {
			ins[i] = v.Declared
		}
	}
	for i, v := range g.Outputs {
		if v != nil {
			outs[i] = v.Declared
		}
	}
	return func() {
		for i, v := range g.Inputs {
			if v != nil {
				v.Declared = ins[i]
			}
		}
		for i, v := range g.Outputs {
			if v != nil {
				v.Declared = outs[i]
			}
		}
	}
}

// exportedDefect infers m as exported, its static-batch rewrite undone
// (restore, when non-nil), and returns what is wrong with it, or
// batchErr when nothing is. Refusing --batch for a static model first
// would send the user to re-export a model whose real defect is
// elsewhere: a malformed model is named as one whatever the batch. It
// runs only on the way to an error.
func exportedDefect(m *ir.Model, opt ir.InferOptions, restore func(), batchErr error) error {
	if restore != nil {
		restore()
	}
	if _, err := ir.InferShapes(m, opt); err != nil {
		return err
	}
	return batchErr
}

// SamplesPerStep is the batch one training step of l consumes, for an
// epoch of --samples: batch (--batch) when given, else the value the
// batch-named dims among dims (--dim NAME=V; IsBatchName) are bound to,
// when they agree. Neither a symbol the loader assumed to be 1 nor a
// static graph's leading dim is taken: a [seq, batch] LSTM input leads
// with the sequence. The errors name --samples and what to give.
func SamplesPerStep(batch int64, dims []string, l *Loaded) (int64, error) {
	if batch > 0 {
		return batch, nil
	}
	var syms []string
	for _, d := range dims {
		if s, _, ok := strings.Cut(d, "="); ok && IsBatchName(strings.TrimSpace(s)) {
			syms = append(syms, strings.TrimSpace(s))
		}
	}
	sort.Strings(syms)
	var v int64
	for _, s := range syms {
		b := l.Bindings[s]
		if v != 0 && b != v {
			return 0, fmt.Errorf("--samples: the batch dims %s are bound to different values; give the batch per step with --batch N", strings.Join(syms, ", "))
		}
		v = b
	}
	if v <= 0 {
		return 0, fmt.Errorf("--samples: the samples per training step are unknown; give them with --batch N")
	}
	return v, nil
}

// SetEpoch adds --samples' epoch of samples samples to r, a training
// step's report of l: ceil(samples / SamplesPerStep) steps. The CLI and
// the page give it their flags and get the same checks and messages.
func SetEpoch(r *report.Report, l *Loaded, samples, batch int64, dims []string) error {
	if err := CheckEpoch(samples, r.Totals.Train != nil); err != nil {
		return err
	}
	per, err := SamplesPerStep(batch, dims, l)
	if err != nil {
		return err
	}
	if err := r.Totals.Train.SetEpoch(samples, per); err != nil {
		return fmt.Errorf("--samples %d: %v", samples, err)
	}
	return nil
}

// CheckEpoch is what SetEpoch asks of a request before any report: a
// positive count of samples, for a training step. serve checks its
// --samples with it before the page opens.
func CheckEpoch(samples int64, train bool) error {
	if samples <= 0 {
		return fmt.Errorf("--samples %d: want a positive number of samples per epoch", samples)
	}
	if !train {
		return fmt.Errorf("--samples prices a training epoch: it needs --train")
	}
	return nil
}
