package hwdb

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/internal/safefile"
	"go.yaml.in/yaml/v3"
)

// Runtime is an execution profile: what a runtime (a CUDA graph, TensorRT,
// ONNX Runtime, PyTorch eager or compiled) adds around the GPU's kernels.
// Times are in seconds and sizes in bytes, like GPU.
type Runtime struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Plan names the kernels the runtime runs (passes/plans.go: eager,
	// inductor, onnxruntime, fused, unfused): the cost commands price a
	// model under the runtime's own plan unless --plan says otherwise.
	// "" is the fused plan.
	Plan string `json:"plan,omitempty"`

	// The device-side gap per kernel is either KernelGapScale times the
	// GPU's LaunchS (stream launches measured per GPU) or, when
	// KernelGapS is set, that absolute figure. See KernelGap.
	KernelGapScale float64 `json:"kernel_gap_scale,omitempty"`
	KernelGapS     float64 `json:"kernel_gap_s,omitempty"`

	// DispatchS is the host time to issue one kernel or op. A runtime
	// whose host issues work slower than the GPU runs it leaves the GPU
	// idle; 0 means the host issues nothing per kernel (a graph replay).
	DispatchS float64 `json:"dispatch_s"`
	// ModuleS is the host time of one nn.Module call in an eager
	// framework (__call__, its hooks), charged once per module scope the
	// nodes enter: the scopes their names carry
	// ("/layer1/layer1.0/conv1/Conv" enters /layer1, /layer1/layer1.0
	// and /layer1/layer1.0/conv1), the record torch.onnx keeps of which
	// module called each op; a graph built op by op has none
	// (report.NodeHosts). Scaled by OpCallScale where that is set.
	ModuleS float64 `json:"module_s,omitempty"`
	// OpCallScale, when set, prices each node's host call by its op's
	// kind, as eager PyTorch's calls cost (report.HostKindS: an
	// nn.Conv2d with its bias or a batch norm four to five bare adds, a
	// view a fifth), times this scale: what a whole model's forward pays per
	// call over the same calls timed alone back to back. 0 charges
	// DispatchS per kernel whatever the op (a C++ executor's loop, a
	// compiled wrapper's launches).
	OpCallScale float64 `json:"op_call_scale,omitempty"`
	// CallS is the fixed cost of one call: enqueue, synchronize, wrapper.
	CallS float64 `json:"call_s"`
	// HostNodeS is the host time of a node the runtime computes on the
	// CPU while it issues the GPU's kernels (onnxruntime's CUDA provider
	// runs the shape arithmetic of a dim symbolic in the file there:
	// ir.Session.Host): its executor's step and the small CPU kernel.
	HostNodeS float64 `json:"host_node_s,omitempty"`
	// AutogradS is the host time an eager framework's autograd engine
	// adds per gradient edge of a training step (one per input a
	// gradient flows to: its node's apply, validation, input buffer and
	// sum), on top of DispatchS per kernel; 0 issues backward kernels at
	// DispatchS like the forward's bare ops (a compiled backward).
	AutogradS float64 `json:"autograd_s,omitempty"`
	// OptimParamS is the host time an eager optimizer step spends per
	// parameter tensor outside its kernels (the Python loops of
	// zero_grad, the gradient scaler and the optimizer's state lookup).
	OptimParamS float64 `json:"optim_param_s,omitempty"`
	// CudnnS is the host time a cuDNN convolution call costs beyond a
	// bare op (the v8 API's plan lookup and graph execution), charged to
	// each gradient convolution an eager backward issues; the forward's
	// is inside ModuleS, which was fitted on models with convolutions.
	CudnnS float64 `json:"cudnn_s,omitempty"`
	// BNPrepKernels is the number of small per-channel kernels an eager
	// framework runs before each half-precision 2-D batch norm (PyTorch's
	// native batch norm turning fp32 running statistics into a scale and
	// a shift for a channels_last half input). 0 for a runtime whose
	// batch norms are folded.
	BNPrepKernels float64 `json:"bn_prep_kernels,omitempty"`
	// ConvSplitK is 1 when the runtime's forward convolutions may split
	// their K loop over CTAs: TensorRT times every tactic it has for a
	// layer and keeps the fastest, while cuDNN's forward algorithms, which
	// the frameworks call, never split K (cost/perf splitsK).
	ConvSplitK float64 `json:"conv_split_k,omitempty"`
	// ConvWinograd is 1 when the runtime's convolutions are the library's
	// (cuDNN, MIOpen) with its algorithm choice, which runs a 3×3
	// stride-1 convolution on the vector path as Winograd where that is
	// faster, on GPUs whose library has the kernels (cost/perf
	// LibraryWinograd). 0 for a runtime whose plan substitutes Winograd
	// itself (the fused plan's pass) or never runs it.
	ConvWinograd float64 `json:"conv_winograd,omitempty"`
	// ConvDepthwiseNative is 1 when the runtime runs an NCHW depthwise
	// convolution with the framework's own direct kernel instead of the
	// library's (PyTorch's conv_depthwise2d: cost/perf DirectConv) unless
	// it is fp16 of a shape PyTorch hands to cuDNN
	// (cost cudnnTakesHalfDepthwise).
	ConvDepthwiseNative float64 `json:"conv_depthwise_native,omitempty"`
	// ConvLayoutTransposes is 1 when the runtime's tensor-core
	// convolutions take NCHW tensors (ONNX's layout, PyTorch's default)
	// to cuDNN, whose tensor-core kernels are NHWC: the input and filter
	// are transposed to NHWC before the kernel and the output back after.
	// 0 for a runtime that runs its convolutions channels_last (the
	// -nhwc profiles, Inductor's layout optimisation) or picks its own
	// formats (TensorRT).
	ConvLayoutTransposes float64 `json:"conv_layout_transposes,omitempty"`
	// IndexSelectGather is 1 when the runtime's PyTorch (2.8 and later:
	// pytorch/pytorch PR #151715) runs an index_select of more than 16
	// indices, F.embedding's lookup, as a gather: a vectorized copy of
	// whole 16-byte vectors per slice where the slices allow, the generic
	// gather loop otherwise (cost/perf gather.go). 0 for an eager runtime
	// of an older PyTorch, whose indexSelectLargeIndex loop is priced.
	IndexSelectGather float64 `json:"index_select_gather,omitempty"`
	// TF32Conv and TF32GEMM are 1 when the runtime, left at its defaults,
	// lets fp32 convolutions (GEMMs) run as TF32 on GPUs with TF32 tensor
	// cores. The cost model prices a model at its own fp32 as IEEE fp32
	// and says so (--dtype tf32 prices the TF32 path).
	TF32Conv float64 `json:"tf32_conv,omitempty"`
	TF32GEMM float64 `json:"tf32_gemm,omitempty"`
	// SyncEachCall is 1 when every call ends by waiting for the device
	// (onnxruntime's session run synchronizes its providers' streams
	// unless told not to), so back-to-back calls never overlap: a call
	// takes its latency, the host's per-call work in series with the
	// kernels. 0: the host's next call overlaps this call's kernels.
	SyncEachCall float64 `json:"sync_each_call,omitempty"`
	// HostIO is 1 when a call's inputs arrive in host memory and its
	// outputs are returned there (a session run fed host arrays, no IO
	// binding): each input a GPU kernel reads is copied to the device
	// before the first kernel and each output the GPU wrote copied back
	// after the last, over the host link (cost's hostIO). 0: inputs
	// and outputs stay on the device (a framework's CUDA tensors, bound
	// buffers, a generation loop's cache).
	HostIO float64 `json:"host_io,omitempty"`
	// CUDAGraph is 1 when the runtime's session captures its kernels in
	// one CUDA graph over its first runs and every later call replays it
	// (onnxruntime's enable_cuda_graph): a replay runs no host work per
	// node, not even the host nodes, and the session refuses a model it
	// cannot capture (cost's captureRefusal). 0: the profile says nothing
	// of capture (a PyTorch graph replay's capture is the user's).
	CUDAGraph float64 `json:"cuda_graph,omitempty"`
	// BFCArena is 1 when the runtime allocates activations from
	// onnxruntime's BFC arena, which takes device memory in doubling
	// regions and keeps them (cost's ortArenaReserve): the device memory
	// a warmed-up session holds is its weights, the arena's regions and
	// the floor, not the live tensors' peak.
	BFCArena float64 `json:"bfc_arena,omitempty"`

	// ContextBytes is the CUDA context (driver, loaded kernels);
	// WorkspaceBytes the library handles and workspaces. Their sum is the
	// device memory the runtime holds before any tensor (MemoryFloor).
	ContextBytes   float64 `json:"context_bytes"`
	WorkspaceBytes float64 `json:"workspace_bytes,omitempty"`

	// Sources maps a figure's JSON name to where it comes from.
	Sources map[string]string `json:"sources"`
	Notes   []string          `json:"notes,omitempty"`

	// Uncaptured names, for a CUDA-graph profile (CUDAGraph), the
	// profile a call it does not capture runs as, issuing the kernels
	// node by node (onnxruntime-genai runs the prompt's step with capture
	// off, run option gpu_graph_id -1, and captures the decode steps).
	Uncaptured string `json:"uncaptured,omitempty"`
	// uncaptured is that profile, resolved by the RuntimeDB.
	uncaptured *Runtime

	// TensorRTVersion, for a runtime that builds its engine with
	// TensorRT's ONNX parser, is that release ("10.1", major.minor):
	// which of the model's operators the parser does not import, so that
	// an engine needs a plugin for each (pipeline's tables, read from
	// onnx/onnx-tensorrt by release). "" for other runtimes.
	TensorRTVersion string `json:"tensorrt_version,omitempty"`
}

