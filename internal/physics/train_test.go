package physics

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/train"
)

// TestTrainingNeverFasterWithBatch: a training step under the runtimes
// that train (PyTorch eager, its CUDA-graph replay and Inductor, NCHW and
// channels_last; ONNX Runtime's training kernels: cuDNN's unsplit
// convolutions and their gradient algorithms) never takes less time at a
// larger batch, on any GPU in the database, at fp32, TF32 and under
// autocast; nor does its peak of live tensors fall (the allocator's
// reserve may: its segments pack other sizes differently,
// docs/accuracy.md). AlexNet's batch-1 step on an RTX 4090 once did, its
// 13×13 data gradients priced as an algorithm chosen where cuDNN could
// split over K (train.priceBackward).
func TestTrainingNeverFasterWithBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("prices every GPU")
	}
	var runtimes []*hwdb.Runtime
	for _, name := range []string{"graph", "pytorch", "pytorch-compile", "onnxruntime", "graph-nhwc", "pytorch-nhwc"} {
		rt, err := hwdb.LookupRuntime(name)
		if err != nil {
			t.Fatal(err)
		}
		runtimes = append(runtimes, rt)
	}
	step := (&train.Options{Optimizer: "sgd"}).Training()
	var v violations
	for _, model := range []string{"zoo:alexnet", "zoo:resnet18", "zoo:vgg16", "zoo:gpt2-small?seq=128", "zoo:lstm-ptb", mobileNet, denseNet} {
		prev, prevPeak := map[string]float64{}, map[string]float64{}
		for _, batch := range []int64{1, 2, 4, 8} {
			l, err := loadTraining(model, batch)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Plan("eager", pipeline.ForTraining(passes.Options{})); err != nil {
				t.Fatal(err)
			}
			for _, g := range hwdb.All() {
				for _, rt := range runtimes {
					for _, dt := range []string{"fp32", "tf32", "fp16-amp"} {
						r, err := pipeline.Estimate(l, g, pipeline.EstimateOptions{DType: dt, Plan: rt.Plan, Runtime: rt, Train: step})
						if err != nil {
							t.Fatalf("%s batch %d on %s %s %s: %v", model, batch, g.Name, rt.Name, dt, err)
						}
						key := g.Name + " " + rt.Name + " " + dt
						got := r.Totals.Train.StepTimeS
						if p, ok := prev[key]; ok && got < p*(1-tol) {
							v.add("training step time never falls with batch", "%s %s batch %d: %.4g s < %.4g s at batch %d", model, key, batch, got, p, batch/2)
						}
						prev[key] = got
						peak := r.Totals.Train.Memory.TensorPeakBytes
						if p, ok := prevPeak[key]; ok && peak < p*(1-tol) {
							v.add("training tensor peak never falls with batch", "%s %s batch %d: %.4g B < %.4g B at batch %d", model, key, batch, peak, p, batch/2)
						}
						prevPeak[key] = peak
					}
				}
			}
		}
	}
	v.report(t)
}

// loadTraining loads a zoo path or a model file at a batch: MobileNetV2's
// depthwise convolutions are where channels_last changes the kernels,
// DenseNet's concatenations where the saved set is largest.
func loadTraining(model string, batch int64) (*pipeline.Loaded, error) {
	if strings.HasPrefix(model, "zoo:") {
		return pipeline.Load(zooAtBatch(model, batch), pipeline.Options{BindAll: true})
	}
	return pipeline.Load(model, pipeline.Options{Batch: batch})
}
