package pipeline

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/train"
)

// Some operators run in onnxruntime alone. Its contrib operators (domain
// com.microsoft): TensorRT's ONNX parser imports the default domain (and
// its own plugins' ops), and PyTorch has no kernel for them. And the
// default domain's integer-arithmetic ops, which no release of TensorRT's
// parser imports (trtops.go, 8.0 to 10.1: ConvInteger, MatMulInteger,
// QLinearConv, QLinearMatMul, DynamicQuantizeLinear; TensorRT takes int8
// only as QuantizeLinear/DequantizeLinear pairs), and onnxruntime's
// SimplifiedLayerNormalization written there. A
// model holding one was written for onnxruntime: onnxruntime-genai's int4
// decoders (MatMulNBits, GroupQueryAttention), the transformer optimizer's
// BERTs (Attention, SkipLayerNormalization), quantize_dynamic's and
// QOperator-format models, a session's saved optimized graph (FusedConv).
// Priced under another runtime, each is priced as onnxcost's kernel for
// it, the kernel a plugin would run.

// tensorRTLacks are the default domain's ops only onnxruntime runs:
// its integer arithmetic, which no release of TensorRT's parser imports
// (trtFirstImported), and SimplifiedLayerNormalization, which onnxruntime
// registers in the default domain as well as its own (onnxruntime-genai's
// model builder and the transformer optimizer write it there).
var tensorRTLacks = map[string]bool{"ConvInteger": true, "MatMulInteger": true, "QLinearConv": true, "QLinearMatMul": true,
	"DynamicQuantizeLinear": true, "SimplifiedLayerNormalization": true}

// ContribRuntime is the runtime a model holding operators only
// onnxruntime runs is priced under when no runtime is named:
// session.run with host arrays, as onnxruntime's Python API runs it.
const ContribRuntime = "onnxruntime"

// ContribCacheRuntime is ContribRuntime for a decoder with a key/value
// cache among its inputs: onnxruntime-genai binds its inputs, outputs
// and cache in device memory (its State classes bind OrtValues allocated
// on the device), so a step copies no cache between host and device, as
// session.run with host arrays would every step.
const ContribCacheRuntime = "onnxruntime-iobinding"

// isContribDomain reports whether a node domain is onnxruntime's contrib
// domain or one of its sub-domains (com.microsoft.nchwc).
func isContribDomain(d string) bool {
	return d == "com.microsoft" || strings.HasPrefix(d, "com.microsoft.")
}

// ortOnlyOps counts g's operators only onnxruntime runs, by op type,
// subgraphs included: contrib ones and the default domain's
// (tensorRTLacks), apart; trt counts the default domain's others that
// some release of TensorRT's parser does not import (trtFirstImported).
func ortOnlyOps(g *ir.Graph) (contrib, ortDefault, trt map[string]int) {
	count := func(m *map[string]int, op string) {
		if *m == nil {
			*m = map[string]int{}
		}
		(*m)[op]++
	}
	var walk func(g *ir.Graph)
	walk = func(g *ir.Graph) {
		for _, n := range g.Nodes {
			switch {
			case isContribDomain(n.Domain):
				count(&contrib, n.OpType)
			case (n.Domain == "" || n.Domain == "ai.onnx") && tensorRTLacks[n.OpType]:
				count(&ortDefault, n.OpType)
			case n.Domain == "" || n.Domain == "ai.onnx":
				if _, listed := trtFirstImported[n.OpType]; listed {
					count(&trt, n.OpType)
				}
			}
			for _, sub := range n.Subgraphs() {
				walk(sub)
			}
		}
	}
	if g != nil {
		walk(g)
	}
	return contrib, ortDefault, trt
}

// opList names counted ops by count then name ("MatMulNBits ×14,
// GroupQueryAttention ×2"), the first few.
func opList(ops map[string]int) string {
	names := make([]string, 0, len(ops))
	for op := range ops {
		names = append(names, op)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		if ops[a] != ops[b] {
			return ops[a] > ops[b]
		}
		return a < b
	})
	const shown = 4
	parts := make([]string, 0, shown+1)
	for i, op := range names {
		if i == shown {
			parts = append(parts, fmt.Sprintf("%d more", len(names)-shown))
			break
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", op, ops[op]))
	}
	return strings.Join(parts, ", ")
}

// ORTOnlyOps names the model's operators only onnxruntime runs, as read:
// "com.microsoft: MatMulNBits ×14, GroupQueryAttention ×2; MatMulInteger
// ×1"; "" when it has none.
func (l *Loaded) ORTOnlyOps() string {
	var parts []string
	if len(l.contrib) > 0 {
		parts = append(parts, "com.microsoft: "+opList(l.contrib))
	}
	if len(l.ortDefault) > 0 {
		parts = append(parts, opList(l.ortDefault))
	}
	return strings.Join(parts, "; ")
}

// RequestedRuntime is the runtime a request names: the one given (a
// --runtime flag, a budget's or a profile's), else PyTorch eager for a
// training step or a call under torch.autocast (a -amp dtype: each runs
// there unless told otherwise), else "" for the model to decide
// (ModelRuntime). Every command and the browser read it here, so that
// they cannot disagree.
func RequestedRuntime(name string, training bool, dtype string) string {
	switch {
	case strings.TrimSpace(name) != "":
		return name
	case training || strings.HasSuffix(strings.ToLower(strings.TrimSpace(dtype)), "-amp"):
		return train.Runtime
	}
	return ""
}

