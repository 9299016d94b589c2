package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/viz"
)

var (
	scaleOnce sync.Once
	scaleDir  string // removed by TestMain
	scalePath string
	scaleErr  error
)

// scaleModel writes the generated graph-only model once per test binary,
// or returns $ONNXCOST_BENCH_MODEL when set, to time the same stages on
// another model (DenseNet-121 with weights, say).
func scaleModel(b *testing.B) string {
	if p := os.Getenv("ONNXCOST_BENCH_MODEL"); p != "" {
		return p
	}
	scaleOnce.Do(func() {
		m, err := models.ScaleLlama()
		if err != nil {
			scaleErr = err
			return
		}
		scaleDir, scaleErr = os.MkdirTemp("", "onnxcost-scale-")
		if scaleErr != nil {
			return
		}
		scalePath = filepath.Join(scaleDir, "llama-112k.onnx")
		models.SetDataFile(m, "llama-112k.onnx.data")
		scaleErr = ir.WriteFile(scalePath, m)
	})
	if scaleErr != nil {
		b.Fatal(scaleErr)
	}
	return scalePath
}

func benchCLI(b *testing.B, args ...string) {
	path := scaleModel(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code := run(append([]string{args[0], path}, args[1:]...), io.Discard, io.Discard); code != 0 {
			b.Fatalf("%v: exit %d", args, code)
		}
	}
}

// BenchmarkScaleShapes is `onnxcost shapes` on a 112k-node LLaMA-shaped graph.
func BenchmarkScaleShapes(b *testing.B) { benchCLI(b, "shapes") }

// BenchmarkScaleShapesJSON is `onnxcost shapes --format json` on it.
func BenchmarkScaleShapesJSON(b *testing.B) { benchCLI(b, "shapes", "--format", "json") }

// BenchmarkScaleReport is `onnxcost report --gpu A100` on it.
func BenchmarkScaleReport(b *testing.B) { benchCLI(b, "report", "--gpu", "A100") }

// TestMain removes the scale benchmarks' model after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if scaleDir != "" {
		os.RemoveAll(scaleDir)
	}
	os.Exit(code)
}

// BenchmarkScaleStages times each stage of `report --gpu A100` and
// `shapes` on the 112k-node graph on its own (the state a stage starts
// from is built with the timer stopped): read, infer (inlining, naming,
// inference), passes (the fused plan), analyze, render (the text report),
// shapes (the shapes text table). live-MB is the heap still reachable
// after the stage, its input and result held.
func BenchmarkScaleStages(b *testing.B) {
	path := scaleModel(b)
	gpu, err := resolveGPU("A100", "")
	if err != nil {
		b.Fatal(err)
	}
	load := func(b *testing.B) *pipeline.Loaded {
		l, err := pipeline.Load(path, pipeline.Options{BindAll: true})
		if err != nil {
			b.Fatal(err)
		}
		return l
	}
	planned := func(b *testing.B) *pipeline.Loaded {
		l := load(b)
		if err := l.Plan("fused", passes.Options{}); err != nil {
			b.Fatal(err)
		}
		return l
	}
	estimate := func(b *testing.B, l *pipeline.Loaded) *report.Report {
		r, err := pipeline.Estimate(l, gpu, pipeline.EstimateOptions{Plan: "fused", ToolVersion: version, ModelName: path})
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	stage := func(name string, setup func(b *testing.B) any, body func(b *testing.B, s any) any) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var live uint64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				var s any
				if setup != nil {
					s = setup(b)
				}
				runtime.GC()
				b.StartTimer()
				out := body(b, s)
				b.StopTimer()
				live += liveHeap()
				runtime.KeepAlive(s)
				runtime.KeepAlive(out)
				b.StartTimer()
			}
			b.ReportMetric(float64(live)/float64(b.N)/1e6, "live-MB")
		})
	}
	stage("read", nil, func(b *testing.B, _ any) any {
		m, err := ir.ReadFile(path, ir.ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return m
	})
	stage("read+infer", nil, func(b *testing.B, _ any) any { return load(b) })
	stage("passes", func(b *testing.B) any { return load(b) }, func(b *testing.B, s any) any {
		if err := s.(*pipeline.Loaded).Plan("fused", passes.Options{}); err != nil {
			b.Fatal(err)
		}
		return nil
	})
	stage("analyze", func(b *testing.B) any { return planned(b) }, func(b *testing.B, s any) any {
		return estimate(b, s.(*pipeline.Loaded))
	})
	stage("render", func(b *testing.B) any { return estimate(b, planned(b)) }, func(b *testing.B, s any) any {
		if err := render.Text(io.Discard, s.(*report.Report), render.Options{}); err != nil {
			b.Fatal(err)
		}
		return nil
	})
	stage("shapes-text", func(b *testing.B) any { return load(b) }, func(b *testing.B, s any) any {
		l := s.(*pipeline.Loaded)
		if err := viz.WriteShapesText(io.Discard, l.Path, l.Model.Graph); err != nil {
			b.Fatal(err)
		}
		return nil
	})
	stage("shapes-json", func(b *testing.B) any { return load(b) }, func(b *testing.B, s any) any {
		l := s.(*pipeline.Loaded)
		if err := viz.WriteShapesJSON(io.Discard, viz.NewShapes(l.Path, l.Model, l.Bindings, l.Warnings, l.Infer.UnknownOps, l.Infer.Unbound, version)); err != nil {
			b.Fatal(err)
		}
		return nil
	})
}

// liveHeap collects and returns the bytes still reachable: what a stage
// leaves for the next to hold (its input and its result), the floor under
// a process's peak heap.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
