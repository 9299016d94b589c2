//go:build !js

// pprof output is the command line's (report --pprof); the WebAssembly
// build leaves it out.

package viz

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Profile converts a report to a pprof profile (gzipped protobuf), so that
// `go tool pprof -top` lists the costliest nodes and `-http` draws a flame
// graph of the model by module. Two profiles compare with
// `pprof -diff_base BASE.pb.gz HEAD.pb.gz`.
//
// Sample types, one value each per node: estimated time (nanoseconds, the
// default), FLOPs and bytes (read + written). Integer pprof values are
// the report's floats rounded to the nearest whole unit; the time of a
// node under half a nanosecond rounds to 0 (pprof cannot hold fractions).
//
// Stacks follow the module scopes that exporters (torch.onnx, tf2onnx,
// optimum) write into node names, or the dynamo exporter into node
// metadata (NodeCost.ScopedName): "/layer3/layer3.0/conv2/Conv" becomes
// layer3 → layer3.0 → conv2 → the node, root first. A node without a
// scope sits under its op type ("Conv" → the node), so unnamed graphs
// still group. The leaf frame is the node's full name, so -top lists
// nodes, not modules. Nodes that take no time and move nothing (views,
// constants) get no sample. Under --train the profile is the whole step,
// each stack under its phase's root frame with a "phase" label (see
// profileSamples), its time samples adding up to step_time_s.
func Profile(r *report.Report) ([]byte, error) {
	var e pprofEncoder
	e.str("") // string_table[0] is "" by definition
	valueType := func(field protowire.Number, typ, unit string) {
		var b []byte
		b = e.int(b, 1, e.str(typ))
		b = e.int(b, 2, e.str(unit))
		e.msg(field, b)
	}
	valueType(1, "time", "nanoseconds")
	valueType(1, "flops", "count")
	valueType(1, "bytes", "bytes")
	// Every distinct frame name is one Function and one Location, ids in
	// order of first use, so output is deterministic.
	type frame struct{ name, file string }
	ids := map[frame]uint64{}
	var frames []frame
	loc := func(name, file string) uint64 {
		f := frame{name, file}
		if id, ok := ids[f]; ok {
			return id
		}
		frames = append(frames, f)
		ids[f] = uint64(len(frames))
		return uint64(len(frames))
	}
	for _, sm := range profileSamples(r) {
		names, files := sm.names, sm.files
		// pprof stacks are leaf first.
		stack := make([]uint64, len(names))
		for j, f := range names {
			stack[len(names)-1-j] = loc(f, files[j])
		}
		var b []byte
		b = protowire.AppendTag(b, 1, protowire.BytesType) // location_id, packed
		b = protowire.AppendBytes(b, packed(stack, func(v uint64) uint64 { return v }))
		b = protowire.AppendTag(b, 2, protowire.BytesType) // value, packed
		b = protowire.AppendBytes(b, packed([]int64{roundInt(sm.timeS * 1e9), roundInt(sm.flops), roundInt(sm.bytes)}, func(v int64) uint64 { return uint64(v) }))
		// Labels by key, as pprof's own encoder sorts them.
		for _, v := range sm.fusedFrom {
			b = e.label(b, "fused_from", v)
		}
		b = e.numLabel(b, "launches", roundInt(sm.launches))
		b = e.label(b, "bound", orNone(sm.bound))
		b = e.label(b, "op", sm.op)
		if sm.phase != "" {
			b = e.label(b, "phase", sm.phase)
		}
		e.msg(2, b)
	}
	// One mapping that declares its functions known, so pprof neither
	// looks for a binary nor tries to symbolize.
	var m []byte
	m = protowire.AppendTag(m, 1, protowire.VarintType)
	m = protowire.AppendVarint(m, 1)
	m = e.int(m, 5, e.str(r.Model))
	m = protowire.AppendTag(m, 7, protowire.VarintType) // has_functions
	m = protowire.AppendVarint(m, 1)
	e.msg(3, m)
	for i := range frames {
		id := uint64(i + 1)
		var line []byte
		line = protowire.AppendTag(line, 1, protowire.VarintType) // function_id
		line = protowire.AppendVarint(line, id)
		var l []byte
		l = protowire.AppendTag(l, 1, protowire.VarintType)
		l = protowire.AppendVarint(l, id)
		l = protowire.AppendTag(l, 2, protowire.VarintType) // mapping_id
		l = protowire.AppendVarint(l, 1)
		l = protowire.AppendTag(l, 4, protowire.BytesType)
		l = protowire.AppendBytes(l, line)
		e.msg(4, l)
	}
	for i, f := range frames {
		var fn []byte
		fn = protowire.AppendTag(fn, 1, protowire.VarintType)
		fn = protowire.AppendVarint(fn, uint64(i+1))
		name := e.str(f.name)
		fn = e.int(fn, 2, name)
		fn = e.int(fn, 3, name) // system_name
		fn = e.int(fn, 4, e.str(f.file))
		e.msg(5, fn)
	}
	var period []byte
	period = e.int(period, 1, e.str("time"))
	period = e.int(period, 2, e.str("nanoseconds"))
	comment := e.str(fmt.Sprintf("onnxcost %s estimate (cost model %s): %s on %s, %s, %s", r.ToolVersion, r.CostModelVersion, r.Model, r.GPU, r.DType, planText(r)))
	def := e.str("time")
	// The string table goes after everything that adds to it.
	out := e.body
	for _, s := range e.strs {
		out = protowire.AppendTag(out, 6, protowire.BytesType)
		out = protowire.AppendString(out, s)
	}
	out = protowire.AppendTag(out, 11, protowire.BytesType) // period_type
	out = protowire.AppendBytes(out, period)
	out = protowire.AppendTag(out, 12, protowire.VarintType) // period
	out = protowire.AppendVarint(out, 1)
	out = protowire.AppendTag(out, 13, protowire.BytesType) // comment, packed
	out = protowire.AppendBytes(out, protowire.AppendVarint(nil, uint64(comment)))
	out = protowire.AppendTag(out, 14, protowire.VarintType) // default_sample_type
	out = protowire.AppendVarint(out, uint64(def))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(out); err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	return buf.Bytes(), nil
}