// tensorRTVersionField is TensorRTVersion's name in a profile file and in
// its sources: a text figure, sourced like the numbers.
const tensorRTVersionField = "tensorrt_version"

// UncapturedProfile is the profile a call r does not capture runs as
// (Uncaptured), nil when r names none.
func (r *Runtime) UncapturedProfile() *Runtime {
	if r.uncaptured == nil {
		return nil
	}
	return r.uncaptured.Clone()
}

// DefaultRuntime names the profile the cost commands use when no runtime
// is chosen: a TensorRT engine, the fused plan. Someone who asks what an
// ONNX file costs on a GPU is deploying that file, and the runtime built
// to run an ONNX file fastest on NVIDIA GPUs is TensorRT (the published
// inference results onnxcost is checked against are TensorRT's); the
// other runtimes are a --runtime away, a training step defaults to
// PyTorch eager (train.Runtime), and a model holding operators only
// onnxruntime runs (its contrib domain, integer ops TensorRT lists as unsupported) to
// onnxruntime (pipeline.ModelRuntime).
const DefaultRuntime = "tensorrt"

// PlanOrFused is the plan the runtime prices a model with.
func (r *Runtime) PlanOrFused() string {
	if r == nil || r.Plan == "" {
		return "fused"
	}
	return r.Plan
}

