//go:build !js

package viz

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// TestProfileMatchesLibrary: the hand-written encoder gives, as read back
// by github.com/google/pprof/profile, the profile that package itself
// builds from the same report (the way Profile did before writing it by
// hand): sample types, samples with their stacks, values and labels,
// locations, functions, the mapping, period and comment.
func TestProfileMatchesLibrary(t *testing.T) {
	r := multiLaunchReport()
	for i := range 300 {
		n := report.NodeCost{Name: fmt.Sprintf("/layer%d/block.%d/conv/Conv", i%7, i%5), OpType: "Conv", Bound: "memory",
			Counts: report.Counts{FLOPs: float64(1000 * i), BytesRead: float64(10 * i), BytesWritten: 7}, TimeS: 1e-7 * float64(i%11), Launches: float64(i % 3)}
		switch i % 10 {
		case 3:
			n.Name = "" // unnamed: under its op type
		case 4:
			n.Name, n.Domain, n.OpType = "fused_7", ir.FusedDomain, "FusedConv"
			n.FusedFrom = []string{"a", "b"}
		case 5:
			n.Bound = ""
		case 6:
			n.TimeS, n.FLOPs, n.BytesRead, n.BytesWritten = 0, 0, 0, 0 // no sample
		}
		r.Nodes = append(r.Nodes, n)
	}
	ours, err := Profile(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := profile.Parse(bytes.NewReader(ours))
	if err != nil {
		t.Fatalf("profile.Parse: %v", err)
	}
	var buf bytes.Buffer
	if err := libraryProfile(r).Write(&buf); err != nil {
		t.Fatal(err)
	}
	want, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := got.String(), want.String(); g != w {
		t.Fatalf("profiles differ:\n%s\nwant\n%s", g, w)
	}
	for i, s := range got.Sample {
		if !reflect.DeepEqual(s.Label, want.Sample[i].Label) || !reflect.DeepEqual(s.NumLabel, want.Sample[i].NumLabel) {
			t.Fatalf("sample %d labels %v %v, want %v %v", i, s.Label, s.NumLabel, want.Sample[i].Label, want.Sample[i].NumLabel)
		}
	}
	for i, f := range got.Function {
		w := want.Function[i]
		if f.Name != w.Name || f.SystemName != w.SystemName || f.Filename != w.Filename {
			t.Fatalf("function %d %+v, want %+v", i, f, w)
		}
	}
	if !reflect.DeepEqual(got.Comments, want.Comments) || got.DefaultSampleType != want.DefaultSampleType ||
		got.Period != want.Period || !reflect.DeepEqual(got.PeriodType, want.PeriodType) ||
		got.Mapping[0].File != want.Mapping[0].File || !got.Mapping[0].HasFunctions {
		t.Fatalf("header %v %q %d %v %+v, want %v %q %d %v %+v", got.Comments, got.DefaultSampleType, got.Period, got.PeriodType, got.Mapping[0],
			want.Comments, want.DefaultSampleType, want.Period, want.PeriodType, want.Mapping[0])
	}
	if !strings.Contains(got.String(), "fused_from") {
		t.Error("no fused_from label in the profile")
	}
}

// libraryProfile is Profile built with github.com/google/pprof/profile,
// as Profile did before its encoder was written by hand (the frames come
// from the same sampleFrames: what is checked is the encoding).
func libraryProfile(r *report.Report) *profile.Profile {
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
			fmt.Sprintf("onnxcost %s estimate (cost model %s): %s on %s, %s, %s", r.ToolVersion, r.CostModelVersion, r.Model, r.GPU, r.DType, planText(r)),
		},
	}
	p.Mapping = []*profile.Mapping{{ID: 1, File: r.Model, HasFunctions: true}}
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
		frames, files, ok := sampleFrames(n)
		if !ok {
			continue
		}
		op := files[len(files)-1]
		bytes := n.BytesRead + n.BytesWritten
		stack := make([]*profile.Location, len(frames))
		for j, f := range frames {
			stack[len(frames)-1-j] = loc(f, files[j])
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
	return p
}
