package profile

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// eagerKernels are the device events of a Kineto trace in start order,
// as a replay of the same call would list them.
func eagerKernels(t *testing.T, path string) (names []string, us []float64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	top, err := kinetoTop(data)
	if err != nil {
		t.Fatal(err)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(top["traceEvents"], &items); err != nil {
		t.Fatal(err)
	}
	evs, err := decodeEvents(items)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range kernelOrder(evs) {
		names, us = append(names, evs[i].Name), append(us, evs[i].Dur)
	}
	return names, us
}

// TestReplayTakesTheKernelTimes: a replay's kernels, aligned with an
// eager call's by position, replace their times and keep their nodes:
// each event's time scales by the replay's factor, from a measure_gpu.py
// --profile table (FILE#SPEC picks a call of several) or a Kineto trace
// of two replays (averaged); the profile says it was replayed.
func TestReplayTakesTheKernelTimes(t *testing.T) {
	trace := filepath.Join("testdata", "kineto_h200", "llama_hf_small_fp16_b8.json.gz")
	eager, err := Read(trace)
	if err != nil {
		t.Fatal(err)
	}
	names, us := eagerKernels(t, trace)
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("spec,i,kernel,us\n")
	for i, n := range names {
		fmt.Fprintf(&b, "other:fp16:1,%d,%q,%.3f\n", i, n, 99.0)
	}
	for i, n := range names {
		fmt.Fprintf(&b, "llama:fp16:8:graph,%d,%q,%.4f\n", i, n, us[i]/2)
	}
	table := filepath.Join(dir, "replay.csv")
	if err := os.WriteFile(table, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(p *Profile, runs int) {
		t.Helper()
		if !p.Replayed || p.Runs != runs || len(p.Events) != len(eager.Events) {
			t.Fatalf("replayed %v, runs %d, %d events; want true, %d, %d", p.Replayed, p.Runs, len(p.Events), runs, len(eager.Events))
		}
		for i := range p.Events {
			if p.Events[i].Name != eager.Events[i].Name || math.Abs(p.Events[i].DurS-eager.Events[i].DurS/2) > 1e-9 {
				t.Fatalf("event %d: %s %g s, want %s %g s", i, p.Events[i].Name, p.Events[i].DurS, eager.Events[i].Name, eager.Events[i].DurS/2)
			}
		}
	}
	p, err := ReadKinetoReplay(trace, table+"#llama:fp16:8:graph")
	if err != nil {
		t.Fatal(err)
	}
	check(p, 1)
	// Two replays in one Kineto trace, at 0.4 and 0.6 of the eager times.
	var evs []string
	ts := 0.0
	for _, f := range []float64{0.4, 0.6} {
		for i, n := range names {
			nb, _ := json.Marshal(n)
			evs = append(evs, fmt.Sprintf(`{"ph":"X","cat":"kernel","name":%s,"ts":%g,"dur":%g}`, nb, ts, us[i]*f))
			ts += 10
		}
	}
	kin := filepath.Join(dir, "replay.json")
	if err := os.WriteFile(kin, []byte(`{"traceEvents":[`+strings.Join(evs, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err = ReadKinetoReplay(trace, kin)
	if err != nil {
		t.Fatal(err)
	}
	check(p, 2)
}

// TestReplayMustBeTheSameCall: a replay of another call (other kernels,
// or another count), a table of several calls with none picked, and an
// eager trace of several steps are each one clear error.
func TestReplayMustBeTheSameCall(t *testing.T) {
	trace := filepath.Join("testdata", "kineto_h200", "llama_hf_small_fp16_b8.json.gz")
	names, _ := eagerKernels(t, trace)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var short, renamed, two strings.Builder
	short.WriteString("kernel,us\n")
	renamed.WriteString("kernel,us\n")
	two.WriteString("spec,kernel,us\n")
	for i, n := range names {
		if i > 0 {
			fmt.Fprintf(&short, "%q,1\n", n)
		}
		if i == 3 {
			n = "some_other_kernel"
		}
		fmt.Fprintf(&renamed, "%q,1\n", n)
		fmt.Fprintf(&two, "a,%q,1\nb,%q,1\n", n, n)
	}
	for _, c := range []struct{ replay, want string }{
		{write("short.csv", short.String()), fmt.Sprintf("has %d kernels, the eager call %d", len(names)-1, len(names))},
		{write("renamed.csv", renamed.String()), `kernel 4 is "some_other_kernel"`},
		{write("two.csv", two.String()), "holds 2 calls (a, b): pick one as FILE#SPEC"},
		{filepath.Join(dir, "two.csv#c"), `no rows of spec "c"`},
		{write("bad.csv", "kernel,us\nk,fast\n"), `line 2: us "fast"`},
		{write("nohead.csv", "name,ms\nk,1\n"), "needs kernel and us columns"},
		{filepath.Join(dir, "missing.csv"), "missing.csv"},
	} {
		_, err := ReadKinetoReplay(trace, c.replay)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("replay %s: error %v, want one line with %q", filepath.Base(c.replay), err, c.want)
		}
	}
	steps := write("steps.json", `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":0,"tid":0,"ts":0,"dur":10},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":0,"tid":0,"ts":20,"dur":10},
{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1},{"ph":"X","cat":"kernel","name":"k","ts":21,"dur":1}]}`)
	if _, err := ReadKinetoReplay(steps, write("k.csv", "kernel,us\nk,1\n")); err == nil || !strings.Contains(err.Error(), "2 profiler steps") {
		t.Errorf("a trace of two steps: %v", err)
	}
}

// FuzzReplay: no replay table or trace panics the reader or the
// alignment, and every time it gives is a finite, non-negative duration.
func FuzzReplay(f *testing.F) {
	f.Add([]byte("spec,i,kernel,us\ns,0,k_gemm_kernel_name_long_enough_here,1.5\ns,1,Memset (Device),0.5\ns,2,k2,2\n"), "s")
	f.Add([]byte("kernel,us\nk_gemm_kernel_name_long_enough_here,1\nmemset,2\nk2,3\n"), "")
	f.Add([]byte(`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k2","ts":3,"dur":4},{"ph":"X","cat":"gpu_memset","name":"Memset","ts":2,"dur":1},{"ph":"X","cat":"kernel","name":"k_gemm_kernel_name_long_enough_here","ts":1,"dur":2}]}`), "")
	eager := []byte(`{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":0,"tid":1,"ts":0,"dur":3},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":0,"tid":1,"ts":1,"dur":1,"args":{"correlation":7}},
{"ph":"X","cat":"kernel","name":"k_gemm_kernel_name_long_enough_here","ts":10,"dur":5,"args":{"correlation":7}},
{"ph":"X","cat":"gpu_memset","name":"Memset (Device)","ts":16,"dur":1},
{"ph":"X","cat":"kernel","name":"k2","ts":18,"dur":2}]}`)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(eager, &top); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, spec string) {
		var rt *replayTimes
		var err error
		if len(data) > 0 && data[0] == '{' {
			rt, err = replayFromKineto(data)
		} else {
			rt, err = replayFromCSV(data, spec)
		}
		if err != nil {
			return
		}
		p, err := parseKinetoWith(top["traceEvents"], top, rt)
		if err != nil {
			return
		}
		for _, e := range p.Events {
			if !(e.DurS >= 0) || math.IsInf(e.DurS, 0) {
				t.Fatalf("event %q: %g s", e.Name, e.DurS)
			}
		}
	})
}
