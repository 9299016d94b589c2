package main

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
)

// TestRNNTable: a table in the layout scripts/measure_gpu.py --rnn
// writes is read one call per run of rows (one row per kernel name),
// each call priced, its launches summed over its kernels, and a layer
// measured at several step counts parted into per call and per step by
// the least-squares line (here exactly 100 us a call and 10 us a step);
// a bad cell, dtype, size or launch count is refused naming the file.
func TestRNNTable(t *testing.T) {
	write := tableWriter(t, rnnHeader+"\n")
	ok := write("ok.csv", "lstm,fp32,1024,1,1,0.11000,\"void elemWise<float>(int)\",1,4.00\n"+
		"lstm,fp32,1024,1,1,0.11000,\"void gemv2T_kernel<float>(int)\",2,9.00\n"+
		"lstm,fp32,1024,1,25,0.35000,\"void gemv2T_kernel<float>(int)\",26,230.00\n"+
		"lstm,fp32,1024,1,25,0.35000,\"void elemWise<float>(int)\",25,60.00\n"+
		"lstm,fp32,1024,1,200,2.10000,\"void gemv2T_kernel<float>(int)\",201,1800.00\n"+
		"gru,fp16,256,64,25,0.30000,\"void RNN_blockPersist_fp_GRU<__half>(int)\",1,280.00\n")
	s := tableOutput(t, "H100", ok)
	t.Log("\n" + s)
	for _, want := range []string{
		"lstm fp32 hidden 1024 batch 1: per call 100.0 us (priced ",
		"per step 10.00 us (priced ",
		"gemv2T_kernel (26, 230.0), elemWise (25, 60.0)",
		"lstm fp32 (3 calls): median |error| ", "gru fp16 (1 calls): median |error| ",
		"4 calls on H100-SXM5-80GB: median |error| ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if !strings.Contains(s, "      51  ") {
		t.Errorf("the 25-step call launched 26 + 25 kernels: want 51 in its launches column:\n%s", s)
	}
	if strings.Count(s, "\n") != 9 {
		t.Errorf("want a header, four calls, one per-call/per-step line (the GRU has one step count), two groups and a summary:\n%s", s)
	}
	refusedNamingFile(t, write, map[string]string{
		"cell.csv":   "rnn,fp32,16,2,1,0.1,aten::lstm,1,5\n",
		"dtype.csv":  "lstm,bf16,16,2,1,0.1,aten::lstm,1,5\n",
		"size.csv":   "lstm,fp32,16,0,1,0.1,aten::lstm,1,5\n",
		"launch.csv": "lstm,fp32,16,2,1,0.1,aten::lstm,0,5\n",
		"time.csv":   "lstm,fp32,16,2,1,x,aten::lstm,1,5\n",
	})
}

// TestRNNPricedAsLayer: a call is priced as the recurrent layer it is, a
// cell of hidden units with an input projection of the same width, timed
// alone; a longer sequence never costs less, and fp16 on a GPU with
// tensor cores runs its GEMMs there.
func TestRNNPricedAsLayer(t *testing.T) {
	g, err := hwdb.Lookup("H100")
	if err != nil {
		t.Fatal(err)
	}
	c := rnnCall{cell: "gru", dtype: "fp16", hidden: 1024, batch: 8, steps: 25}
	got, err := priceRNN(g, c)
	if err != nil {
		t.Fatal(err)
	}
	k := perf.RNNKernel("GRU", 1024, 1024, 8, 25, 1, hwdb.FP16Tensor, 2)
	if want := perf.EstimateKernel(g, k, perf.Options{Params: perf.DefaultParams(), Setting: perf.Isolated}).TimeS; got != want {
		t.Errorf("priced %g s, want the layer's isolated time %g", got, want)
	}
	longer := c
	longer.steps = 200
	if p, _ := priceRNN(g, longer); !(p > got) {
		t.Errorf("200 steps priced %g s, 25 steps %g: a longer sequence must cost more", p, got)
	}
}