// KernelGap returns the device-side gap per kernel on g under r.
func (r *Runtime) KernelGap(g *GPU) float64 {
	if r.KernelGapS > 0 {
		return r.KernelGapS
	}
	return r.KernelGapScale * g.LaunchS
}

// MemoryFloor returns the device memory the runtime holds before any
// tensor of the model: context plus workspaces.
func (r *Runtime) MemoryFloor() float64 { return r.ContextBytes + r.WorkspaceBytes }

// Clone returns a deep copy.
func (r *Runtime) Clone() *Runtime {
	c := *r
	c.Notes = slices.Clone(r.Notes)
	c.Sources = make(map[string]string, len(r.Sources))
	for k, v := range r.Sources {
		c.Sources[k] = v
	}
	return &c
}

// rtFigure is one numeric field of a profile: its JSON name, the multiplier
// from the spelling in the file, the largest plausible value in the file's
// unit (a bigger one is most likely a unit slip), and where it lives.
type rtFigure struct {
	json   string
	scale  float64
	limit  float64
	zeroOK bool // 0 is meaningful (no dispatch cost)
	ptr    func(r *Runtime) *float64
}

// rtFigures lists every numeric key a profile may use, in both spellings
// (human units and the JSON form's base units).
var rtFigures = func() map[string]rtFigure {
	m := map[string]rtFigure{}
	add := func(human, base string, scale, limit float64, zeroOK bool, ptr func(r *Runtime) *float64) {
		m[human] = rtFigure{json: base, scale: scale, limit: limit, zeroOK: zeroOK, ptr: ptr}
		if base != human {
			m[base] = rtFigure{json: base, scale: 1, limit: limit * scale, zeroOK: zeroOK, ptr: ptr}
		}
	}
	add("kernel_gap_scale", "kernel_gap_scale", 1, 4, false, func(r *Runtime) *float64 { return &r.KernelGapScale })
	add("kernel_gap_us", "kernel_gap_s", usec, 1000, false, func(r *Runtime) *float64 { return &r.KernelGapS })
	add("dispatch_us", "dispatch_s", usec, 10000, true, func(r *Runtime) *float64 { return &r.DispatchS })
	add("module_us", "module_s", usec, 10000, true, func(r *Runtime) *float64 { return &r.ModuleS })
	add("op_call_scale", "op_call_scale", 1, 10, true, func(r *Runtime) *float64 { return &r.OpCallScale })
	add("call_us", "call_s", usec, 100000, true, func(r *Runtime) *float64 { return &r.CallS })
	add("host_node_us", "host_node_s", usec, 10000, true, func(r *Runtime) *float64 { return &r.HostNodeS })
	add("autograd_us", "autograd_s", usec, 10000, true, func(r *Runtime) *float64 { return &r.AutogradS })
	add("optim_param_us", "optim_param_s", usec, 10000, true, func(r *Runtime) *float64 { return &r.OptimParamS })
	add("cudnn_us", "cudnn_s", usec, 10000, true, func(r *Runtime) *float64 { return &r.CudnnS })
	add("bn_prep_kernels", "bn_prep_kernels", 1, 4, true, func(r *Runtime) *float64 { return &r.BNPrepKernels })
	add("conv_split_k", "conv_split_k", 1, 1, true, func(r *Runtime) *float64 { return &r.ConvSplitK })
	add("conv_winograd", "conv_winograd", 1, 1, true, func(r *Runtime) *float64 { return &r.ConvWinograd })
	add("conv_depthwise_native", "conv_depthwise_native", 1, 1, true, func(r *Runtime) *float64 { return &r.ConvDepthwiseNative })
	add("conv_layout_transposes", "conv_layout_transposes", 1, 1, true, func(r *Runtime) *float64 { return &r.ConvLayoutTransposes })
	add("index_select_gather", "index_select_gather", 1, 1, true, func(r *Runtime) *float64 { return &r.IndexSelectGather })
	add("tf32_conv", "tf32_conv", 1, 1, true, func(r *Runtime) *float64 { return &r.TF32Conv })
	add("tf32_gemm", "tf32_gemm", 1, 1, true, func(r *Runtime) *float64 { return &r.TF32GEMM })
	add("sync_each_call", "sync_each_call", 1, 1, true, func(r *Runtime) *float64 { return &r.SyncEachCall })
	add("host_io", "host_io", 1, 1, true, func(r *Runtime) *float64 { return &r.HostIO })
	add("cuda_graph", "cuda_graph", 1, 1, true, func(r *Runtime) *float64 { return &r.CUDAGraph })
	add("bfc_arena", "bfc_arena", 1, 1, true, func(r *Runtime) *float64 { return &r.BFCArena })
	add("context_mib", "context_bytes", mib, 16384, false, func(r *Runtime) *float64 { return &r.ContextBytes })
	add("workspace_mib", "workspace_bytes", mib, 16384, true, func(r *Runtime) *float64 { return &r.WorkspaceBytes })
	return m
}()

