package main

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
)

// TestConvGradTable: a table in the layout scripts/measure_gpu.py
// --conv-grads writes is read one gradient per group of rows (a data and
// a weight gradient of one convolution are two), each priced as a
// training step prices it; a bad gradient name, layout or size is
// refused by name. A format check: the rows are a CPU dry run's shape
// (PyTorch's operators for kernels) and a hand-written GPU one.
func TestConvGradTable(t *testing.T) {
	write := tableWriter(t, convGradHeader+"\n")
	ok := write("ok.csv", "fp32,nchw,dgrad,1,8,16,8,3,1,0.20000,aten::convolution_backward,,,,,190.00,\n"+
		"fp32,nchw,wgrad,1,8,16,8,3,1,0.25000,aten::convolution_backward,,,,,240.00,\n"+
		"fp16,nhwc,wgrad,32,64,56,64,3,1,0.09000,\"void sm80_xmma_wgrad_implicit_gemm<int>(int)\",132x1x1,128x1x1,168,81920,80.00,4.0\n"+
		"fp16,nhwc,wgrad,32,64,56,64,3,1,0.09000,\"void splitKreduce_kernel<int>(int)\",66x1x1,128x1x1,32,0,6.00,4.0\n")
	s := tableOutput(t, "H100", ok)
	t.Log("\n" + s)
	for _, want := range []string{"sm80_xmma_wgrad_implicit_gemm (132x1x1), splitKreduce_kernel (66x1x1)", "3 gradients on H100-SXM5-80GB",
		"fp32 nchw dgrad (1 gradients): median |error| ", "fp32 nchw wgrad (1 gradients): median |error| ", "fp16 nhwc wgrad (1 gradients): median |error| ",
		"gemm fp16_tensor"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Count(s, "\n") != 8 {
		t.Errorf("want a header, three gradients, their three groups and a summary:\n%s", s)
	}
	refusedNamingFile(t, write, map[string]string{
		"grad.csv":   "fp32,nchw,xgrad,1,8,16,8,3,1,0.1,aten::convolution_backward,,,,,1,\n",
		"layout.csv": "fp32,nhcw,dgrad,1,8,16,8,3,1,0.1,aten::convolution_backward,,,,,1,\n",
		"size.csv":   "fp32,nchw,dgrad,1,8,x,8,3,1,0.1,aten::convolution_backward,,,,,1,\n",
	})
}

// TestConvGradPricedAsTraining: the table prices a gradient exactly as a
// training step's convolution gradient (perf.EstimateConvGrad in a plan
// under the layout's replay runtime, less the plan's gap), so what it
// measures is what train charges.
func TestConvGradPricedAsTraining(t *testing.T) {
	g, err := hwdb.Lookup("H100")
	if err != nil {
		t.Fatal(err)
	}
	for _, grad := range []perf.Grad{perf.GradData, perf.GradWeight} {
		c := conv{dtype: "fp32", layout: "nchw", grad: grad, batch: 32, c: 256, hw: 14, k: 256, r: 3, stride: 1}
		_, got, err := priceGrad(g, c)
		if err != nil {
			t.Fatal(err)
		}
		o, err := replayOptions()
		if err != nil {
			t.Fatal(err)
		}
		geom := perf.ConvGeom{N: 32, C: 256, H: 14, W: 14, K: 256, R: 3, S: 3, PadH: 1, PadW: 1, StrideH: 1, StrideW: 1}
		_, kt := perf.EstimateConvGrad(g, geom, grad, "fp32", 4, 4, o)
		if want := kt.TimeS - kt.LaunchS; got != want || !(got > 0) {
			t.Errorf("%s: priced %g s, EstimateConvGrad under graph %g s", grad, got, want)
		}
	}
}
