package report

import (
	"fmt"
	"math"
)

// Epoch is one pass over a training set of Samples samples: Steps =
// ceil(Samples / SamplesPerStep) optimizer steps, each costing the
// report's step (Train.StepTimeS, Train.StepEnergyJ). SamplesPerStep is
// what one optimizer step consumes: the micro-batch × Train.GradAccum ×
// Train.DataParallel, since the step the report prices already runs all K
// micro-batches (and every replica runs its own). The last, partial step
// is priced as a full one: a framework pads it or runs it at the same
// kernel shapes' cost, and a model priced at one batch size has no
// cheaper step to offer. Time and energy are one GPU's, as the step's are.
type Epoch struct {
	Samples        int64   `json:"samples"`
	SamplesPerStep int64   `json:"samples_per_step"`
	Steps          int64   `json:"steps"`
	TimeS          float64 `json:"time_s"`
	EnergyJ        float64 `json:"energy_j"`
	// EDPJS is EnergyJ·TimeS over the epoch (Steps² times the step's).
	EDPJS float64 `json:"edp_js"`
}

// SetEpoch adds the epoch of samples samples to a training step t, whose
// micro-batch (the batch the graph is costed at, --batch) is batch. One
// optimizer step consumes batch × GradAccum × DataParallel samples: the
// step already counts its K micro-batches, so dividing by the micro-batch
// alone would count each step K times over.
func (t *Train) SetEpoch(samples, batch int64) error {
	if samples <= 0 || batch <= 0 {
		return fmt.Errorf("epoch: want positive samples and batch per step, got %d and %d", samples, batch)
	}
	perStep := batch
	for _, k := range []int{t.GradAccum, t.DataParallel} {
		// 0 is a Train built before either existed: one.
		if k > 1 {
			if perStep > math.MaxInt64/int64(k) {
				return fmt.Errorf("epoch: %d × %d samples per step overflow", perStep, k)
			}
			perStep *= int64(k)
		}
	}
	steps := (samples-1)/perStep + 1
	e := &Epoch{Samples: samples, SamplesPerStep: perStep, Steps: steps}
	e.TimeS = float64(steps) * t.StepTimeS
	e.EnergyJ = float64(steps) * t.StepEnergyJ
	e.EDPJS = e.EnergyJ * e.TimeS
	if math.IsInf(e.EDPJS, 0) || math.IsNaN(e.EDPJS) {
		return fmt.Errorf("epoch: %d steps overflow the energy-delay product", steps)
	}
	t.Epoch = e
	return nil
}
