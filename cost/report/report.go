package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// SchemaVersion is the version of the JSON contracts in this package
// (report and compare). Fields are added, never renamed; bump only on an
// incompatible change.
const SchemaVersion = 1

// Header opens every JSON output of onnxcost: which contract version it
// follows and which build wrote it.
type Header struct {
	SchemaVersion int    `json:"schema_version"`
	ToolVersion   string `json:"tool_version"`
}

// Report is the result of Analyze: the JSON contract of `onnxcost report`.
// Quantities are float64 so that totals of huge models saturate in
// precision instead of wrapping (a 2^63-FLOP model stays positive).
type Report struct {
	Header
	CostModelVersion string `json:"cost_model_version"`
	Model            string `json:"model"`
	GPU              string `json:"gpu"`
	GPUSpecHash      string `json:"gpu_spec_hash"`
	// CountOnly marks a report counted with no GPU (cost.Count): GPU and
	// GPUSpecHash are "", and every time, energy, power, bound, memory
	// level, precision and fit figure is zero or empty because it needs a
	// GPU, not because it is free. Absent from a priced report.
	CountOnly bool   `json:"count_only,omitempty"`
	DType     string `json:"dtype"`
	// Quantized is the quantized type ("int8", "fp8") of a quantized
	// model (integer ops such as QLinearConv, or Conv/MatMul/Gemm between
	// DequantizeLinear inputs): with no --dtype its quantized nodes are
	// costed at it and DType says so. "" for a float model.
	Quantized string `json:"quantized,omitempty"`
	Plan      string `json:"plan"`
	// Calibration says which measured calibration corrected the kernel
	// times (package calib: the file, the GPU it was fitted on, whether
	// it applied in full or transferred); absent when none.
	Calibration string `json:"calibration,omitempty"`
	// CalibrationFile is that calibration's file as given to
	// --calibration ("(just fitted)" for one not read from a file), what
	// a header names; absent when none. Reports saved before it existed
	// carry only Calibration (see CalibrationName).
	CalibrationFile string `json:"calibration_file,omitempty"`
	// Warm marks a call priced as one of a back-to-back series (a
	// benchmark loop): L2 held what the previous call left (cost.Options.
	// Warm). Absent for the first call, every weight read from DRAM.
	Warm           bool             `json:"warm,omitempty"`
	Bindings       map[string]int64 `json:"bindings"`
	FLOPConvention string           `json:"flop_convention"`
	// Runtime is the execution profile applied (nil in reports written
	// before profiles existed).
	Runtime        *Runtime      `json:"runtime,omitempty"`
	Totals         Totals        `json:"totals"`
	Nodes          []NodeCost    `json:"nodes"`
	Warnings       []string      `json:"warnings"`
	UnsupportedOps []Unsupported `json:"unsupported_ops"`
}

