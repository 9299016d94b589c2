package main

import (
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
	var out strings.Builder
	if err := run(&out, "H100", []string{ok}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	t.Log("\n" + s)
	for _, want := range []string{"aten::conv2d, aten::convolution", "sm80_xmma_fprop_implicit_gemm (132x1x1)", "12.5  sm80", "2 convolutions on H100-SXM5-80GB"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Count(s, "\n") != 4 {
		t.Errorf("want a header, two convolutions and a summary:\n%s", s)
	}
	bad := write("bad.csv", "fp32,nhcw,1,8,16,8,3,1,0.1,aten::conv2d,,,,,1,\n")
	if err := run(&out, "H100", []string{bad}); err == nil || !strings.Contains(err.Error(), "bad.csv") || !strings.Contains(err.Error(), "nhcw") {
		t.Errorf("bad layout: %v", err)
	}
	size := write("size.csv", "fp32,nchw,1,8,x,8,3,1,0.1,aten::conv2d,,,,,1,\n")
	if err := run(&out, "H100", []string{size}); err == nil || !strings.Contains(err.Error(), "size.csv") {
		t.Errorf("bad size: %v", err)
	}
	ws := write("ws.csv", "fp32,nchw,1,8,16,8,3,1,0.1,aten::conv2d,,,,,1,lots\n")
	if err := run(&out, "H100", []string{ws}); err == nil || !strings.Contains(err.Error(), "ws.csv") || !strings.Contains(err.Error(), "lots") {
		t.Errorf("bad workspace: %v", err)
	}
}
