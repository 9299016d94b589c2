package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/internal/measured"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/train"
)

// savedTolerance bounds |activations_bytes − saved| / saved per row: the
// 34 rows of testdata/measured/saved_tensors.csv are within 0.46%
// (ViT-B/16).
const savedTolerance = 0.015

// TestSavedTensorsMatchAutograd: a training step's activations kept for
// backward (train.memory.activations_bytes) are the tensors PyTorch's
// autograd saves in the same model's training forward, plus the outputs
// the caller holds (testdata/measured/saved_tensors.csv, exact counts by
// scripts/saved_tensors.py). Before ReLU6 kept a copy of its input
// (train/memory.go memInplaceOps) MobileNetV2 was 31.2% short; before Mul
// and Div saved only the operands their gradients read (train's
// mulBackward) our BERT-base was 10.9% over (a [B, H, S, S] score buffer
// a layer) and the GPT 0.9% (batch 8); before an average pool kept its
// input (avg_pool2d_backward takes self) DenseNet-121 was 2.2% short.
// The models of testdata/saved (gzipped graph-only exports)
// were, before the eager plan ran SiLU as one op, Slice and Split were
// views, a weight's Transpose a view of it, a Dropout of ratio 0 its
// input and a max pool kept its input: EfficientNet-B0 +27.4%,
// ShuffleNetV2 −6.6%, ViT-B/16 +110%, Swin-T +7.9%, GoogLeNet −4.9%
// (batch 2); before the eager plan left a tanh GELU written with Pow
// (Hugging Face's NewGELUActivation) as its eight ops, the GPT with it
// −9.4%; before a cast to the dtype its input has was a view and Neg
// and Cast kept nothing, a small LLaMA written as Hugging Face's
// modeling_llama +5.1% (its RMSNorms' .to(torch.float32), rotate_half's
// negation); before torch.where kept its condition alone, a GPT-2
// written as modeling_gpt2 +0.6% (+3.4% at sequence 512); before the
// eager plan folded the Pad torch.onnx writes for avg_pool2d's padding
// into the pool (passes fold-pad-pool), Inception-v3 +10.1%.
func TestSavedTensorsMatchAutograd(t *testing.T) {
	if testing.Short() {
		t.Skip("prices six training steps at two batches")
	}
	path := filepath.Join("..", "..", "testdata", "measured", "saved_tensors.csv")
	recs, err := measured.Read(path, "model,batch,saved_bytes")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 34 {
		t.Fatalf("%s: %d rows, want 34", path, len(recs))
	}
	for _, rec := range recs {
		model, batch := rec[0], rec[1]
		want, err := strconv.ParseFloat(rec[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(model, ".gz"):
			model = gunzipTo(t, filepath.Join("..", "..", model), t.TempDir())
		case !strings.HasPrefix(model, "zoo:"):
			model = filepath.Join("..", "..", model)
		}
		r := measuredJSON(t, model, "--train", "--batch", batch, "--runtime", "pytorch")
		if r.Totals.Train == nil {
			t.Fatalf("%s: no training totals", rec[0])
		}
		got := r.Totals.Train.Memory.ActivationsBytes
		e := (got - want) / want
		t.Logf("%-42s b=%s autograd %9.2f MB, priced %9.2f MB  %+6.2f%%", rec[0], batch, want/1e6, got/1e6, 100*e)
		if e > savedTolerance || e < -savedTolerance {
			t.Errorf("%s batch %s: activations %.2f MB against autograd's %.2f MB (%+.1f%%)", rec[0], batch, got/1e6, want/1e6, 100*e)
		}
	}
}

// gunzipTo writes the gzipped model at path into dir, under its name
// without ".gz", and returns the new path.
func gunzipTo(t *testing.T, path, dir string) string {
	t.Helper()
	out, err := measured.Gunzip(path, dir)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInplaceActivationClones: an in-place activation whose gradient
// reads its input (ReLU6, Hardswish, SiLU) makes autograd clone that
// input in every recorded forward, one copy kernel each: torch.profiler
// counts aten::clone once per hardtanh_, hardswish_ and silu_ of
// torchvision's models in training mode (torch 1.13 on the CPU, batch 2:
// MobileNetV2 35, MobileNetV3-small 19, EfficientNet-B0 49; ResNet's
// relu_ saves its result and clones nothing). The eager training step
// prices those copies as forward launches of the activation's node;
// Inductor's compiled step has none.
func TestInplaceActivationClones(t *testing.T) {
	if testing.Short() {
		t.Skip("prices training steps of four CNNs")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		model  string
		clones float64
	}{
		{filepath.Join("..", "..", "testdata", "models", "mobilenet_v2.onnx"), 35},
		{gunzipTo(t, filepath.Join("..", "..", "testdata", "saved", "mobilenet_v3_small.onnx.gz"), dir), 19},
		{gunzipTo(t, filepath.Join("..", "..", "testdata", "saved", "efficientnet_b0.onnx.gz"), dir), 49},
		{filepath.Join("..", "..", "testdata", "models", "resnet50.onnx"), 0},
	} {
		for _, rt := range []string{"pytorch", "pytorch-compile"} {
			r, err := pipeline.Run(c.model, pipeline.Config{GPU: "H100-SXM5-80GB", DType: "fp16-amp", Batch: 2, Runtime: rt,
				Train: (&train.Options{Optimizer: "sgd"}).Training()})
			if err != nil {
				t.Fatal(err)
			}
			var clones float64
			for _, e := range r.Totals.Train.Dispatch {
				if e.Phase != "forward" || e.Node < 0 {
					continue
				}
				if n := r.Nodes[e.Node]; n.OpType == "Clip" || n.OpType == "HardSwish" || n.OpType == "QuickGelu" {
					clones += e.Launches - n.Launches
				}
			}
			want := c.clones
			if rt != "pytorch" {
				want = 0
			}
			if clones != want {
				t.Errorf("%s under %s: %v clone launches, want %v", filepath.Base(c.model), rt, clones, want)
			}
		}
	}
}

// TestORTPlanHFModels holds the onnxruntime plan on the Hugging Face-style
// models of testdata/saved to the graphs onnxruntime 1.23.2 built from
// the same exports with their weights (CPU session, level all, the
// optimized graph saved, nodes counted without views): 141 and 103. Of
// those, 55 and 53 are shape arithmetic of the symbolic batch, which its
// CUDA provider runs on the host (the plan's nodes marked on_host; two of
// the LLaMA's Splits of a shape are four Gathers in the plan), and the
// LLaMA's CPU graph keeps 2 mask Adds CUDA's BiasSoftmax takes; the rest
// are kernels, with the GPT-2's two MemcpyFromHost of its host-computed
// attention scale: 84 and 52 launches, with all five RMSNorms of the
// LLaMA and both NewGELUs of the GPT-2 fused as onnxruntime fused them
// (SimplifiedLayerNormalization, FastGelu). The position Range, the
// LLaMA's cast of it and the GPT-2's mask Slices run on the GPU (their
// CUDA kernels read the computed sizes on the host).
func TestORTPlanHFModels(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name                        string
		ort, host, maskAdds, copies float64
		fused                       string
		n                           float64
	}{
		{"llama_hf_small", 141, 55, 2, 0, "RMSNormalization", 5},
		{"gpt2_hf_small", 103, 53, 0, 2, "Gelu", 2},
	} {
		model := gunzipTo(t, filepath.Join("..", "..", "testdata", "saved", c.name+".onnx.gz"), dir)
		r, err := pipeline.Run(model, pipeline.Config{GPU: "A100-SXM4-80GB", Batch: 2, Runtime: "onnxruntime"})
		if err != nil {
			t.Fatal(err)
		}
		// A graph node is a kernel launch of onnxruntime's, less the
		// helpers cuBLAS launches inside one (its split-K reduce).
		var fused, helpers, host float64
		for _, n := range r.Nodes {
			if n.OpType == c.fused {
				fused += n.Launches
			}
			helpers += n.HelperLaunches
			if n.OnHost && !ortViews[n.OpType] {
				host++
			}
		}
		want := c.ort - c.host - c.maskAdds + c.copies
		if got := r.Totals.Launches - helpers; got != want || host != c.host || fused != c.n {
			t.Errorf("%s under onnxruntime: %v kernels (%v cuBLAS helpers besides), %v host nodes, %v %s; want onnxruntime's %v - %v on the host - %v mask Adds + %v copies = %v, %v and %v",
				c.name, got, helpers, host, fused, c.fused, c.ort, c.host, c.maskAdds, c.copies, want, c.host, c.n)
		}
	}
}

// TestORTPlanSwinDynamicBatch holds the onnxruntime plan on torchvision's
// Swin-T as exported (batch symbolic, bound to 1) to the graph onnxruntime
// 1.23.2 built from it (CPU, level all, saved, views aside): 1,737 nodes,
// of which 7 relative-position-bias Adds its CUDA BiasSoftmax takes; the
// CPU layout's ReorderOutput is the patch embedding's Transpose, which
// the CUDA provider runs, as it runs the 4 that move only dims of size 1.
// The rest are the plan's GPU nodes, the shifted windows' attention masks
// among them (built on every call from a size read off the input's Shape:
// ConstantOfShape, Slice, Expand, ScatterND on Range-built indices), and
// 691 nodes it runs on the host (their shape arithmetic).
func TestORTPlanSwinDynamicBatch(t *testing.T) {
	model := gunzipTo(t, filepath.Join("..", "..", "testdata", "saved", "swin_t.onnx.gz"), t.TempDir())
	r, err := pipeline.Run(model, pipeline.Config{GPU: "A100-SXM4-80GB", Batch: 1, Runtime: "onnxruntime"})
	if err != nil {
		t.Fatal(err)
	}
	var gpu, host, masks int
	for _, n := range r.Nodes {
		switch {
		case ortViews[n.OpType]:
		case n.OnHost:
			host++
		case n.Launches > 0:
			gpu++
			if n.OpType == "ScatterND" || n.OpType == "ConstantOfShape" {
				masks++
			}
		}
	}
	if want := 1737 - 7; gpu+host != want || host != 691 || masks != 95 {
		t.Errorf("Swin-T under onnxruntime: %d GPU nodes (%d ScatterND and ConstantOfShape) and %d on the host; want %d in all, 691 on the host, 95 of the masks' ScatterND and ConstantOfShape",
			gpu, masks, host, want)
	}
}

// ortViews are the ops onnxruntime's saved graphs were counted without.
var ortViews = map[string]bool{"Reshape": true, "Unsqueeze": true, "Squeeze": true, "Flatten": true, "Identity": true, "Shape": true, "Constant": true}

// TestMeasuredModelFindsSavedExports: a measured row naming a model of
// testdata/saved (scripts/measure_gpu.py --models llama_hf_small,...) is
// priced on that export, unpacked once.
func TestMeasuredModelFindsSavedExports(t *testing.T) {
	dir := t.TempDir()
	p := measuredModel(t, dir, "gpt2_hf_small")
	if p != filepath.Join(dir, "gpt2_hf_small.onnx") || measuredModel(t, dir, "gpt2_hf_small") != p {
		t.Fatalf("gpt2_hf_small: %s", p)
	}
	if r := measuredJSON(t, p, "--runtime", "pytorch", "--batch", "1"); r.Totals.Launches == 0 {
		t.Errorf("%s: no kernels priced", p)
	}
}

// TestPadFoldInception: torchvision's Inception-v3 pads nine of its
// average pools (avg_pool2d(x, 3, 1, padding=1)), which torch.onnx writes
// as a Pad before each AveragePool. No runtime runs those Pads: PyTorch's
// avg_pool2d pads as it reads, onnxruntime 1.23.2 saved the model with
// all nine folded into their pools (its PadFusion; level basic, CPU), and
// an engine does the same; the graph as read keeps them.
func TestPadFoldInception(t *testing.T) {
	model := gunzipTo(t, filepath.Join("..", "..", "testdata", "saved", "inception_v3.onnx.gz"), t.TempDir())
	for _, c := range []struct {
		runtime, plan string
		pads          int
	}{
		{"pytorch", "", 0}, {"onnxruntime", "", 0}, {"tensorrt", "", 0}, {"pytorch-compile", "", 0}, {"tensorrt", "unfused", 9},
	} {
		r, err := pipeline.Run(model, pipeline.Config{GPU: "A100-SXM4-80GB", Batch: 2, Runtime: c.runtime, Plan: c.plan})
		if err != nil {
			t.Fatal(err)
		}
		pads := 0
		for _, n := range r.Nodes {
			if n.OpType == "Pad" {
				pads++
			}
		}
		if pads != c.pads {
			t.Errorf("%s (plan %q): %d Pad nodes priced, want %d", c.runtime, c.plan, pads, c.pads)
		}
	}
}
