package generate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/internal/schematest"
)

// TestSchema: real results (a fitted run, every step costed, one output
// token, two and four GPUs with the cache split by heads) validate
// against the committed Schema and print as text; the schema refuses a
// result without its TTFT.
func TestSchema(t *testing.T) {
	rs := schematest.Resolve(t, Schema)
	for _, cfg := range []Config{
		{Model: "zoo:llama-tiny", Batch: 2, Prompt: 16, Output: 40, ToolVersion: "test"},
		{Model: "zoo:gpt2-small?layers=2", DType: "fp16", Prompt: 8, Output: 3},
		{Model: "zoo:llama-tiny", Prompt: 4, Output: 1},
		{Model: "zoo:llama-tiny", Prompt: 4, Output: 8, GPUs: 2, DType: "bf16"},
		{Model: "zoo:llama-tiny", Prompt: 16, Output: 8, GPUs: 4, Concurrency: []int64{1, 8}},
		{Model: "zoo:llama-tiny", Prompt: 16, Output: 8, Concurrency: []int64{1, 8}, TTFTSLOS: 1, PriceUSDPerGPUHour: 2},
		{Model: "zoo:llama-tiny", Prompt: 16, Output: 1, Concurrency: []int64{2}, TPOTSLOS: 1e-9, TTFTSLOS: 1e-9},
		{Model: "zoo:llama-7b", GPU: gpu(t, "T4"), DType: "fp16", Prompt: 4096, Output: 4096, Concurrency: []int64{64}},
	} {
		res := run(t, cfg)
		var js bytes.Buffer
		if err := WriteJSON(&js, res); err != nil {
			t.Fatal(err)
		}
		var inst map[string]any
		if err := json.Unmarshal(js.Bytes(), &inst); err != nil {
			t.Fatal(err)
		}
		if err := rs.Validate(inst); err != nil {
			t.Errorf("%s: a real result fails the schema: %v\n%s", cfg.Model, err, js.String())
		}
		var text bytes.Buffer
		if err := WriteText(&text, res); err != nil || !strings.Contains(text.String(), "time to first token") || !strings.Contains(text.String(), res.Approximation) {
			t.Errorf("%s: text %q, %v", cfg.Model, text.String(), err)
		}
		if res.ServingModel != nil {
			if !strings.Contains(text.String(), "serving at steady state") || !strings.Contains(text.String(), "not modelled: "+ServingLeavesOut) {
				t.Errorf("%s: text lacks the serving curve:\n%s", cfg.Model, text.String())
			}
			if _, ok := inst["serving"]; !ok {
				t.Errorf("%s: no serving array:\n%s", cfg.Model, js.String())
			}
			sm := inst["serving_model"]
			delete(inst, "serving_model")
			if err := rs.Validate(inst); err == nil {
				t.Errorf("%s: schema accepts a serving curve without its serving_model", cfg.Model)
			}
			inst["serving_model"] = sm
		}
		delete(inst, "ttft_s")
		if err := rs.Validate(inst); err == nil {
			t.Errorf("%s: schema accepts a result without ttft_s", cfg.Model)
		}
	}
}