// pprofEncoder writes a profile.proto message by hand (protowire), not
// with github.com/google/pprof/profile: that package compiles regular
// expressions and allocates 154 kB in its init, 1.2 ms of the start of
// every command (GODEBUG=inittrace=1, 2-core VM), for one writer used by
// `--pprof` alone. Tests read the output back with that package.
type pprofEncoder struct {
	body []byte           // the fields written so far, string table aside
	strs []string         // the string table, in order of first use
	ids  map[string]int64 // its index
}

// str returns s's index in the string table, adding it on first use.
func (e *pprofEncoder) str(s string) int64 {
	if i, ok := e.ids[s]; ok {
		return i
	}
	if e.ids == nil {
		e.ids = map[string]int64{}
	}
	e.ids[s] = int64(len(e.strs))
	e.strs = append(e.strs, s)
	return e.ids[s]
}

// int appends an int64 field, omitted at 0 as proto3 does.
func (e *pprofEncoder) int(b []byte, field protowire.Number, v int64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, field, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

// msg appends a message field to the profile.
func (e *pprofEncoder) msg(field protowire.Number, b []byte) {
	e.body = protowire.AppendTag(e.body, field, protowire.BytesType)
	e.body = protowire.AppendBytes(e.body, b)
}

// label appends a string label (Sample.label) to a sample.
func (e *pprofEncoder) label(b []byte, key, value string) []byte {
	var l []byte
	l = e.int(l, 1, e.str(key))
	l = e.int(l, 2, e.str(value))
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	return protowire.AppendBytes(b, l)
}

// numLabel appends a numeric label to a sample.
func (e *pprofEncoder) numLabel(b []byte, key string, v int64) []byte {
	var l []byte
	l = e.int(l, 1, e.str(key))
	l = e.int(l, 3, v)
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	return protowire.AppendBytes(b, l)
}

// packed encodes vs as a packed repeated varint field's payload.
func packed[T any](vs []T, u func(T) uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = protowire.AppendVarint(b, u(v))
	}
	return b
}

