package report

import "testing"

// TestEpochCountsOptimizerSteps: an epoch is ceil(N / (batch × K × R))
// optimizer steps for K micro-batches per step (gradient accumulation)
// and R data-parallel replicas: the step the report prices already runs
// its K micro-batches, so counting ceil(N / batch) of them over-counted
// the epoch K×R-fold (ResNet-50, batch 32 × 4, ImageNet: 11,959 s for
// 2,993 s).
func TestEpochCountsOptimizerSteps(t *testing.T) {
	for _, c := range []struct {
		k, r           int
		batch, n       int64
		perStep, steps int64
	}{
		{1, 1, 32, 1281167, 32, 40037},
		{0, 0, 32, 1281167, 32, 40037}, // a Train without the fields: none
		{4, 1, 32, 1281167, 128, 10010},
		{4, 1, 32, 128, 128, 1},
		{4, 1, 32, 129, 128, 2},
		{1, 8, 64, 1281167, 512, 2503},
		{2, 8, 64, 1281167, 1024, 1252},
	} {
		tr := &Train{GradAccum: c.k, DataParallel: c.r, StepTimeS: 0.3, StepEnergyJ: 100}
		if err := tr.SetEpoch(c.n, c.batch); err != nil {
			t.Fatal(err)
		}
		e := tr.Epoch
		if e.SamplesPerStep != c.perStep || e.Steps != c.steps || e.TimeS != float64(c.steps)*0.3 || e.EnergyJ != float64(c.steps)*100 {
			t.Errorf("K %d, R %d, batch %d, %d samples: %d per step, %d steps, %g s, %g J; want %d per step, %d steps", c.k, c.r, c.batch, c.n, e.SamplesPerStep, e.Steps, e.TimeS, e.EnergyJ, c.perStep, c.steps)
		}
	}
	tr := &Train{GradAccum: 1 << 30, DataParallel: 1 << 30}
	if err := tr.SetEpoch(100, 1<<20); err == nil {
		t.Error("samples per step overflowing int64: no error")
	}
}