// rtRequired are the figures every finished profile has (the kernel gap is
// checked separately: one of its two forms).
var rtRequired = []string{"dispatch_s", "call_s", "context_bytes"}

// RuntimeDB is a set of execution profiles looked up by name.
type RuntimeDB struct {
	list   []*Runtime // sorted by name
	byName map[string]*Runtime
}

// BuiltinRuntimes returns the embedded profiles. The error is non-nil only
// if the embedded data is broken, which the package tests rule out.
func BuiltinRuntimes() (*RuntimeDB, error) { return builtinRuntimes() }

// Runtimes returns copies of the built-in profiles, sorted by name (nil if
// the embedded data is broken; see BuiltinRuntimes).
func Runtimes() []*Runtime { return builtinAll(builtinRuntimes) }

// LookupRuntime finds a built-in profile by name (see RuntimeDB.Lookup).
func LookupRuntime(name string) (*Runtime, error) { return builtinLookup(builtinRuntimes, name) }

// RuntimesWithUserFile returns the built-in profiles plus those of a user
// file (YAML or JSON, the format of hwdb/runtimes.yaml). A user profile
// with a built-in name replaces it; "base: NAME" starts from a built-in
// profile and overrides only the figures given.
func RuntimesWithUserFile(path string) (*RuntimeDB, error) {
	data, err := safefile.ReadFile(path, safefile.SideFileLimit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, safefile.Reason(err))
	}
	return RuntimesWithUserData(path, data)
}

