package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestDryRunTable: a table in the layout scripts/measure_gpu.py
// --conv-choices writes is read one convolution per group of rows, each
// priced as a one-node graph under its layout's replay runtime; a bad
// layout or a malformed row is refused by name. A format check, not a
// measurement: the first convolution's rows are the CPU dry run's (its
// "kernels" PyTorch's operators, its time CPU wall time), the second a
// hand-written line of a GPU run's shape (a kernel name in cuDNN's style,
// an arbitrary time).
func TestDryRunTable(t *testing.T) {
	write := tableWriter(t, convHeader+"\n")
	ok := write("ok.csv", "fp32,nchw,1,8,16,8,3,1,0.10721,aten::conv2d,,,,,153.00,\n"+
		"fp32,nchw,1,8,16,8,3,1,0.10721,aten::convolution,,,,,144.00,\n"+
		"fp16,nhwc,32,64,56,64,3,1,0.09000,\"void sm80_xmma_fprop_implicit_gemm<int>(int)\",132x1x1,128x1x1,168,81920,88.00,12.5\n")
	s := tableOutput(t, "H100", ok)
	t.Log("\n" + s)
	for _, want := range []string{"aten::conv2d, aten::convolution", "sm80_xmma_fprop_implicit_gemm (132x1x1)", "12.5  sm80", "2 convolutions on H100-SXM5-80GB",
		"fp32 nchw batch 1 (1 convolutions): median |error| ", "fp16 nhwc batch ≥ 2 (1 convolutions): median |error| "} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Count(s, "\n") != 6 {
		t.Errorf("want a header, two convolutions, their two groups and a summary:\n%s", s)
	}
	bad := write("bad.csv", "fp32,nhcw,1,8,16,8,3,1,0.1,aten::conv2d,,,,,1,\n")
	if err := run(io.Discard, "H100", []string{bad}); err == nil || !strings.Contains(err.Error(), "bad.csv") || !strings.Contains(err.Error(), "nhcw") {
		t.Errorf("bad layout: %v", err)
	}
	size := write("size.csv", "fp32,nchw,1,8,x,8,3,1,0.1,aten::conv2d,,,,,1,\n")
	if err := run(io.Discard, "H100", []string{size}); err == nil || !strings.Contains(err.Error(), "size.csv") {
		t.Errorf("bad size: %v", err)
	}
	ws := write("ws.csv", "fp32,nchw,1,8,16,8,3,1,0.1,aten::conv2d,,,,,1,lots\n")
	if err := run(io.Discard, "H100", []string{ws}); err == nil || !strings.Contains(err.Error(), "ws.csv") || !strings.Contains(err.Error(), "lots") {
		t.Errorf("bad workspace: %v", err)
	}
}

// TestH200ConvChoices: our H200's --conv-choices table
// (testdata/measured/h200_sxm_conv_choices.csv: nn.Conv2d with a bias,
// as eager PyTorch runs it) is priced through the eager plan, whose
// convolution leaves its bias to a broadcast kernel of its own, as the
// sweep's rows time it. Priced inside the convolution, the table read a
// median 25.4% off, and its channels_last fp16 64→256 1×1 at 56×56,
// batch 32 (96.1 µs: 20.8 in cuDNN, 72.4 in the strided bias add over
// NHWC) 72% short.
func TestH200ConvChoices(t *testing.T) {
	s := tableOutput(t, "H200", filepath.Join("..", "..", "testdata", "measured", "h200_sxm_conv_choices.csv"))
	if med := summaryMedian(t, s, "90 convolutions on H200-SXM-141GB"); med > 8 {
		t.Errorf("the H200's convolution choices priced a median %.1f%% off, want ≤ 8%%", med)
	}
	// Each row with the bound it must keep, and why: the fp16 channels_last
	// 1×1 with its bias kernel counted; two fp32 NCHW layers of cuDNN's
	// sm80 256×64 tile (perf cudnnSIMTTile), one in two rounds of its two
	// CTAs per SM (priced −29% by the model's own 128×128 plan) and one of
	// 64 output channels (+26% as 128×64 tiles); an fp16 channels_last 3×3
	// layer as Hopper's TMA-fed implicit GEMM (+8.9% at EffConv: perf
	// tmaIm2col); an fp16 NCHW 3×3 layer between cuDNN's transposes at
	// their tiles' rate (−14.8% as streams: perf transposeElementCycles);
	// an fp16 NCHW 1×1 layer, a GEMM with no transposes (+76.7% with
	// them: cost pointwiseNCHWGEMM).
	// The group lines: fp16 at batch 32-128 in both layouts (14.8% NCHW
	// and 16.9% channels_last before the transposes' tile rate, the
	// NCHW 1×1 GEMMs and Hopper's TMA-fed convolutions); batch 1, whose
	// calls are mostly the convolution's fill, in all three (33.9%,
	// 59.2% and 31.6% with the cold fill; 7.5%, 19.0% and 18.9% with
	// the warm share a repeated call pays: perf ConvFillShare).
	for _, grp := range []struct {
		line   string
		within float64
	}{{"fp16 nchw batch ≥ 2 (20 convolutions)", 6}, {"fp16 nhwc batch ≥ 2 (20 convolutions)", 14},
		{"fp32 nchw batch 1 (10 convolutions)", 12}, {"fp16 nhwc batch 1 (10 convolutions)", 25}, {"fp16 nchw batch 1 (10 convolutions)", 25}} {
		if med := summaryMedian(t, s, grp.line); med > grp.within {
			t.Errorf("%s: median |error| %.1f%%, want ≤ %g%%", grp.line, med, grp.within)
		}
	}
	for _, c := range []struct {
		row, what string
		within    float64
	}{
		{"fp16 nhwc 32 64 56 256 1 1", "fp16 channels_last 64→256 1×1 at 56×56, batch 32, its bias kernel counted", 25},
		{"fp32 nchw 32 512 28 256 1 1", "fp32 NCHW 512→256 1×1 at 28×28, batch 32, in two rounds of cuDNN's 256×64 tile", 10},
		{"fp32 nchw 32 64 224 64 3 1", "fp32 NCHW 64→64 3×3 at 224×224, batch 32, as cuDNN's 256×64 tile", 10},
		{"fp16 nhwc 32 256 56 256 3 1", "fp16 channels_last 256→256 3×3 at 56×56, batch 32, as a TMA-fed implicit GEMM", 5},
		{"fp16 nchw 32 64 224 64 3 1", "fp16 NCHW 64→64 3×3 at 224×224, batch 32, between cuDNN's transposes", 5},
		{"fp16 nchw 32 256 56 128 1 1", "fp16 NCHW 256→128 1×1 at 56×56, batch 32, a GEMM without transposes", 25},
	} {
		if e, ok := rowError(t, s, c.row); !ok {
			t.Errorf("no %q row", c.row)
		} else if math.Abs(e) > c.within {
			t.Errorf("%s: priced %+.1f%% off, want within %g%%", c.what, e, c.within)
		}
	}
}

// rowError is the error column of the table row of s whose first eight
// fields are row.
func rowError(t *testing.T, s, row string) (float64, bool) {
	t.Helper()
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 11 || strings.Join(f[:8], " ") != row {
			continue
		}
		var e float64
		if _, err := fmt.Sscanf(f[10], "%g%%", &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return e, true
	}
	return 0, false
}