// Totals sums the per-node figures, plus whole-model quantities.
type Totals struct {
	Counts
	Params     float64 `json:"params"`
	ParamBytes float64 `json:"param_bytes"`
	// TiedParams are the elements of weights the file holds as a
	// transposed copy of another (ir.TransposedCopies: a tied LM head):
	// left out of Params, as the framework counts them, and out of
	// ParamBytes under a runtime that runs the framework's model
	// (PyTorch's plans), which holds the matrix once.
	TiedParams float64 `json:"tied_params,omitempty"`
	Launches   float64 `json:"launches"`
	TimeS      float64 `json:"time_s"`
	// TimeIntervalS is the 80% interval [low, high] around TimeS: where
	// the measured time is expected to fall four times in five, from the
	// held-out error of each kernel class on the GPU's family (narrower
	// under a calibration fitted on this GPU; package calib). Absent when
	// counting only.
	TimeIntervalS []float64 `json:"time_interval_s,omitempty"`
	// IntervalBasis says whose measured kernels an uncalibrated
	// interval rests on where they are not the GPU family's own (a
	// family with none here: its parent's, or every family's together);
	// absent otherwise (package calib, IntervalBasis).
	IntervalBasis string `json:"interval_basis,omitempty"`
	// EnergyJ is the board's energy over the call (under tensor
	// parallelism, GPUs > 1: one GPU's, the group's GPUs times it).
	EnergyJ float64 `json:"energy_j"`
	// AvgPowerW is EnergyJ/TimeS, the board's average power over the
	// model; EDPJS is the energy-delay product EnergyJ·TimeS.
	AvgPowerW float64 `json:"avg_power_w"`
	EDPJS     float64 `json:"edp_js"`
	// PowerCapW and SMClockCapMHz are the power cap and SM clock lock the
	// report was priced under (0: the GPU's default limit, no lock).
	PowerCapW       float64 `json:"power_cap_w"`
	SMClockCapMHz   float64 `json:"sm_clock_cap_mhz"`
	PeakMemoryBytes float64 `json:"peak_memory_bytes"`
	// PeakActivationBytes is the peak of live activations alone (tensors
	// produced and not yet freed, walking nodes in topological order, and
	// the graph inputs, held by the caller);
	// PeakMemoryBytes = PeakActivationBytes + ParamBytes.
	PeakActivationBytes float64 `json:"peak_activation_bytes"`
	// GEMMConvTimeShare is the fraction of TimeS spent in Conv, Gemm,
	// MatMul and recurrent (LSTM/GRU/RNN) nodes, fused or not.
	GEMMConvTimeShare float64 `json:"gemm_conv_time_share"`
	// Nodes is the number of nodes costed in the main graph.
	Nodes int `json:"nodes"`
	// Fits says whether PeakMemoryBytes fits in the GPU's memory,
	// MemoryLimitBytes; when it does not, FitAdvice lists what would make
	// it fit (more GPUs, a smaller batch, a lower precision). See fit.go.
	Fits             bool     `json:"fits"`
	MemoryLimitBytes float64  `json:"memory_limit_bytes"`
	FitAdvice        []string `json:"fit_advice"`
	// Train is set only with --train (train.go).
	Train *Train `json:"train,omitempty"`
	// GPUs is the tensor-parallel degree when above 1 (cost/parallel.go):
	// times are one GPU's, CommunicationTimeS is the part of TimeS spent
	// in all-reduces, and PerGPUPeakMemoryBytes is what one GPU holds
	// (Fits judges it). All three are absent on one GPU.
	GPUs                  int     `json:"gpus,omitempty"`
	CommunicationTimeS    float64 `json:"communication_time_s,omitempty"`
	PerGPUPeakMemoryBytes float64 `json:"per_gpu_peak_memory_bytes,omitempty"`
	// Partial is set when the totals are lower bounds because some nodes
	// could not be costed in full (see Partial); absent when every node
	// was. A reader comparing totals must not take a partial one as the
	// model's cost.
	Partial *Partial `json:"partial,omitempty"`
}

// Partial says how much of the main graph a report's totals miss. A node
// counts once, as uncosted if it is both.
type Partial struct {
	// UncostedNodes counts main-graph nodes with no cost rule (or whose
	// rule failed): counted as 0 everywhere; unsupported_ops names them.
	UncostedNodes int `json:"uncosted_nodes"`
	// UnsizedNodes counts main-graph nodes whose rule met a tensor of
	// unknown shape, typically everything after an op with no shape
	// rule: the unknown part is counted as 0. A control-flow node counts
	// when a node of its body does. UnsizedNodeNames names them, in node
	// order.
	UnsizedNodes     int      `json:"unsized_nodes"`
	UnsizedNodeNames []string `json:"unsized_node_names"`
	// ShareOfNodes is (UncostedNodes+UnsizedNodes) over the main graph's
	// nodes (Totals.Nodes).
	ShareOfNodes float64 `json:"share_of_nodes"`
	// Reason says why, in one sentence.
	Reason string `json:"reason"`
}

