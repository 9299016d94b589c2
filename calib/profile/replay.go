package profile

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A CUDA-graph replay runs a call's kernels back to back with no host
// between them, as `--runtime graph` prices them, but its trace cannot be
// matched to a model's nodes: the kernels were launched once, at capture,
// so no op or module range surrounds them and no correlation id leads
// back to one. An eager call of the same module launches the same kernels
// in the same order, each under the op and module that issued it. So a
// replay is read beside a Kineto trace of one eager call: the i-th kernel
// of the replay is the i-th of the call, and takes its place.

// replayTimes are a replay's kernels in execution order: their names and
// their durations in microseconds, averaged over runs replays.
type replayTimes struct {
	names []string
	us    []float64
	runs  int
	path  string
}

// ReadKinetoReplay reads tracePath, a PyTorch (Kineto) trace of one eager
// call, with each kernel's time replaced by that of the kernel at the same
// position in a CUDA-graph replay of the call. replay is the replay's
// kernels: a Kineto trace of one or more replays (profiled around
// graph.replay()), or a CSV with kernel and us columns (scripts/
// measure_gpu.py --profile writes one, a spec column naming each call);
// "FILE#SPEC" picks the rows of one spec. The two must list the same
// kernels in the same order, or it is an error naming the first that
// differs.
func ReadKinetoReplay(tracePath, replay string) (*Profile, error) {
	rt, err := readReplay(replay)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(tracePath)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", tracePath, errorText(err))
	}
	top, err := kinetoTop(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v (--replay needs a PyTorch (Kineto) trace of one eager call)", tracePath, err)
	}
	p, err := parseKinetoWith(top["traceEvents"], top, rt)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", tracePath, err)
	}
	p.Path = tracePath
	return p, nil
}

// kinetoTop is the top level of a (possibly gzipped) Kineto trace.
func kinetoTop(data []byte) (map[string]json.RawMessage, error) {
	data, err := gunzipped(data)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		return nil, fmt.Errorf("a list of events (an onnxruntime or trtexec profile), not a PyTorch trace")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, jsonError(err)
	}
	if _, ok := top["traceEvents"]; !ok {
		return nil, fmt.Errorf("a JSON object with no traceEvents")
	}
	return top, nil
}

// ReplayFile splits a --replay argument into the file it reads and the
// spec it picks: "FILE#SPEC" unless a file is named so whole.
func ReplayFile(arg string) (path, spec string) {
	if _, err := os.Stat(arg); err != nil {
		if i := strings.LastIndexByte(arg, '#'); i > 0 {
			return arg[:i], arg[i+1:]
		}
	}
	return arg, ""
}

// readReplay reads a replay's kernels from "FILE" or "FILE#SPEC".
func readReplay(arg string) (*replayTimes, error) {
	path, spec := ReplayFile(arg)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, errorText(err))
	}
	if data, err = gunzipped(data); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var rt *replayTimes
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		if spec != "" {
			return nil, fmt.Errorf("%s: a Kineto trace has no specs to pick (#%s)", path, spec)
		}
		rt, err = replayFromKineto(t)
	} else {
		rt, err = replayFromCSV(data, spec)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	rt.path = arg
	return rt, nil
}

// isKernelEvent reports whether e is a device event a Kineto trace
// times: a kernel, a copy or a memset.
func isKernelEvent(e *chromeEvent) bool {
	return e.Ph == "X" && (e.Cat == "kernel" || e.Cat == "gpu_memcpy" || e.Cat == "gpu_memset")
}

// kernelOrder is the indices of evs' device events by start time (file
// order on a tie).
func kernelOrder(evs []chromeEvent) []int {
	var idx []int
	for i := range evs {
		if isKernelEvent(&evs[i]) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return evs[idx[a]].Ts < evs[idx[b]].Ts })
	return idx
}

// replayFromKineto is the kernels of a Kineto trace of replays, one run
// of all of them: the runs are told apart when the eager call's kernel
// count is known (alignReplay), so here there is one.
func replayFromKineto(data []byte) (*replayTimes, error) {
	top, err := kinetoTop(data)
	if err != nil {
		return nil, err
	}
	evs, err := kinetoTraceEvents(top["traceEvents"])
	if err != nil {
		return nil, err
	}
	rt := &replayTimes{runs: 1}
	for _, i := range kernelOrder(evs) {
		rt.names = append(rt.names, evs[i].Name)
		rt.us = append(rt.us, evs[i].Dur)
	}
	if len(rt.us) == 0 {
		return nil, fmt.Errorf("no kernel events: not a profile of a replay on the GPU")
	}
	return rt, nil
}