// RuntimesWithUserData is RuntimesWithUserFile on a file's contents
// already read (the browser's, which has no path): name is what its
// errors call it.
func RuntimesWithUserData(name string, data []byte) (*RuntimeDB, error) {
	b, err := builtinRuntimes()
	if err != nil {
		return nil, err
	}
	user, err := parseRuntimes(data, name, false, b)
	if err != nil {
		return nil, err
	}
	return newRuntimeDB(b.list, user), nil
}

func newRuntimeDB(base, user []*Runtime) *RuntimeDB {
	db := &RuntimeDB{byName: map[string]*Runtime{}}
	for _, set := range [][]*Runtime{base, user} {
		for _, r := range set {
			db.byName[normalize(r.Name)] = r
		}
	}
	// Resolved on copies: the built-in profiles are shared with every
	// user file's database, whose profiles may replace the one named.
	for key, r := range db.byName {
		if r.Uncaptured != "" {
			c := r.Clone()
			c.uncaptured = db.byName[normalize(r.Uncaptured)]
			db.byName[key] = c
		}
	}
	for _, r := range db.byName {
		db.list = append(db.list, r)
	}
	sort.Slice(db.list, func(i, j int) bool { return db.list[i].Name < db.list[j].Name })
	return db
}

// All returns copies of every profile, sorted by name.
func (db *RuntimeDB) All() []*Runtime { return cloneAll(db.list) }

// Lookup finds a profile by name, ignoring case, '-', '_' and spaces, and
// returns a copy; an unknown name's error lists the known ones.
func (db *RuntimeDB) Lookup(name string) (*Runtime, error) {
	if r, ok := db.byName[normalize(name)]; ok {
		return r.Clone(), nil
	}
	names := make([]string, len(db.list))
	for i, r := range db.list {
		names[i] = r.Name
	}
	return nil, fmt.Errorf("unknown runtime %q (known: %s)", name, strings.Join(names, ", "))
}

// parseRuntimes decodes a profile file: a list of profiles, a mapping with
// a "runtimes" list, or one profile. Built-in data must source every
// figure; a user file's unsourced figure is sourced to its line.
func parseRuntimes(data []byte, origin string, builtin bool, bases *RuntimeDB) ([]*Runtime, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", origin, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: no runtime profiles", origin)
	}
	el := &errList{origin: origin}
	root := deref(doc.Content[0])
	var items []*yaml.Node
	switch {
	case root.Kind == yaml.SequenceNode:
		items = root.Content
	case root.Kind == yaml.MappingNode && mapGet(root, "runtimes") != nil:
		v := deref(mapGet(root, "runtimes"))
		if len(root.Content) != 2 || v.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf(`%s:%d: "runtimes" must be a list of profiles and the only key`, origin, root.Line)
		}
		items = v.Content
	case root.Kind == yaml.MappingNode:
		items = []*yaml.Node{root}
	default:
		return nil, fmt.Errorf("%s:%d: expected a list of runtime profiles", origin, root.Line)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no runtime profiles", origin)
	}
	var out []*Runtime
	seen := map[string]int{}
	for _, it := range items {
		r := decodeRuntime(deref(it), origin, builtin, bases, out, el)
		if r == nil {
			continue
		}
		k := normalize(r.Name)
		if prev, dup := seen[k]; dup {
			el.add(it.Line, "runtime %q defined twice in this file (also at line %d)", r.Name, prev)
			continue
		}
		seen[k] = it.Line
		out = append(out, r)
	}
	if len(el.errs) > 0 {
		return nil, el.err()
	}
	return out, nil
}

