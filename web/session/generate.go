package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/onnxcost/onnxcost/generate"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/sweep"
)

// Generation is the generate call's answer: the result as `onnxcost
// generate --format json` writes it, and its text report.
type Generation struct {
	Result *generate.Result `json:"result"`
	Text   string           `json:"text"`
}

// Generate is `onnxcost generate MODEL --prompt P --output O` on the
// model's bytes under the settings: st.Prompt and st.Output (512 and 128
// when unset, the page's defaults), st.Concurrency with its SLOs and
// price, and the batch,
// dtype, plan, runtime, power, GPU count and calibration as the flags of
// the same names. A training step is not a generation: with st.Train it
// refuses; a model without a cache gets generate's own message.
func (s *Session) Generate(st Settings) (*Generation, error) {
	if st.Train {
		return nil, errors.New("generate prices inference: a generation is not a training step (untick train)")
	}
	named, plan := pipeline.RequestedRuntime(st.Runtime, false, st.DType) != "", st.Plan
	gpu, rt, err := s.check(&st)
	if err != nil {
		return nil, err
	}
	cfg := generate.Config{
		Model: s.name, Data: s.data, GPU: gpu, DType: st.DType,
		// As the CLI's flags: a runtime (or autocast's) and a plan only
		// where named, so that the model's own are settled, and said, as
		// generate does.
		Plan: plan, Passes: passes.Options{DumpTo: io.Discard}, Calibration: st.cal,
		GPUs: st.GPUs, Power: st.power(), Batch: st.Batch, Prompt: st.Prompt, Output: st.Output,
		Dims: st.Dims, ToolVersion: s.version,
		TTFTSLOS: st.TTFTSLO, TPOTSLOS: st.TPOTSLO, PriceUSDPerGPUHour: st.Price,
	}
	if named {
		cfg.Runtime = rt
	}
	if c := strings.TrimSpace(st.Concurrency); c != "" {
		if cfg.Concurrency, err = sweep.ParseList(c); err != nil {
			return nil, fmt.Errorf("--concurrency: %w", err)
		}
	}
	if cfg.Prompt == 0 {
		cfg.Prompt = DefaultPrompt
	}
	if cfg.Output == 0 {
		cfg.Output = DefaultOutput
	}
	res, err := generate.Run(cfg)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := generate.WriteText(&b, res); err != nil {
		return nil, err
	}
	return &Generation{Result: res, Text: b.String()}, nil
}

// DefaultPrompt and DefaultOutput are the page's prompt and output
// lengths when it sets none (generate's flags have no default).
const (
	DefaultPrompt = 512
	DefaultOutput = 128
)