// NodeCost is one node's estimate.
type NodeCost struct {
	Name   string `json:"name"`
	OpType string `json:"op_type"`
	Domain string `json:"domain,omitempty"`
	// Module is the PyTorch module path that called the node, from the
	// exporter's node name or metadata (ir.Node.ModulePath): "" for a
	// node called from no module or a model from elsewhere.
	Module    string       `json:"module,omitempty"`
	FusedFrom []string     `json:"fused_from"`
	Inputs    []TensorInfo `json:"inputs"`
	Outputs   []TensorInfo `json:"outputs"`

	Counts
	Params   float64 `json:"params"`
	Launches float64 `json:"launches"`
	// LibraryLaunches are the kernels among Launches that the node's own
	// library call issues (cuDNN's layout transposes and Winograd filter
	// transform): an eager host pays a driver launch for each, not another
	// op dispatch (NodeHosts).
	LibraryLaunches float64 `json:"library_launches,omitempty"`
	// HelperLaunches are the kernels among LibraryLaunches a GEMM
	// library issues around the kernel it runs for the product (cuBLAS's
	// largek zeroing and epilogue: perf.GEMMPlan.Helpers). The host time
	// of the call they belong to is priced by the op's dispatch, not per
	// kernel: a shape cuBLAS runs with them has fewer rows than one it
	// runs without, and charged a driver launch each, BERT-base's eager
	// fp32 call cost more at batch 1 than at 4 (NodeHosts).
	HelperLaunches float64 `json:"helper_launches,omitempty"`

	ArithmeticIntensity float64 `json:"arithmetic_intensity"`
	// Bound is the term that dominates the node's time: "compute" (the
	// main loop), "memory", "latency" (the fixed fill and drain of a
	// GEMM-like kernel, LatencyS, exceeds both: a small kernel) or
	// "launch"; "" for nodes with no kernel.
	Bound string `json:"bound"`
	// KernelClass is the time model's efficiency class of the node's
	// kernel (perf.KernelClass: gemm, conv, winograd, rnn, attention,
	// elementwise, reduction, data); "" for nodes with no kernel of their
	// own. Calibrations (package calib) key their factors by it.
	KernelClass string `json:"kernel_class,omitempty"`
	// KernelShape is the kernel's shape in dims no batch size changes,
	// as "NxK": a GEMM-like kernel's output columns (a convolution's
	// output channels) by its reduction length, a row-wise kernel's 1 by
	// its row length; "" for other kernels. A calibration keys its shape
	// cells by it (package calib). Not in the JSON contract.
	KernelShape string `json:"-"`
	// MemLevel is the memory level whose bandwidth priced the node's
	// memory time: "hbm", or "l2" when its working set fits in L2 (the
	// time model's KernelTime.Level). "" for nodes with no kernel and for
	// control-flow nodes that sum a body. Viz uses it to name the roof
	// that binds a memory-bound node.
	MemLevel  string  `json:"mem_level,omitempty"`
	Precision string  `json:"precision,omitempty"`
	ComputeS  float64 `json:"compute_s"`
	// LatencyS is the fixed latency of a GEMM-like kernel beyond its
	// launch (pipeline fill and drain); time_s = max(compute_s +
	// latency_s, memory_s) + ramp_s + launch_s.
	LatencyS float64 `json:"latency_s"`
	MemoryS  float64 `json:"memory_s"`
	TimeS    float64 `json:"time_s"`
	// RampS is the kernels' device-side minimum duration in a plan (their
	// CTAs' dispatch and completion, perf.KernelRamp): part of a kernel's
	// duration as a profiler times it. LaunchS is what is left per kernel:
	// the gap between kernels (a plan's) or the launch. A kernel's body,
	// what a profile's kernel duration measures, is time_s − launch_s.
	RampS   float64 `json:"ramp_s,omitempty"`
	LaunchS float64 `json:"launch_s"`
	// HostS is the host time an eager runtime spends calling the node
	// (NodeHosts: its op's kind, its further kernels, the module calls
	// it enters); absent under a runtime with no per-kernel host work.
	// Not part of TimeS: the host and the device overlap (the report's
	// runtime section).
	HostS float64 `json:"host_s,omitempty"`
	// OnHost marks a node the runtime computes on the CPU at run time
	// (onnxruntime's CUDA provider's shape arithmetic of a dim symbolic
	// in the file): no kernel; host_s is its executor step.
	OnHost bool `json:"on_host,omitempty"`
	// HostWaits marks a node before which the host waits for the device
	// to finish (it reads, in host memory, a value a GPU kernel wrote).
	HostWaits bool `json:"host_waits,omitempty"`
	// CommunicationS is the all-reduce after this node under tensor
	// parallelism, included in TimeS; absent on one GPU.
	CommunicationS float64 `json:"communication_s,omitempty"`
	// GPUShare is, under tensor parallelism, the share of the node's
	// FLOPs and bytes that one GPU runs: 1/gpus for a split GEMM-like
	// kernel. Absent when one GPU runs the node whole (a replicated
	// kernel, or one GPU). FLOPs and bytes stay the whole model's; the
	// time is one GPU's, so a rate is FLOPs·share / time.
	GPUShare float64 `json:"gpu_share,omitempty"`
	EnergyJ  float64 `json:"energy_j"`
	// AvgPowerW is EnergyJ/TimeS; EDPJS is EnergyJ·TimeS (0 for nodes
	// with no kernel). SMClockMHz is the SM clock the node's kernel ran
	// at under the report's power cap or clock lock (omitted for nodes
	// with no kernel of their own).
	AvgPowerW  float64 `json:"avg_power_w"`
	EDPJS      float64 `json:"edp_js"`
	SMClockMHz float64 `json:"sm_clock_mhz,omitempty"`
	// Note explains an approximation (If: costlier branch; Loop: trip count unknown).
	Note string `json:"note,omitempty"`
	// Backward is set only with --train (train.go).
	Backward *Backward `json:"backward,omitempty"`
}

