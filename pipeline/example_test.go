package pipeline_test

import (
	"fmt"
	"log"

	"github.com/onnxcost/onnxcost/pipeline"
)

// Price ResNet-50 (torchvision, graph only: its weights are not needed)
// at batch 8 on an A100: the fused plan at the model's own fp32.
func ExampleRun() {
	r, err := pipeline.Run("../testdata/models/resnet50.onnx", pipeline.Config{GPU: "A100", Batch: 8})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, batch %d: %.1f GFLOPs in %d kernels\n", r.GPU, r.Bindings["batch"], r.Totals.FLOPs/1e9, int(r.Totals.Launches))
	fmt.Printf("%.2f ms, %.0f MB at peak\n", r.Totals.TimeS*1e3, r.Totals.PeakMemoryBytes/1e6)
	// Output:
	// A100-SXM4-80GB, batch 8: 65.7 GFLOPs in 55 kernels
	// 5.06 ms, 165 MB at peak
}

// Count BERT-base with no GPU: the exact arithmetic and traffic, nothing
// priced (the report's CountOnly says so; its times are zero).
func ExampleCount() {
	r, err := pipeline.Count("../testdata/models/bert_base.onnx", pipeline.Config{Batch: 1})
	if err != nil {
		log.Fatal(err)
	}
	t := r.Totals
	fmt.Printf("count only: %v\n", r.CountOnly)
	fmt.Printf("%.2f GFLOPs, %.1f M parameters, %.0f MB read\n", t.FLOPs/1e9, t.Params/1e6, t.BytesRead/1e6)
	// Output:
	// count only: true
	// 22.42 GFLOPs, 109.5 M parameters, 411 MB read
}

// Bind a symbolic dim by name. The zoo's GPT-2 small built with seq=-1
// has a symbolic "seq" input dim; an unbound one would be taken as 1,
// with a warning in the report.
func Example_bindDims() {
	for _, seq := range []int64{128, 1024} {
		r, err := pipeline.Run("zoo:gpt2-small?seq=-1", pipeline.Config{
			GPU:   "H100",
			DType: "fp16",
			Dims:  map[string]int64{"seq": seq},
		})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("seq %4d: %6.1f GFLOPs, %.3f ms\n", r.Bindings["seq"], r.Totals.FLOPs/1e9, r.Totals.TimeS*1e3)
	}
	// Output:
	// seq  128:   32.3 GFLOPs, 0.607 ms
	// seq 1024:  293.1 GFLOPs, 1.025 ms
}
