package report

import (
	"fmt"
	"math"
)

// Epoch is one pass over a training set of Samples samples: Steps =
// ceil(Samples / SamplesPerStep) training steps, each costing the report's
// step (Train.StepTimeS, Train.StepEnergyJ). The last, partial step is
// priced as a full one: a framework pads it or runs it at the same kernel
// shapes' cost, and a model priced at one batch size has no cheaper step
// to offer.
type Epoch struct {
	Samples        int64   `json:"samples"`
	SamplesPerStep int64   `json:"samples_per_step"`
	Steps          int64   `json:"steps"`
	TimeS          float64 `json:"time_s"`
	EnergyJ        float64 `json:"energy_j"`
	// EDPJS is EnergyJ·TimeS over the epoch (Steps² times the step's).
	EDPJS float64 `json:"edp_js"`
}

// SetEpoch adds the epoch of samples samples, perStep samples per
// training step, to a training step t.
func (t *Train) SetEpoch(samples, perStep int64) error {
	if samples <= 0 || perStep <= 0 {
		return fmt.Errorf("epoch: want positive samples and samples per step, got %d and %d", samples, perStep)
	}
	steps := (samples + perStep - 1) / perStep
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
