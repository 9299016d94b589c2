//go:build !js

// pprof output is the command line's (report --pprof); the WebAssembly
// build leaves it and its profile package out.

package viz

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/google/pprof/profile"
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
// optimum) write into node names: "/layer3/layer3.0/conv2/Conv" becomes
// layer3 → layer3.0 → conv2 → the node, root first. A node without a
// scope sits under its op type ("Conv" → the node), so unnamed graphs
// still group. The leaf frame is the node's full name, so -top lists
// nodes, not modules. Nodes that take no time and move nothing (views,
// constants) get no sample.
func Profile(r *report.Report) ([]byte, error) {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "time", Unit: "nanoseconds"},
			{Type: "flops", Unit: "count"},
			{Type: "bytes", Unit: "bytes"},
		},
		DefaultSampleType: "time",
		PeriodType:        &profile.ValueType{Type: "time", Unit: "nanoseconds"},
		Period:            1,
		Comments: []string{
			fmt.Sprintf("onnxcost %s estimate (cost model %s): %s on %s, %s, plan %s", r.ToolVersion, r.CostModelVersion, r.Model, r.GPU, r.DType, r.Plan),
		},
	}
	// One mapping that declares its functions known, so pprof neither
	// looks for a binary nor tries to symbolize.
	p.Mapping = []*profile.Mapping{{ID: 1, File: r.Model, HasFunctions: true}}
	// Every distinct frame name is one Function and one Location, ids in
	// order of first use, so output is deterministic.
	locs := map[string]*profile.Location{}
	loc := func(name, file string) *profile.Location {
		key := file + "\x00" + name
		if l, ok := locs[key]; ok {
			return l
		}
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: file}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: p.Mapping[0], Line: []profile.Line{{Function: fn}}}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, l)
		locs[key] = l
		return l
	}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		bytes := n.BytesRead + n.BytesWritten
		if n.TimeS <= 0 && n.FLOPs <= 0 && bytes <= 0 {
			continue
		}
		op := ir.QualifiedOp(n.Domain, n.OpType)
		frames := ScopeFrames(n.Name, op)
		// pprof stacks are leaf first.
		stack := make([]*profile.Location, len(frames))
		for j, f := range frames {
			// pprof tells functions apart by name and file: a module's
			// file is its scope path, so the conv2 of layer1.0 and the
			// conv2 of layer3.0 stay two boxes in the call graph while
			// showing the short name. The leaf's file is its op.
			file := "/" + strings.Join(frames[:j+1], "/")
			if j == len(frames)-1 {
				file = op
			}
			stack[len(frames)-1-j] = loc(f, file)
		}
		s := &profile.Sample{
			Location: stack,
			Value:    []int64{roundInt(n.TimeS * 1e9), roundInt(n.FLOPs), roundInt(bytes)},
			Label:    map[string][]string{"op": {op}, "bound": {orNone(n.Bound)}},
			NumLabel: map[string][]int64{"launches": {roundInt(n.Launches)}},
		}
		if len(n.FusedFrom) > 0 {
			s.Label["fused_from"] = append([]string{}, n.FusedFrom...)
		}
		p.Sample = append(p.Sample, s)
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	return buf.Bytes(), nil
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