// decodeRuntime reads one profile, resolves its base (earlier in the same
// file, else a built-in profile) and validates it.
func decodeRuntime(n *yaml.Node, origin string, builtin bool, bases *RuntimeDB, earlier []*Runtime, el *errList) *Runtime {
	if n.Kind != yaml.MappingNode {
		el.add(n.Line, "a runtime profile must be a mapping of field: value")
		return nil
	}
	nerr := len(el.errs)
	p := readProfile(n, el)
	if p.own.Name == "" {
		el.add(n.Line, "runtime profile has no name")
		return nil
	}
	if len(el.errs) > nerr {
		return nil
	}
	r := p.start(earlier, bases, el)
	if r == nil {
		return nil
	}
	p.overlay(r, origin, builtin)
	if r.Uncaptured != "" && !knownProfile(r.Uncaptured, earlier, bases) {
		el.add(p.keys["uncaptured"], "uncaptured %q is not a known runtime profile", r.Uncaptured)
	}
	validateRuntime(r, n.Line, p.base != "", p.set, p.srcLine, el)
	return r
}

// knownProfile reports whether name is a profile earlier in the same
// file or in bases.
func knownProfile(name string, earlier []*Runtime, bases *RuntimeDB) bool {
	for _, e := range earlier {
		if normalize(e.Name) == normalize(name) {
			return true
		}
	}
	if bases == nil {
		return false
	}
	_, err := bases.Lookup(name)
	return err == nil
}

// profileFields is what one profile in a file says, before its base is
// applied.
type profileFields struct {
	// own holds the name, description and the figures the profile sets.
	own      Runtime
	set      map[string]int // JSON name of each figure set -> line
	sources  map[string]string
	srcLine  map[string]int
	keys     map[string]int // field -> line
	base     string
	notes    []string
	hasNotes bool
}

// readProfile reads the fields of mapping n, reporting malformed ones to el.
func readProfile(n *yaml.Node, el *errList) *profileFields {
	p := &profileFields{
		set:     map[string]int{},
		sources: map[string]string{},
		srcLine: map[string]int{},
		keys:    map[string]int{},
	}
	for k, v := range mappingFields(n, el, p.keys) {
		key := k.Value
		switch key {
		case tensorRTVersionField:
			s, ok := scalarString(v)
			if _, _, valid := ParseTensorRTVersion(s); !ok || !valid {
				el.add(v.Line, "%s must be a TensorRT release as major.minor (10.1, 8.6), got %q", key, v.Value)
				continue
			}
			p.own.TensorRTVersion = s
			p.set[tensorRTVersionField] = v.Line
		case "name", "description", "base", "plan", "uncaptured":
			s, ok := scalarString(v)
			if !ok || strings.TrimSpace(s) == "" || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				el.add(v.Line, "%s must be a non-empty one-line string", key)
				continue
			}
			switch key {
			case "name":
				p.own.Name = s
			case "description":
				p.own.Description = s
			case "plan":
				p.own.Plan = s
			case "uncaptured":
				p.own.Uncaptured = s
			default:
				p.base = s
			}
		case "notes":
			list, ok := stringList(v)
			if !ok {
				el.add(v.Line, "notes must be a list of strings")
				continue
			}
			p.notes, p.hasNotes = list, true
		case "sources":
			decodeSourceMap(v, p.sources, p.srcLine, el, func(part string) (string, bool) {
				if part == tensorRTVersionField {
					return part, true
				}
				f, ok := rtFigures[part]
				return f.json, ok
			}, "sources: %q is not a runtime figure")
		default:
			p.figure(k, v, el)
		}
	}
	return p
}