// Counts are the work and traffic every level of a report sums: a rule's
// estimate, a node, an op type, a graph. Embedded, its fields serialise in
// place, so Totals and NodeCost keep their JSON field order.
//
// MACs and FLOPs are the model's arithmetic (cost.FLOPConvention): the
// same in every plan and dtype. ExecutedMACs and ExecutedFLOPs are what
// the plan's kernels run, which the time model prices: equal to MACs and
// FLOPs except where a kernel computes the result another way (Winograd
// convolution: fewer products plus its transforms).
type Counts struct {
	MACs            float64 `json:"macs"`
	FLOPs           float64 `json:"flops"`
	ExecutedMACs    float64 `json:"executed_macs"`
	ExecutedFLOPs   float64 `json:"executed_flops"`
	Transcendentals float64 `json:"transcendentals"`
	BytesRead       float64 `json:"bytes_read"`
	BytesWritten    float64 `json:"bytes_written"`
}

// fields lists every count of c, in one place so that Add and Scale cannot
// disagree about which counts there are.
func (c *Counts) fields() [7]*float64 {
	return [...]*float64{&c.MACs, &c.FLOPs, &c.ExecutedMACs, &c.ExecutedFLOPs, &c.Transcendentals, &c.BytesRead, &c.BytesWritten}
}

// Add accumulates o into c.
func (c *Counts) Add(o Counts) {
	of := o.fields()
	for i, p := range c.fields() {
		*p += *of[i]
	}
}

// Scale multiplies every count by f (a trip count).
func (c *Counts) Scale(f float64) {
	for _, p := range c.fields() {
		*p *= f
	}
}

// Bytes is the traffic in both directions.
func (c Counts) Bytes() float64 { return c.BytesRead + c.BytesWritten }

