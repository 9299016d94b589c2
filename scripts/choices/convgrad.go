package main

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
)

// convGradHeader is --conv-grads' table: convHeader with the gradient
// (dgrad, wgrad) after the layout.
const convGradHeader = "dtype,layout,grad,batch,c,hw,k,r,stride,ms,kernel,grid,block,regs,smem,us,ws_mib"

// convGradTable prints each gradient of a --conv-grads table beside the
// price a training step gives it (perf.EstimateConvGrad, as train prices
// a convolution's gradient: the cheaper of implicit GEMM and Winograd in
// a plan under the replay runtime of the layout), its kernels' time less
// the plan's gap, operands cold: the sweep's calls run back to back, so a
// layer whose tensors fit in L2 reads slow here.
func convGradTable(w io.Writer, g *hwdb.GPU, path string, recs [][]string) error {
	cs, err := readConvs(path, recs, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-5s %-6s %-5s %5s %5s %4s %5s %2s %2s %10s %10s %8s  %-16s %9s  %s\n", "dtype", "layout", "grad", "batch", "c", "hw", "k", "r", "s",
		"measured", "priced", "error", "model's", "ws MiB", "cuDNN kernels (grid)")
	var errs errorGroups
	for _, c := range cs {
		k, priced, err := priceGrad(g, c)
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		e := errs.add(fmt.Sprintf("%s %s %s", c.dtype, c.layout, c.grad), priced/(c.ms*1e-3))
		fmt.Fprintf(w, "%-5s %-6s %-5s %5d %5d %4d %5d %2d %2d %8.2fus %8.2fus %+7.1f%%  %-16s %9s  %s\n", c.dtype, c.layout, c.grad, c.batch, c.c, c.hw, c.k, c.r, c.stride,
			c.ms*1e3, priced*1e6, 100*e, gradKernelName(k), cmp.Or(c.wsMiB, "-"), strings.Join(c.kernels, ", "))
	}
	errs.write(w, "gradients", g)
	return nil
}

// priceGrad is gradient c's kernel as a training step prices it
// (train.go: perf.EstimateConvGrad with the plan's options under the
// runtime) and its time less the plan's gap.
func priceGrad(g *hwdb.GPU, c conv) (perf.Kernel, float64, error) {
	pr, eb, known := dtypePath(g, c.dtype)
	rt, err := replayRuntime(c, known)
	if err != nil {
		return perf.Kernel{}, 0, err
	}
	o := perf.PlanOptions()
	o.Runtime = rt
	p := c.r / 2
	geom := perf.ConvGeom{N: c.batch, C: c.c, H: c.hw, W: c.hw, K: c.k, R: c.r, S: c.r, PadH: p, PadW: p, StrideH: c.stride, StrideW: c.stride}
	k, t := perf.EstimateConvGrad(g, geom, c.grad, pr, eb, eb, o)
	return k, t.TimeS - t.LaunchS, nil
}

// dtypePath is the path and element size a swept dtype runs with on g:
// fp32 on the CUDA cores, fp16 on tensor cores where g has them (as the
// analyzer resolves a half model's products); known is false for any
// other dtype.
func dtypePath(g *hwdb.GPU, dtype string) (pr hwdb.Precision, elemBytes float64, known bool) {
	switch dtype {
	case "fp32":
		return hwdb.FP32, 4, true
	case "fp16":
		if g.PeakFor(hwdb.FP16Tensor) > 0 {
			return hwdb.FP16Tensor, 2, true
		}
		return hwdb.FP16, 2, true
	}
	return "", 0, false
}

// gradKernelName is the algorithm the model chose for a gradient and the
// path it runs on.
func gradKernelName(k perf.Kernel) string {
	if k.Class == perf.ClassWinograd {
		return "winograd"
	}
	return "gemm " + string(k.Precision)
}