// profileSample is one sample: its frames root first with their files
// (see sampleFrames), its values and labels.
type profileSample struct {
	names, files        []string
	timeS, flops, bytes float64
	launches            float64
	bound, op, phase    string
	fusedFrom           []string
}

// profileSamples lists a report's samples. Without --train, one per node
// that takes time or moves data. Under --train the profile is of the
// whole step, so its time samples add up to step_time_s: each stack
// starts at its phase ("forward", "backward", "optimizer", and, when the
// step has them, "gradient accumulation", "communication" for the
// exposed gradient all-reduce, and "idle" for the device waiting on the
// host's dispatch); forward and backward samples count every
// micro-batch's work (GradAccum × one micro-batch's, as the step does);
// a backward's leaf is "<node> (backward)", so -top tells it from the
// forward; the loss head train/train.go assumes and the recompute, which
// no node carries, are one sample each.
func profileSamples(r *report.Report) []profileSample {
	var out []profileSample
	tr := r.Totals.Train
	accum := 1.0
	if tr != nil && tr.GradAccum > 1 {
		accum = float64(tr.GradAccum)
	}
	var fwd, bwd float64
	for i := range r.Nodes {
		n := &r.Nodes[i]
		extra := 0.0
		if tr != nil && n.Backward != nil {
			extra = n.Backward.ForwardExtraS
		}
		names, files, ok := sampleFrames(n)
		if !ok && extra <= 0 {
			continue
		}
		if !ok {
			names, files, _ = sampleFrames(&report.NodeCost{Name: n.Name, Domain: n.Domain, OpType: n.OpType, TimeS: extra})
		}
		fwd += n.TimeS + extra
		sm := profileSample{names: names, files: files, timeS: n.TimeS + extra, flops: n.FLOPs, bytes: n.BytesRead + n.BytesWritten,
			launches: n.Launches, bound: n.Bound, op: files[len(files)-1], fusedFrom: n.FusedFrom}
		if tr != nil {
			sm = sm.in("forward", accum)
		}
		out = append(out, sm)
	}
	if tr == nil {
		// The device's wait on the host per call (Runtime.WaitS), so the
		// samples add up to time_s.
		rt := r.Runtime
		if rt == nil {
			return out
		}
		// The host copies of a call's inputs and outputs are part of
		// that wait (the device runs no kernel), drawn on their own.
		for _, c := range hostCopies(rt) {
			if c.timeS > 1e-12*r.Totals.TimeS {
				out = append(out, profileSample{names: []string{c.name}, files: []string{"host-copy"}, timeS: c.timeS, bound: "host-link", op: "copy"})
			}
		}
		name := "idle: waiting on the host's dispatch"
		if rt.SyncEachCall {
			name = "idle: waiting on the host (its dispatch, the call's fixed work and synchronize)"
		}
		if wait := rt.WaitS - rt.HostCopyS(); wait > 1e-12*r.Totals.TimeS {
			out = append(out, profileSample{names: []string{name}, files: []string{"idle"},
				timeS: wait, bound: "host", op: "idle"})
		}
		return out
	}
	lone := func(phase, name, op string, timeS, flops, launches float64, bound string, scale float64) {
		if timeS <= 1e-12*tr.StepTimeS {
			return
		}
		out = append(out, profileSample{names: []string{name}, files: []string{op}, timeS: timeS, flops: flops,
			launches: launches, bound: bound, op: op}.in(phase, scale))
	}
	lone("forward", "loss head (forward)", "loss", tr.ForwardTimeS-fwd, 0, 1, "memory", accum)
	lone("backward", "recompute (activation checkpointing)", "recompute", tr.RecomputeTimeS, 0, 0, "mixed", accum)
	for i := range r.Nodes {
		bwd += backwardTime(&r.Nodes[i])
	}
	lone("backward", "loss head (backward)", "loss", tr.BackwardTimeS-bwd, 0, 1, "memory", accum)
	for i := len(r.Nodes) - 1; i >= 0; i-- {
		n := &r.Nodes[i]
		b := n.Backward
		if b == nil || (b.TimeS <= 0 && b.FLOPs <= 0 && b.BytesRead+b.BytesWritten <= 0) {
			continue
		}
		op := ir.QualifiedOp(n.Domain, n.OpType)
		names := ScopeFrames(n.ScopedName(), op)
		files := make([]string, len(names))
		for j := range names {
			files[j] = "/" + strings.Join(names[:j+1], "/")
		}
		names[len(names)-1] = nodeLabel(n) + " (backward)"
		files[len(files)-1] = op
		out = append(out, profileSample{names: names, files: files, timeS: b.TimeS, flops: b.FLOPs, bytes: b.BytesRead + b.BytesWritten,
			launches: b.Launches, bound: derivedBound(b.FLOPs, b.BytesRead+b.BytesWritten, n.Precision, Ceilings{}), op: op}.in("backward", accum))
	}
	lone("gradient accumulation", fmt.Sprintf("micro-batches 2..%d: gradient adds", tr.GradAccum), "accumulate", tr.AccumulateTimeS, 0, 0, "memory", 1)
	lone("communication", "gradient all-reduce (not hidden behind the backward)", "all-reduce", tr.GradAllReduceExposedS, 0, 0, "communication", 1)
	lone("optimizer", "optimizer step ("+tr.Optimizer+")", orNone(tr.Optimizer), tr.OptimizerTimeS, tr.OptimizerFLOPs, tr.OptimizerLaunches, "memory", 1)
	lone("idle", "waiting on the host's dispatch", "idle", tr.HostWaitS, 0, 0, "host", 1)
	return out
}