// replayFromCSV is the rows of a kernel,us table (of spec, when given or
// when the table has a spec column naming one spec only).
func replayFromCSV(data []byte, spec string) (*replayTimes, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("not a kernel table: %v", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	ki, okK := col["kernel"]
	ui, okU := col["us"]
	si, okS := col["spec"]
	if !okK || !okU {
		return nil, fmt.Errorf("not a kernel table: the header needs kernel and us columns (scripts/measure_gpu.py --profile writes spec,i,kernel,us)")
	}
	if spec != "" && !okS {
		return nil, fmt.Errorf("no spec column to pick #%s from", spec)
	}
	rt := &replayTimes{runs: 1}
	var specs []string
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if len(rec) <= max(ki, ui) || (okS && len(rec) <= si) {
			return nil, fmt.Errorf("line %d: %d fields, the header has %d", line, len(rec), len(head))
		}
		if okS {
			if s := rec[si]; !slices.Contains(specs, s) {
				specs = append(specs, s)
			}
			if spec != "" && rec[si] != spec {
				continue
			}
		}
		us, err := strconv.ParseFloat(strings.TrimSpace(rec[ui]), 64)
		if err == nil {
			err = duration("us", us*1e-6)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: us %q: not a duration in microseconds", line, rec[ui])
		}
		rt.names = append(rt.names, rec[ki])
		rt.us = append(rt.us, us)
	}
	switch {
	case spec == "" && len(specs) > 1:
		return nil, fmt.Errorf("holds %d calls (%s): pick one as FILE#SPEC", len(specs), strings.Join(specs, ", "))
	case len(rt.us) == 0 && spec != "":
		return nil, fmt.Errorf("no rows of spec %q (it has %s)", spec, strings.Join(specs, ", "))
	case len(rt.us) == 0:
		return nil, fmt.Errorf("no kernel rows")
	}
	return rt, nil
}

// alignReplay sets the duration of each device event of evs, in start
// order, to the replay's kernel at the same position: n of them, or the
// mean over the replay's runs when it holds k·n kernels in runs of n
// alike. Names must agree position by position (a copy or memset by its
// kind: a graph names its copy nodes differently).
func alignReplay(evs []chromeEvent, rt *replayTimes) error {
	order := kernelOrder(evs)
	n := len(order)
	if n == 0 {
		return fmt.Errorf("the eager trace has no kernel events to align the replay with (a trace of the GPU's call is needed)")
	}
	if len(rt.us) == 0 || len(rt.us)%n != 0 {
		return fmt.Errorf("the replay %s has %d kernels, the eager call %d: not the same call's kernels", rt.path, len(rt.us), n)
	}
	runs := len(rt.us) / n
	for i, at := range order {
		sum := 0.0
		for r := range runs {
			j := r*n + i
			if !sameKernel(evs[at].Name, rt.names[j]) {
				return fmt.Errorf("the replay %s's kernel %d is %q where the eager call's is %q: not the same call's kernels", rt.path, j+1, clip(rt.names[j], 80), clip(evs[at].Name, 80))
			}
			sum += rt.us[j]
		}
		evs[at].Dur = sum / float64(runs)
	}
	rt.runs = runs
	return nil
}

// sameKernel compares two device events' names as a trace and a replay
// table write them: a table may keep only the start of a long template
// name (measure_gpu.py keeps 160 characters), so a name of at least
// minKernelPrefix characters that starts the other counts as the same.
func sameKernel(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	for _, kind := range []string{"memcpy", "memset"} {
		if strings.HasPrefix(strings.ToLower(a), kind) || strings.HasPrefix(strings.ToLower(b), kind) {
			return strings.HasPrefix(strings.ToLower(a), kind) && strings.HasPrefix(strings.ToLower(b), kind)
		}
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || (len(a) >= minKernelPrefix && strings.HasPrefix(b, a))
}

// minKernelPrefix is the shortest start of a kernel name taken as the
// whole name's (a library kernel's name is its namespace, its template
// and its arguments: 32 characters pass the namespace).
const minKernelPrefix = 32
