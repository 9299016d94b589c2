package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBERTLinears: the three fp32 Linear shapes of our H200 BERT-base
// trace, each one product with its cuBLAS kernels and grids, beside the
// model's plan (the two largek products as 32×32 tiles, as the trace
// runs them), and a malformed table is refused by name.
func TestBERTLinears(t *testing.T) {
	s := tableOutput(t, "H200", filepath.Join("testdata", "bert_fp32_h200.csv"))
	t.Log("\n" + s)
	for _, want := range []string{"sgemm_largek_lds64 (24x4x2), scal_kernel (12x4x1)", "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x32x8", "32x32 split", "3 products on H200-SXM-141GB"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Count(s, "\n") != 5 {
		t.Errorf("want a header, three products and a summary:\n%s", s)
	}
	if err := run(io.Discard, "H200", []string{filepath.Join("testdata", "missing.csv")}); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("missing file: %v", err)
	}
	if err := run(io.Discard, "", []string{"x.csv"}); err == nil {
		t.Error("no GPU: accepted")
	}
}

// tableWriter returns a function that writes head then body to a file
// named name in a fresh temporary directory, and returns its path.
func tableWriter(t *testing.T, head string) func(name, body string) string {
	t.Helper()
	dir := t.TempDir()
	return func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(head+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// refusedNamingFile checks that each table of bodies (file name → rows,
// written after the header by write) is refused on an H100 with an error
// that names its file.
func refusedNamingFile(t *testing.T, write func(name, body string) string, bodies map[string]string) {
	t.Helper()
	for name, body := range bodies {
		if err := run(io.Discard, "H100", []string{write(name, body)}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
	}
}

// tableOutput is the command's output for the tables at paths on gpu; an
// error fails the test.
func tableOutput(t *testing.T, gpu string, paths ...string) string {
	t.Helper()
	var out strings.Builder
	if err := run(&out, gpu, paths); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// summaryMedian is the median |error| of output s's summary line, the one
// that starts with summary ("390 products on H200-SXM-141GB").
func summaryMedian(t *testing.T, s, summary string) float64 {
	t.Helper()
	head := summary + ": median |error| "
	i := strings.LastIndex(s, head)
	if i < 0 {
		t.Fatalf("no %q:\n%s", head, s[max(0, len(s)-300):])
	}
	var med float64
	if _, err := fmt.Sscanf(s[i+len(head):], "%g%%", &med); err != nil {
		t.Fatal(err)
	}
	return med
}

// TestH200GEMMChoices: our H200's whole --gemm-choices sweep
// (testdata/measured/h200_sxm_gemm_choices.csv, 390 products) stays
// priced within a median 17% of the measured calls (15.6% when it was
// added, 14.5% once bare fp32 products left cuBLAS's largek plan:
// perf simtLargeK). Its misses are the next change's evidence: tiny tensor-core
// products priced +30-68% (a fill the replays do not show) and cuBLAS's
// small-N kernel (gemmSN_NN_kernel, 6.7-8.1 TFLOP/s, about 28 FLOPs per
// SM-cycle, whatever the size) for fp32 products of 8-16 rows against
// 3,072-11,008 columns, three of its four picks priced 21-41% short.
func TestH200GEMMChoices(t *testing.T) {
	s := tableOutput(t, "H200", filepath.Join("..", "..", "testdata", "measured", "h200_sxm_gemm_choices.csv"))
	if med := summaryMedian(t, s, "390 products on H200-SXM-141GB"); med > 17 {
		t.Errorf("the H200's GEMM choices priced a median %.1f%% off, want ≤ 17%%", med)
	}
	if n := strings.Count(s, "gemmSN_NN_kernel"); n != 4 {
		t.Errorf("%d gemmSN_NN_kernel products listed, want the sweep's 4", n)
	}
	// The sweep's ten fp32 products of 8 rows (cost/perf skinnyPeakShare):
	// a median 26.6% off when their skinny tiles ran at the tile-reuse
	// rate, 14.7% at the skinny kernels' share of the lanes.
	var eightRow []float64
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || f[0] != "fp32" || f[1] != "8" {
			continue
		}
		var e float64
		if _, err := fmt.Sscanf(f[7], "%g%%", &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		eightRow = append(eightRow, math.Abs(e))
	}
	slices.Sort(eightRow)
	if n := len(eightRow); n != 10 {
		t.Errorf("%d fp32 products of 8 rows, want the sweep's 10", n)
	} else if med := (eightRow[4] + eightRow[5]) / 2; med > 20 {
		t.Errorf("fp32 products of 8 rows priced a median %.1f%% off, want ≤ 20%%", med)
	}
}

// TestLinearChoices: a --linear-choices table (a bias column after k) is
// read, and a biased product is priced as the model prices a Gemm with
// its bias (the epilogue's FLOPs: on a Hopper CUDA-core product in
// cuBLAS's largek region, the epilogue kernel besides), never below the
// same product without one.
func TestLinearChoices(t *testing.T) {
	head := "dtype,batch,m,n,k,bias,ms,kernel,grid,block,regs,smem,us\n"
	write := tableWriter(t, head)
	p := write("l.csv", "fp32,1,128,768,768,1,0.0287,sgemm_largek_lds64,24x4x2,16x16x1,128,0,20.0\n"+
		"fp32,1,128,768,768,1,0.0287,scal_kernel,12x4x1,256x1x1,32,0,1.0\n"+
		"fp32,1,128,768,768,0,0.0134,cutlass::Kernel2,16x1x8,256x1x1,128,0,11.0\n")
	s := tableOutput(t, "H200", p)
	t.Log("\n" + s)
	if !strings.Contains(s, "2 products on H200-SXM-141GB") || !strings.Contains(s, "sgemm_largek_lds64 (24x4x2), scal_kernel (12x4x1)") {
		t.Fatalf("want the two products, the biased one's two kernels grouped:\n%s", s)
	}
	var priced [2]float64
	for i, line := range strings.Split(strings.TrimSpace(s), "\n")[1:3] {
		f := strings.Fields(line)
		if _, err := fmt.Sscanf(f[6], "%gus", &priced[i]); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
	}
	if priced[0] <= priced[1] {
		t.Errorf("biased product priced %.2f µs, the bare one %.2f: want the epilogue to cost", priced[0], priced[1])
	}
	// F.linear's weight is [N, K] (cuBLAS "TN"), torch.matmul's operand
	// [K, N]: the same bare product costs more as a Linear on the CUDA
	// cores. A shape neither splits (1M outputs, K under √(MN)), so that
	// torch.matmul pays no split-K reduce kernel the Linear does not.
	mm := tableWriter(t, gemmHeader+"\n")("m.csv", "fp32,1,2048,1024,1024,0.13,cutlass::Kernel2,8x6x1,256x1x1,128,0,130.0\n")
	lin := write("l2.csv", "fp32,1,2048,1024,1024,0,0.13,cutlass::Kernel2,8x6x1,256x1x1,128,0,130.0\n")
	var asMatMul, asLinear float64
	for _, c := range []struct {
		path string
		to   *float64
	}{{mm, &asMatMul}, {lin, &asLinear}} {
		line := strings.Split(strings.TrimSpace(tableOutput(t, "H200", c.path)), "\n")[1]
		if _, err := fmt.Sscanf(strings.Fields(line)[6], "%gus", c.to); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
	}
	if !(asLinear > asMatMul) {
		t.Errorf("2048×1024×1024 fp32 as F.linear %.2f µs, as torch.matmul %.2f: want the TN layout to cost", asLinear, asMatMul)
	}
}

// TestLayoutsTable: a --layouts table pairs each product's A·B and A·Bᵀ
// rows: the measured ratio is the table's, the priced one above 1 on the
// CUDA cores and 1 on the tensor cores; a layout other than nn or tn is
// an error naming the file.
func TestLayoutsTable(t *testing.T) {
	write := tableWriter(t, layoutHeader+"\n")
	p := write("lay.csv", "fp32,1,2048,4096,4096,nn,1.0,k_nn,8x1x1,256x1x1,128,0,1000\n"+
		"fp32,1,2048,4096,4096,tn,1.2,k_tn,8x1x1,256x1x1,128,0,1200\n"+
		"fp16,1,2048,4096,4096,nn,0.1,h_nn,8x1x1,256x1x1,128,0,100\n"+
		"fp16,1,2048,4096,4096,tn,0.1,h_tn,8x1x1,256x1x1,128,0,100\n")
	s := tableOutput(t, "H200", p)
	t.Log("\n" + s)
	var measured, priced float64
	for _, c := range []struct {
		dtype      string
		wantMeas   float64
		pricedOver bool
	}{{"fp32", 1.2, true}, {"fp16", 1, false}} {
		i := strings.Index(s, c.dtype+": A·Bᵀ over A·B, median of 1 pairs: measured ")
		if i < 0 {
			t.Fatalf("no %s ratio line:\n%s", c.dtype, s)
		}
		if _, err := fmt.Sscanf(s[i+len(c.dtype+": A·Bᵀ over A·B, median of 1 pairs: "):], "measured %g, priced %g", &measured, &priced); err != nil {
			t.Fatal(err)
		}
		if math.Abs(measured-c.wantMeas) > 1e-9 || (priced > 1+1e-9) != c.pricedOver || priced < 1-1e-9 {
			t.Errorf("%s: measured %.3f priced %.3f, want measured %.3f and priced above 1: %v", c.dtype, measured, priced, c.wantMeas, c.pricedOver)
		}
	}
	bad := write("bad.csv", "fp32,1,64,64,64,nt,0.01,k,1x1x1,32x1x1,32,0,10\n")
	var out strings.Builder
	if err := run(&out, "H200", []string{bad}); err == nil || !strings.Contains(err.Error(), "bad.csv") || !strings.Contains(err.Error(), `"nt"`) {
		t.Errorf("layout nt: error %v, want one naming the file and the layout", err)
	}
}