// in puts a sample under a phase's root frame, its values scaled by the
// times the step runs it.
func (sm profileSample) in(phase string, scale float64) profileSample {
	sm.names = append([]string{phase}, sm.names...)
	sm.files = append([]string{phase}, sm.files...)
	sm.timeS *= scale
	sm.flops *= scale
	sm.bytes *= scale
	sm.launches *= scale
	sm.phase = phase
	return sm
}

// sampleFrames returns the frames of n's sample, root first, with the file
// pprof shows for each, or ok false for a node that takes no time and
// moves nothing (views, constants), which gets no sample. pprof tells
// functions apart by name and file: a module's file is its scope path, so
// the conv2 of layer1.0 and the conv2 of layer3.0 stay two boxes in the
// call graph while showing the short name. The leaf's file is its op.
func sampleFrames(n *report.NodeCost) (names, files []string, ok bool) {
	if n.TimeS <= 0 && n.FLOPs <= 0 && n.BytesRead+n.BytesWritten <= 0 {
		return nil, nil, false
	}
	op := ir.QualifiedOp(n.Domain, n.OpType)
	names = ScopeFrames(n.ScopedName(), op)
	files = make([]string, len(names))
	for j := range names {
		files[j] = "/" + strings.Join(names[:j+1], "/")
	}
	files[len(files)-1] = op
	return names, files, true
}

// ScopeFrames splits an exporter-scoped node name into its frames, root
// first: "/layer3/layer3.0/conv2/Conv" → [layer3 layer3.0 conv2
// /layer3/layer3.0/conv2/Conv]. The leaf is the full name so that two
// nodes of one module stay apart. A name without a scope gives [op, name]
// (or [op] when the name is empty).
func ScopeFrames(name, op string) []string {
	if name == "" {
		return []string{op}
	}
	if !strings.HasPrefix(name, "/") {
		return []string{op, name}
	}
	parts := strings.Split(strings.Trim(name, "/"), "/")
	var scopes []string
	for _, s := range parts[:len(parts)-1] {
		if s != "" {
			scopes = append(scopes, s)
		}
	}
	if len(scopes) == 0 {
		return []string{op, name}
	}
	return append(scopes, name)
}

// roundInt rounds a non-negative float to int64, saturating.
func roundInt(x float64) int64 {
	switch {
	case math.IsNaN(x) || x <= 0:
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(math.Round(x))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