// figure reads the numeric field k: v into p.own, checking its range.
func (p *profileFields) figure(k, v *yaml.Node, el *errList) {
	key := k.Value
	f, ok := rtFigures[key]
	if !ok {
		el.add(k.Line, "unknown field %q (known: %s)", key, runtimeKeys())
		return
	}
	if prev, dup := p.set[f.json]; dup {
		el.add(k.Line, "%s given twice in one profile (also at line %d)", f.json, prev)
		return
	}
	x, ok := number(v)
	if !ok || math.IsInf(x, 0) || x < 0 || (x == 0 && !f.zeroOK) {
		want := "positive"
		if f.zeroOK {
			want = "zero or positive"
		}
		el.add(v.Line, "%s must be a %s finite number, got %q", key, want, v.Value)
		return
	}
	if x > f.limit {
		el.add(v.Line, "%s = %s is implausibly large (over %g): check the unit", key, v.Value, f.limit)
		return
	}
	*f.ptr(&p.own) = x * f.scale
	p.set[f.json] = v.Line
}

// start returns the profile the overlay begins from: a copy of the base
// (the last of that name earlier in the file, else from bases), or an
// empty one. It returns nil, reporting to el, when the base is unknown.
func (p *profileFields) start(earlier []*Runtime, bases *RuntimeDB, el *errList) *Runtime {
	if p.base == "" {
		return &Runtime{Sources: map[string]string{}}
	}
	var b *Runtime
	for _, e := range earlier {
		if normalize(e.Name) == normalize(p.base) {
			b = e.Clone()
		}
	}
	if b == nil && bases != nil {
		if found, err := bases.Lookup(p.base); err == nil {
			b = found
		}
	}
	if b == nil {
		el.add(p.keys["base"], "base %q is not a known runtime profile", p.base)
	}
	return b
}

// overlay writes what the profile sets over r, with the source of each
// figure: the file's own sources entry, else (for a user file) the file
// and line, else none.
func (p *profileFields) overlay(r *Runtime, origin string, builtin bool) {
	r.Name = p.own.Name
	if p.own.Description != "" {
		r.Description = p.own.Description
	}
	if p.own.Plan != "" {
		r.Plan = p.own.Plan
	}
	if p.own.Uncaptured != "" {
		r.Uncaptured = p.own.Uncaptured
	}
	if p.hasNotes {
		r.Notes = p.notes
	}
	// The two forms of the kernel gap exclude each other: setting one
	// drops an inherited other.
	if _, ok := p.set["kernel_gap_s"]; ok {
		r.KernelGapScale = 0
		delete(r.Sources, "kernel_gap_scale")
	}
	if _, ok := p.set["kernel_gap_scale"]; ok {
		r.KernelGapS = 0
		delete(r.Sources, "kernel_gap_s")
	}
	source := func(name string, line int) {
		switch src, has := p.sources[name]; {
		case has:
			r.Sources[name] = src
		case !builtin:
			r.Sources[name] = fmt.Sprintf("user file %s:%d", origin, line)
		default:
			delete(r.Sources, name)
		}
	}
	for _, f := range rtFigures {
		line, ok := p.set[f.json]
		if !ok {
			continue
		}
		*f.ptr(r) = *f.ptr(&p.own)
		source(f.json, line)
	}
	if line, ok := p.set[tensorRTVersionField]; ok {
		r.TensorRTVersion = p.own.TensorRTVersion
		source(tensorRTVersionField, line)
	}
	for name, src := range p.sources {
		if _, setHere := p.set[name]; !setHere {
			r.Sources[name] = src // re-sourcing an inherited figure
		}
	}
}

// ParseTensorRTVersion reads a TensorRT release as a profile's
// tensorrt_version gives it, major.minor with up to two more numbers
// (10.1, 8.6.1, 8.6.1.6), and returns its major and minor; ok false for
// anything else.
func ParseTensorRTVersion(s string) (major, minor int, ok bool) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 4 {
		return 0, 0, false
	}
	var n [2]int
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return 0, 0, false
		}
		if i < 2 {
			n[i] = int(v)
		}
	}
	return n[0], n[1], true
}