// ModelRuntime names the runtime l is priced under when no runtime is
// named and neither training nor autocast decides it: for a model
// holding operators only onnxruntime runs ContribCacheRuntime where it
// has a cache, else ContribRuntime; for any other hwdb.DefaultRuntime.
func ModelRuntime(l *Loaded) string {
	switch {
	case len(l.contrib) == 0 && len(l.ortDefault) == 0:
		return hwdb.DefaultRuntime
	case HasCacheInput(l.Model.Graph):
		return ContribCacheRuntime
	}
	return ContribRuntime
}

// SettleRuntime is the runtime and plan a read model is priced with: rt,
// or where none was named (rt nil) the one a training step or autocast
// dtype asks for (RequestedRuntime), else the profile ModelRuntime
// names, found in db (the built-in profiles with a user's file over
// them; nil: the built-in ones); plan resolved under it (ResolvePlan).
// report, sweep and generate settle theirs here once the model is read.
func SettleRuntime(l *Loaded, rt *hwdb.Runtime, db *hwdb.RuntimeDB, plan string, tr cost.Training, dtype string) (*hwdb.Runtime, string, error) {
	if rt == nil {
		name := RequestedRuntime("", tr != nil, dtype)
		if name == "" {
			name = ModelRuntime(l)
		}
		var err error
		if rt, err = lookupRuntimeIn(db, name); err != nil {
			return nil, "", err
		}
	}
	plan, err := ResolvePlan(plan, rt, tr)
	return rt, plan, err
}

// HasCacheInput reports whether g reads a key/value cache (IsCacheInput):
// a decoder generate can run.
func HasCacheInput(g *ir.Graph) bool {
	return slices.ContainsFunc(g.Inputs, IsCacheInput)
}

// IsCacheInput reports whether a graph input is a key/value cache, as
// exporters name one: declared with rank 3 or more, named past_* or
// *cache* (past_key_values.0.key, past_key_3, cache_v).
func IsCacheInput(in *ir.Value) bool {
	if in == nil || in.IsInitializer || in.Declared == nil || !in.Declared.Shape.Ranked || len(in.Declared.Shape.Dims) < 3 {
		return false
	}
	lower := strings.ToLower(in.Name)
	return strings.Contains(lower, "past") || strings.Contains(lower, "cache")
}

// runsContrib reports whether rt is one of onnxruntime's profiles (its
// plan is onnxruntime's graph).
func runsContrib(rt *hwdb.Runtime) bool {
	return rt != nil && rt.PlanOrFused() == "onnxruntime"
}

// ContribWarning says, for a model holding operators only onnxruntime
// runs, which runtime prices them and why: the default chosen for the
// model (byModel), or a runtime that cannot run them; for one holding
// ops the runtime's TensorRT parser does not import (pluginWarning),
// that. "" for a model without any.
func ContribWarning(l *Loaded, rt *hwdb.Runtime, byModel bool) string {
	ops := l.ORTOnlyOps()
	switch {
	case ops == "":
		return pluginWarning(l, rt)
	case runsContrib(rt):
		if !byModel {
			return ""
		}
		cache := ""
		if rt.Name == ContribCacheRuntime {
			cache = ", its key/value cache bound on the device as onnxruntime-genai binds it"
		}
		return fmt.Sprintf("runtime %s, the default for a model holding operators only onnxruntime runs (%s): not TensorRT's ONNX parser nor PyTorch%s; --runtime names another", rt.Name, ops, cache)
	}
	who := "TensorRT's ONNX parser does not import them"
	if rt != nil && rt.PlanOrFused() != "fused" {
		who = "PyTorch has no kernels for them"
	}
	name := hwdb.DefaultRuntime
	if rt != nil {
		name = rt.Name
	}
	return fmt.Sprintf("runtime %s cannot run the operators only onnxruntime runs (%s): %s; each is priced as onnxcost's kernel for it, as a plugin would run it; --runtime %s prices the runtime the model is written for", name, ops, who, ModelRuntime(l))
}

// trtParser is the TensorRT release whose parser builds rt's engines:
// its TensorRTVersion, DefaultTensorRTVersion for a fused-plan profile
// that names none (and for no runtime, which is the default's); ok false
// for a runtime that does not parse with TensorRT.
func trtParser(rt *hwdb.Runtime) (version string, ok bool) {
	switch {
	case rt == nil:
		return DefaultTensorRTVersion, true
	case rt.TensorRTVersion != "":
		return rt.TensorRTVersion, true
	case rt.PlanOrFused() == "fused":
		return DefaultTensorRTVersion, true
	}
	return "", false
}

// pluginWarning says which of l's operators the TensorRT parser rt
// builds with does not import (an engine needs a plugin for each,
// priced as onnxcost's kernel for it); "" when it imports them all or
// rt does not parse with TensorRT.
func pluginWarning(l *Loaded, rt *hwdb.Runtime) string {
	version, ok := trtParser(rt)
	if !ok || len(l.trt) == 0 {
		return ""
	}
	table, err := trtTable(version)
	if err != nil {
		return err.Error()
	}
	lacked := map[string]int{}
	for op, n := range l.trt {
		if !trtImports(table, op) {
			lacked[op] = n
		}
	}
	if len(lacked) == 0 {
		return ""
	}
	want, _ := parseTRTVersion(version)
	read, _ := parseTRTVersion(table)
	which := "TensorRT " + version + "'s ONNX parser"
	switch last := trtReleases[len(trtReleases)-1]; {
	case want != read && table == last:
		which = fmt.Sprintf("TensorRT %s's ONNX parser (%s's, the newest read here; a later release may import more)", version, table)
	case want != read:
		which = fmt.Sprintf("TensorRT %s's ONNX parser (%s's, the nearest release read)", version, table)
	}
	return fmt.Sprintf("%s does not import %s (onnx/onnx-tensorrt at that release): an engine of this model needs a plugin for each, priced here as onnxcost's kernel for it", which, opList(lacked))
}
