package train_test

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/train"
)

// trainMemory prices one training step of a zoo model on an H100 under
// autocast (--dtype fp16) with the eager plan PyTorch runs.
func trainMemory(t *testing.T, model, optimizer string, batch int64) report.TrainMemory {
	t.Helper()
	r, err := pipeline.Run(model, pipeline.Config{GPU: "H100-SXM5-80GB", DType: "fp16", Batch: batch, Runtime: "pytorch",
		Train: (&train.Options{Optimizer: optimizer}).Training()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.Train == nil {
		t.Fatal("no training step in the report")
	}
	return r.Totals.Train.Memory
}

// TestResNet50SavedActivationsByHand derives, layer by layer, what
// autograd keeps from torchvision's ResNet-50 forward at batch 64 under
// autocast (the measured row resnet50,train-sgd,fp16-amp,64 of
// testdata/measured/h100_sxm5_pytorch.csv) and checks the memory model's
// activations against it. Per op (PyTorch's derivatives.yaml):
// convolution saves its input and (fp16) weight; cuDNN BatchNorm saves
// its input plus per-channel save_mean/save_invstd; ReLU(inplace=True)
// saves its result, which is BatchNorm's output buffer, so a
// Conv→BN→ReLU keeps two buffers of the conv's output size; the block's
// out += identity is in place on bn3's output and saves nothing; the
// downsample BN's output is read by that add and freed; MaxPool2d keeps
// its input (the stem's ReLU output) and int64 indices of its output's
// size; the head's linear keeps its 2048-wide input. Element counts per
// image (fp16, 2 bytes each), with a bottleneck of width w at input size
// H×W, stride s on its 3×3 (torchvision v1.5):
//
//	conv1 w·H·W ×2, conv2 w·H·W/s² ×2, conv3 4w·H·W/s² ×2, downsample 4w·H·W/s² ×1
//
//	stem: autocast's fp16 copy of the image 3·224² = 150,528 (saved by
//	      conv1); conv1 out 64·112² = 802,816 ×2; pool out 64·56² = 200,704
//	      (+ 200,704 int64 indices = 1,605,632 B)           → 1,956,864
//	layer1 (w 64, 56², s 1): 3 × (200,704·2 + 200,704·2 + 802,816·2)
//	      + downsample 802,816                              → 8,028,160
//	layer2 (w 128, 56²→28²): first 802,816 + 200,704 + 802,816 + 401,408;
//	      3 more × 1,204,224                                → 5,820,416
//	layer3 (w 256, 28²→14²): first 1,103,872; 5 more × 602,112 → 4,114,432
//	layer4 (w 512, 14²→7²): first 551,936; 2 more × 301,056 → 1,154,048
//	head: pooled 2,048 (saved by the linear); logits 1,000 (the loss)
//	total fp16 elements per image                           = 21,076,968
//
// Bytes per image: 2 × 21,076,968 + 1,605,632 (indices) = 43,759,568;
// the fp32 image the loop holds, 4 × 150,528 = 602,112; the loss's
// log_softmax output, fp32 under autocast, 4 × 1,000 — 44,365,680 B,
// × 64 = 2,839,403,520 B (2707.9 MiB). The measured peak
// (max_memory_allocated) is 3036 MiB; the rest is the fp32 parameters
// 25,557,032 × 4 = 97.5 MiB, momentum 97.5 MiB, the fp16 weight copies
// 48.7 MiB (freed through the backward) and the fp32 gradients made
// during the backward (at most 97.5 MiB).
func TestResNet50SavedActivationsByHand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ResNet-50")
	}
	m := trainMemory(t, "zoo:resnet50", "momentum", 64)
	const perImage = 2*21076968 + 1605632 + 4*150528 + 4*1000
	if want := 64.0 * perImage; math.Abs(m.ActivationsBytes-want) > 1e-6*want {
		t.Errorf("activations %.0f B, hand derivation %.0f B (%+.3f%%)", m.ActivationsBytes, want, 100*(m.ActivationsBytes/want-1))
	}
	const params = 25557032
	if m.MasterWeightsBytes != 4*params || m.GradientsBytes != 4*params || m.OptimizerStateBytes != 4*params {
		t.Errorf("fp32 params %.0f, grads %.0f, momentum %.0f B; want %d each", m.MasterWeightsBytes, m.GradientsBytes, m.OptimizerStateBytes, 4*params)
	}
	// Autocast casts every convolution's weight and the linear's weight
	// and bias, not BatchNorm's scale and shift (2 × 26,560 channels).
	if want := 2.0 * (params - 2*26560); m.WeightsBytes != want {
		t.Errorf("fp16 weight copies %.0f B, want %.0f", m.WeightsBytes, want)
	}
}

// TestVGG16SavedActivationsByHand: torchvision's VGG-16 at batch 32
// under autocast (the row vgg16,train-sgd,fp16-amp,32). Each conv's bias
// is added into its output in place and ReLU(inplace=True) overwrites it,
// so one buffer per conv, saved by the ReLU and read by the next conv or
// pool; each MaxPool2d keeps int64 indices of its output's size. fp16
// elements per image:
//
//	image copy 150,528
//	conv outputs 64·224²·2 + 128·112²·2 + 256·56²·3 + 512·28²·3 + 512·14²·3 = 13,547,520
//	pool outputs read by the next conv 802,816 + 401,408 + 200,704 + 100,352 = 1,505,280
//	the last pool's output, kept by AdaptiveAvgPool2d (avg_pool2d_backward takes self) 25,088
//	average pool output (read by the first linear) 25,088; linear outputs 4,096 + 4,096 + 1,000
//	total 15,262,696
//
// Bytes: 2 × 15,262,696 + 8 × 1,530,368 (indices of all five pools) +
// 602,112 (the fp32 image) + 4,000 (the loss's fp32 log-probabilities) =
// 43,374,448 per image. PyTorch's autograd keeps the same set in fp32
// (scripts/saved_tensors.py: VGG-16 within 0.1%).
func TestVGG16SavedActivationsByHand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds VGG-16")
	}
	m := trainMemory(t, "zoo:vgg16", "momentum", 32)
	const perImage = 2*15262696 + 8*1530368 + 4*150528 + 4*1000
	if want := 32.0 * perImage; math.Abs(m.ActivationsBytes-want) > 1e-6*want {
		t.Errorf("activations %.0f B, hand derivation %.0f B (%+.3f%%)", m.ActivationsBytes, want, 100*(m.ActivationsBytes/want-1))
	}
}
