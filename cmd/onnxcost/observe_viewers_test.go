package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/viz"
)

// viewerCases are the runs whose traces and profiles the viewer tests
// open: large graphs (where nanosecond rounding used to make slices
// overlap), a training step, and a runtime that dispatches from the host.
var viewerCases = [][]string{
	{"zoo:resnet50", "--gpu", "A100"},
	{"zoo:llama-7b?decode=1&past=1024", "--gpu", "A100"},
	{"zoo:resnet50", "--gpu", "A100", "--train", "--batch", "32"},
	{"zoo:resnet50", "--gpu", "A100", "--runtime", "pytorch"},
	{"zoo:resnet50", "--gpu", "A100", "--train", "--batch", "8", "--runtime", "pytorch", "--grad-accum", "2"},
}

// TestTracePerfettoImport: each trace loads in Perfetto without a dropped
// slice (ts and dur rounded to ns on their own, no overlap on any track),
// its tracks are numbered from 1, its header's launches is the kernel
// slices it draws, every stream slice names its bound, and under a
// runtime that dispatches from the host a flow runs from the host to
// each kernel.
func TestTracePerfettoImport(t *testing.T) {
	dir := t.TempDir()
	for _, args := range viewerCases {
		name := strings.Join(args, " ")
		tr := filepath.Join(dir, "t.json")
		var r report.Report
		runJSON(t, &r, append([]string{"report", "--format", "json", "--trace", tr}, args...)...)
		data, err := os.ReadFile(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := viz.PerfettoOverlaps(data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		sums, err := viz.SummarizeTrace(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var doc struct {
			TraceEvents []struct {
				Name string `json:"name"`
				Ph   string `json:"ph"`
				Tid  int    `json:"tid"`
				Args struct {
					Name  string  `json:"name"`
					Bound *string `json:"bound"`
				} `json:"args"`
			} `json:"traceEvents"`
			OtherData struct {
				Plans []struct {
					Launches float64 `json:"launches"`
					HostS    float64 `json:"host_s"`
				} `json:"plans"`
			} `json:"otherData"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		threads := map[int]string{}
		for _, e := range doc.TraceEvents {
			switch {
			case e.Tid <= 0:
				t.Errorf("%s: %s event %q on tid %d", name, e.Ph, e.Name, e.Tid)
			case e.Ph == "M" && e.Name == "thread_name":
				if prev, dup := threads[e.Tid]; dup {
					t.Errorf("%s: tid %d names both %q and %q", name, e.Tid, prev, e.Args.Name)
				}
				threads[e.Tid] = e.Args.Name
			case e.Ph == "X" && (e.Args.Bound == nil || *e.Args.Bound == ""):
				t.Errorf("%s: slice %q has no bound", name, e.Name)
			}
		}
		if got := doc.OtherData.Plans[0].Launches; got != float64(sums[0].Kernels) {
			t.Errorf("%s: header says %v launches, trace draws %d kernel slices", name, got, sums[0].Kernels)
		}
		if want, _ := traceWant(&r); float64(sums[0].Kernels) != want {
			t.Errorf("%s: %d kernel slices, want %v", name, sums[0].Kernels, want)
		}
		hosted := r.Runtime != nil && r.Runtime.DispatchS > 0
		if hosted {
			if doc.OtherData.Plans[0].HostS != r.Runtime.HostS || !bytes.Contains(data, []byte(`"cat":"host","ph":"B"`)) || (r.Totals.Train != nil && !bytes.Contains(data, []byte(`"name":"dispatch /conv1/Conv (backward)"`))) {
				t.Errorf("%s: host track or header host_s %v missing (want %v)", name, doc.OtherData.Plans[0].HostS, r.Runtime.HostS)
			}
			if sums[0].Flows != sums[0].Kernels {
				t.Errorf("%s: %d host→kernel flows for %d kernels", name, sums[0].Flows, sums[0].Kernels)
			}
		} else if sums[0].Flows != 0 {
			t.Errorf("%s: %d flows without a host track", name, sums[0].Flows)
		}
	}
}

// TestPprofTrainStep: under --train the profile is the whole step, its
// time samples under forward, backward and optimizer roots adding up to
// step_time_s.
func TestPprofTrainStep(t *testing.T) {
	dir := t.TempDir()
	for _, args := range viewerCases {
		if !strings.Contains(strings.Join(args, " "), "--train") {
			continue
		}
		name := strings.Join(args, " ")
		pp := filepath.Join(dir, "p.pb.gz")
		var r report.Report
		runJSON(t, &r, append([]string{"report", "--format", "json", "--pprof", pp}, args...)...)
		data, err := os.ReadFile(pp)
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		byPhase := map[string]float64{}
		var sum float64
		for _, s := range p.Sample {
			root := s.Location[len(s.Location)-1].Line[0].Function.Name
			if ph := s.Label["phase"]; len(ph) != 1 || ph[0] != root {
				t.Errorf("%s: sample under %q has phase label %q", name, root, ph)
			}
			byPhase[root] += float64(s.Value[0])
			sum += float64(s.Value[0])
		}
		for _, ph := range []string{"forward", "backward", "optimizer"} {
			if byPhase[ph] <= 0 {
				t.Errorf("%s: no %s samples (%v)", name, ph, byPhase)
			}
		}
		want := r.Totals.Train.StepTimeS * 1e9
		if math.Abs(sum-want) > 0.005*want {
			t.Errorf("%s: samples sum to %.0f ns, step is %.0f ns (%v)", name, sum, want, byPhase)
		}
	}
}

// trainDispatchWant is what the trace of a training step under a runtime
// that dispatches from the host draws (viz/trace_train.go): every kernel
// the step issues (the count its runtime note gives), and lumped the
// forward nodes' all-reduces of each micro-batch and the exposed
// gradient all-reduce. ok is false for any other report.
func trainDispatchWant(r *report.Report) (launches float64, lumped int, ok bool) {
	tr, ri := r.Totals.Train, r.Runtime
	if tr == nil || ri == nil || ri.DispatchS <= 0 || len(ri.Notes) == 0 {
		return 0, 0, false
	}
	m := trainKernelsRE.FindStringSubmatch(ri.Notes[len(ri.Notes)-1])
	if m == nil {
		return 0, 0, false
	}
	launches, _ = strconv.ParseFloat(m[1], 64)
	for i := range r.Nodes {
		if r.Nodes[i].CommunicationS > 0 {
			lumped += tr.GradAccum
		}
	}
	if tr.GradAllReduceExposedS > 0 {
		lumped++
	}
	return launches, lumped, true
}
