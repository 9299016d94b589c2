package calibrate

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
)

// TestFitRNNRecoversLatencies starts the RNN stage from poor values and
// checks it lands on the committed ones (the stage is what wrote them),
// with every other parameter untouched.
func TestFitRNNRecoversLatencies(t *testing.T) {
	var train []BenchCase
	for _, c := range deepBench(t) {
		if !c.Holdout {
			train = append(train, c)
		}
	}
	start := perf.DefaultParams()
	start.RNNStepLaunches, start.RNNGemvStepLaunches, start.RNNTiledBatchHalf = 2, 50, 0
	got, err := FitRNN(train, start)
	if err != nil {
		t.Fatal(err)
	}
	want := perf.DefaultParams()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"rnn_step_launches", got.RNNStepLaunches, want.RNNStepLaunches},
		{"rnn_gemv_step_launches", got.RNNGemvStepLaunches, want.RNNGemvStepLaunches},
		{"rnn_tiled_batch_half", got.RNNTiledBatchHalf, want.RNNTiledBatchHalf},
	} {
		if !near(c.got, c.want, 0.01) {
			t.Errorf("%s %.4g, committed %.4g", c.name, c.got, c.want)
		}
	}
	got.RNNStepLaunches, got.RNNGemvStepLaunches, got.RNNTiledBatchHalf = start.RNNStepLaunches, start.RNNGemvStepLaunches, start.RNNTiledBatchHalf
	if got != start {
		t.Errorf("the RNN fit moved another parameter: %+v", got)
	}
	if _, err := FitRNN(nil, start); err == nil {
		t.Error("no error without RNN rows")
	}
}

// TestHeldOutRNNError holds the forward RNN rows to what the two step
// latencies give (CALIBRATION.md, "RNN steps: two latencies": pooled
// 16.8%, the GP102 cards 9.6-11.1%; one shared latency gave 23.0% and
// 12.9-22.0%), a couple of points above.
func TestHeldOutRNNError(t *testing.T) {
	bound := map[string]float64{pooledGPU: 0.19, "GTX-1080-Ti": 0.13, "Titan-X-Pascal": 0.12, "Titan-Xp": 0.13}
	for _, s := range ErrorTable(deepBench(t), perf.DefaultParams(), Holdout) {
		if b, ok := bound[s.GPU]; ok && s.Kind == "rnn" && s.Median > b {
			t.Errorf("%s: held-out RNN median error %.1f%% > %.0f%% (n=%d)", s.GPU, 100*s.Median, 100*b, s.N)
		}
	}
}