// validateRuntime checks a finished profile: required figures, exactly one
// form of the kernel gap, and a source for every figure it has.
func validateRuntime(r *Runtime, line int, hasBase bool, set, srcLine map[string]int, el *errList) {
	// A required figure may be 0 (no dispatch cost), so "given" is judged
	// on the file, not the value; a base was validated when it was built.
	for _, name := range rtRequired {
		if _, given := set[name]; !given && !hasBase {
			el.add(line, "%s: %s is required", r.Name, name)
		}
	}
	switch {
	case r.KernelGapS > 0 && r.KernelGapScale > 0:
		el.add(line, "%s: give kernel_gap_us or kernel_gap_scale, not both", r.Name)
	case r.KernelGapS == 0 && r.KernelGapScale == 0:
		el.add(line, "%s: kernel_gap_scale (x the GPU's launch_us) or kernel_gap_us is required", r.Name)
	}
	have := runtimeFigureNames(r)
	for _, name := range have {
		if _, ok := r.Sources[name]; !ok {
			el.add(line, "%s: %s has no source", r.Name, name)
		}
	}
	for name, l := range srcLine {
		if !slices.Contains(have, name) {
			el.add(l, "%s: source given for %s, which the profile does not have", r.Name, name)
		}
	}
}

// runtimeFigureNames lists the JSON names of the figures r has, sorted:
// the required ones always (their 0 is a value), the others when non-zero.
func runtimeFigureNames(r *Runtime) []string {
	var names []string
	for _, f := range rtFigures {
		v := *f.ptr(r)
		if (v != 0 || slices.Contains(rtRequired, f.json)) && !slices.Contains(names, f.json) {
			names = append(names, f.json)
		}
	}
	if r.TensorRTVersion != "" {
		names = append(names, tensorRTVersionField)
	}
	sort.Strings(names)
	return names
}

func runtimeKeys() string {
	keys := []string{"name", "description", "base", "plan", "uncaptured", tensorRTVersionField, "notes", "sources"}
	for k := range rtFigures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// WriteRuntimes writes one aligned line per profile: the kernel gap (as a
// multiple of the GPU's launch figure, or absolute), host dispatch per
// kernel, fixed cost per call, and the memory floor.
func WriteRuntimes(w io.Writer, rs []*Runtime) error {
	rows := [][]string{{"NAME", "PLAN", "KERNEL-GAP", "DISPATCH-us", "CALL-us", "FLOOR-MiB"}}
	descs := []string{"DESCRIPTION"}
	for _, r := range rs {
		gap := "x" + strconv.FormatFloat(r.KernelGapScale, 'g', 3, 64) + " launch"
		if r.KernelGapS > 0 {
			gap = num(r.KernelGapS/usec) + " us"
		}
		rows = append(rows, []string{r.Name, r.PlanOrFused(), gap, numZero(r.DispatchS / usec), numZero(r.CallS / usec),
			numZero(r.MemoryFloor() / mib)})
		descs = append(descs, r.Description)
	}
	// Name, plan and gap are text, the numbers right-aligned, then the
	// description as is.
	var b strings.Builder
	for i, line := range strings.Split(strings.TrimSuffix(align(rows, 3), "\n"), "\n") {
		b.WriteString(strings.TrimRight(line+"  "+descs[i], " ") + "\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	_, err := io.WriteString(w, "PLAN: the kernels the runtime runs (--plan). KERNEL-GAP: device time per kernel, as a multiple of the GPU's launch_us or absolute. "+
		"DISPATCH: host time per kernel (eager PyTorch's: a bare add's, each op its kind's measured multiple of it times op_call_scale). CALL: fixed per call. FLOOR: context + workspaces.\n")
	return err
}

// numZero is num, but prints a real zero as 0 (a profile's "no dispatch
// cost" is a figure, not a missing path).
func numZero(x float64) string {
	if x == 0 {
		return "0"
	}
	return num(x)
}