// SequenceBound names the term ("compute", "latency", "memory" or
// "launch") that dominates the summed times of kernels run one after
// another, or "" when they take no time. Ties go to launch, then compute,
// then latency (the rule for one kernel, in package cost/perf, breaks a
// launch tie the other way). viz colours
// its collapsed boxes by it, so a box and the node it stands for agree.
func SequenceBound(timeS, computeS, latencyS, memoryS, launchS float64) string {
	switch {
	case timeS == 0:
		return ""
	case launchS >= computeS+latencyS && launchS >= memoryS:
		return "launch"
	case computeS >= memoryS && computeS >= latencyS:
		return "compute"
	case latencyS >= memoryS:
		return "latency"
	}
	return "memory"
}

// TensorInfo is a node input or output as the report shows it.
type TensorInfo struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Shape Shape  `json:"shape"`
}

// Unsupported names an op with no cost rule and the nodes that use it.
type Unsupported struct {
	Domain string   `json:"domain,omitempty"`
	OpType string   `json:"op_type"`
	Count  int      `json:"count"`
	Nodes  []string `json:"nodes"`
}

// TensorInfos describes values as a report shows them, skipping absent
// (nil) optional inputs and outputs.
func TensorInfos(vs []*ir.Value) []TensorInfo {
	return AppendTensorInfos(make([]TensorInfo, 0, len(vs)), vs)
}

// AppendTensorInfos appends TensorInfos(vs) to dst, so that a caller
// describing every node of a graph can carve all of them from one slab.
func AppendTensorInfos(dst []TensorInfo, vs []*ir.Value) []TensorInfo {
	for _, v := range vs {
		if v == nil {
			continue
		}
		dst = append(dst, TensorInfo{Name: v.Name, DType: v.DType.String(), Shape: ShapeOf(v.Shape)})
	}
	return dst
}

// Shape is a JSON shape: numbers for known dims, strings for symbols, null
// for an unranked tensor.
type Shape []ir.Dim

// ShapeOf converts an ir.Shape (nil for unranked; non-nil, empty for a
// scalar).
//
// The result shares s's dims instead of copying them: an inferred shape
// is never edited in place (inference and binding build new shapes and
// assign them), and the capacity is clipped so that an append to the
// result copies. The copies were 8 MB of Analyze's 73 MB on a 112k-node
// LLaMA-shaped graph.
func ShapeOf(s ir.Shape) Shape {
	if !s.Ranked {
		return nil
	}
	if len(s.Dims) == 0 {
		return Shape{}
	}
	return Shape(s.Dims[:len(s.Dims):len(s.Dims)])
}

// MarshalJSON writes [1, "batch", 224].
func (s Shape) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// AppendJSON appends MarshalJSON's text to b (for callers that write many
// shapes into one buffer).
func (s Shape) AppendJSON(b []byte) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, d := range s {
		if i > 0 {
			b = append(b, ',')
		}
		if d.IsKnown() {
			b = strconv.AppendInt(b, d.Value, 10)
		} else {
			q, _ := json.Marshal(d.Sym)
			b = append(b, q...)
		}
	}
	return append(b, ']')
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Shape) UnmarshalJSON(data []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if raw == nil {
		*s = nil
		return nil
	}
	out := make(Shape, len(raw))
	for i, r := range raw {
		var n int64
		if err := json.Unmarshal(r, &n); err == nil {
			out[i] = ir.D(n)
			continue
		}
		var sym string
		if err := json.Unmarshal(r, &sym); err != nil {
			return fmt.Errorf("shape dim %d: want a number or a string", i)
		}
		out[i] = ir.S(sym)
	}
	*s = out
	return nil
}

// CalibrationName is the calibration file r was priced with, "" for none:
// its CalibrationFile, or for a report saved before that field existed
// the name its Calibration line gives (calib's "calibration NAME: fitted
// on …").
func (r *Report) CalibrationName() string {
	if r.CalibrationFile != "" || r.Calibration == "" {
		return r.CalibrationFile
	}
	return legacyCalibrationName(r.Calibration)
}

// legacyCalibrationName reads the file name out of a calibration line
// written before reports carried it apart; "" where the line has none.
func legacyCalibrationName(line string) string {
	rest, ok := strings.CutPrefix(line, "calibration ")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, ": ")
	if !ok {
		return ""
	}
	return name
}
