package cost_test

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/fuzzgraph"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
)

var (
	fuzzDTypes = append([]string{""}, cost.DTypes()...)
	fuzzGPUs   = hwdb.All()
	// fuzzRuntimes: the default (nil) and every built-in profile, so the
	// eager, Inductor and onnxruntime plans are fuzzed as TensorRT's is.
	fuzzRuntimes = append([]*hwdb.Runtime{nil}, hwdb.Runtimes()...)
)

// FuzzAnalyze costs graphs decoded from the fuzz bytes
// (internal/fuzzgraph) on a GPU, dtype and runtime the bytes choose (the
// runtime from fuse's upper bits, so the committed corpus keeps its
// shape), fused or not,
// with the symbolic batch and height bound to values up to 2^40 so that
// counts get large (checkFuzzAnalysis).
func FuzzAnalyze(f *testing.F) {
	f.Add([]byte{}, uint8(0), uint8(0), uint8(0), uint8(0))
	f.Add([]byte{2, 0, 3, 6, 6, 6, 3, 0, 0, 1, 1, 1, 0, 0, 0}, uint8(3), uint8(3), uint8(1), uint8(30))
	f.Fuzz(func(t *testing.T, data []byte, gpu, dtype, fuse, bind uint8) {
		m, ok := fuzzgraph.Build(data)
		checkFuzzAnalysis(t, m, ok, gpu, dtype, fuse, bind)
	})
}

// FuzzAnalyzeQuantized: the same on graphs of onnxruntime's QOperator
// ops (fuzzgraph.BuildQuantized).
func FuzzAnalyzeQuantized(f *testing.F) {
	f.Add([]byte{}, uint8(0), uint8(0), uint8(0), uint8(0))
	f.Add([]byte{2, 0, 3, 4, 4, 0, 5, 0, 1, 9, 1, 0, 0, 1, 0, 1, 6, 1, 8, 1, 7, 1, 10, 0}, uint8(3), uint8(0), uint8(1), uint8(30))
	// A scalar (IsAllFinite's bool, cast back) reaching QLinearConcat's
	// axis choice: the generator once divided by zero there (ir's
	// testdata/fuzz/FuzzInferQuantized/864d6531000b92ce).
	f.Add([]byte("10000111\xff111*"), uint8(0), uint8(0), uint8(0), uint8(0))
	// A LongformerAttention over a zero-length sequence: the generator
	// once flagged the first of its no global tokens (ir's
	// testdata/fuzz/FuzzInferQuantized/d447b6d2ebb6a62b).
	f.Add([]byte("9b0072qZ21Y709A+Xb!118800001q00&+!(001101+000110000000100110000000A00000000000"), uint8(0), uint8(0), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, gpu, dtype, fuse, bind uint8) {
		m, ok := fuzzgraph.BuildQuantized(data)
		checkFuzzAnalysis(t, m, ok, gpu, dtype, fuse, bind)
	})
}

// checkFuzzAnalysis costs m (when its generation was accepted: ok).
// Property: no panic, and every number of the report, per node and in
// the totals, is finite and not negative (a wrapped integer or a 0*Inf
// shows up as one or the other), and no number had to be clamped to get
// there.
func checkFuzzAnalysis(t *testing.T, m *ir.Model, ok bool, gpu, dtype, fuse, bind uint8) {
	t.Helper()
	if !ok {
		return
	}
	big := int64(1) << (bind % 41)
	opt := ir.InferOptions{Bindings: map[string]int64{"N": big, "H": 1 + big/2}}
	if _, err := ir.InferShapes(m, opt); err != nil {
		return // a refused model; FuzzInferShapes checks refusals
	}
	if fuse%2 == 1 {
		if _, err := passes.Run(m.Graph, passes.Options{}); err != nil {
			t.Fatalf("passes: %v", err)
		}
	}
	g := fuzzGPUs[int(gpu)%len(fuzzGPUs)]
	dt := fuzzDTypes[int(dtype)%len(fuzzDTypes)]
	rt := fuzzRuntimes[int(fuse/2)%len(fuzzRuntimes)]
	rtName := "default"
	if rt != nil {
		rtName = rt.Name
	}
	rep, err := cost.Analyze(m.Graph, m, g, cost.Options{DType: dt, Runtime: rt})
	if err != nil {
		return
	}
	if bad := badNumber(reflect.ValueOf(rep), "report"); bad != "" {
		t.Fatalf("%s on %s dtype %q runtime %s: %s\n%s", "Analyze", g.Name, dt, rtName, bad, ir.Dump(m.Graph))
	}
	// The report cleans what it prints, so the check above would pass
	// a wrapped count that was clamped to 0: a clamp must not happen.
	for _, w := range rep.Warnings {
		if strings.Contains(w, "clamped") {
			t.Fatalf("Analyze on %s dtype %q runtime %s: %s\n%s", g.Name, dt, rtName, w, ir.Dump(m.Graph))
		}
	}
}

// badNumber walks v and returns the path and value of the first float
// that is NaN, infinite or negative, or integer that is negative; "" if
// none.
func badNumber(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return badNumber(v.Elem(), path)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if s := badNumber(v.Field(i), path+"."+v.Type().Field(i).Name); s != "" {
				return s
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if s := badNumber(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); s != "" {
				return s
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if s := badNumber(v.MapIndex(k), fmt.Sprintf("%s[%v]", path, k)); s != "" {
				return s
			}
		}
	case reflect.Float32, reflect.Float64:
		if x := v.Float(); math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Sprintf("%s = %g", path, x)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Int() < 0 {
			return fmt.Sprintf("%s = %d", path, v.Int())
		}
	}
	return ""
}
