package pipeline

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/train"
)

// The checks of the cost flags, shared by the command line (which exits 2
// on them) and the browser build (web/session), so that both refuse the
// same settings with the same words.

// CheckValue requires a flag's value to be one of allowed ("" among them
// means the flag may be left unset).
func CheckValue(flag, got string, allowed ...string) error {
	var named []string
	for _, a := range allowed {
		if got == a {
			return nil
		}
		if a != "" {
			named = append(named, a)
		}
	}
	return fmt.Errorf("%s %q: want one of %s", flag, got, strings.Join(named, "|"))
}

// CheckPowerControl refuses a power cap (--power-cap) or SM clock lock
// (--sm-clock) the GPU cannot be set to.
func CheckPowerControl(g *hwdb.GPU, c perf.PowerControl) error {
	if c.CapW != 0 {
		if err := CheckPowerValue(perf.PowerControl{CapW: c.CapW}); err != nil {
			return err
		}
		lo, hi := g.MinPowerW, max(g.MaxPowerW, g.TDPWatts)
		if lo > 0 && c.CapW < lo || c.CapW > hi {
			return fmt.Errorf("--power-cap %g W: outside %s's power limit range %g..%g W", c.CapW, g.Name, max(lo, 0), hi)
		}
		if idle := g.IdleWatts; idle > 0 && c.CapW <= idle {
			return fmt.Errorf("--power-cap %g W: at or below %s's idle power (%g W)", c.CapW, g.Name, idle)
		}
	}
	if c.SMClockMHz != 0 {
		lo, hi := perf.MinClockMHz(g), g.BoostClockMHz
		if !(c.SMClockMHz >= lo) || c.SMClockMHz > hi {
			return fmt.Errorf("--sm-clock %g MHz: outside %s's SM clock range %.0f..%.0f MHz", c.SMClockMHz, g.Name, lo, hi)
		}
	}
	return nil
}

// CheckPowerValue refuses a cap or clock no GPU can be set to: one that
// is set (not zero) but not a positive, finite number. CheckPowerControl
// checks the GPU's own ranges.
func CheckPowerValue(c perf.PowerControl) error {
	if c.CapW != 0 && (!(c.CapW > 0) || math.IsInf(c.CapW, 0)) {
		return fmt.Errorf("--power-cap %g: want a positive number of watts", c.CapW)
	}
	if c.SMClockMHz != 0 && (!(c.SMClockMHz > 0) || math.IsInf(c.SMClockMHz, 0)) {
		return fmt.Errorf("--sm-clock %g: want a positive number of MHz", c.SMClockMHz)
	}
	return nil
}

// The values of --optimizer and --checkpoint left out.
const (
	DefaultOptimizer  = "adam"
	DefaultCheckpoint = "none"
)

// CheckWarm refuses --warm on a training step, whose traffic between
// steps the training model prices itself.
func CheckWarm(warm, training bool) error {
	if warm && training {
		return errors.New("--warm prices an inference call repeated back to back; a training step's traffic is priced as its own (drop --warm or --train)")
	}
	return nil
}

// CheckTrain normalizes and checks --optimizer and --checkpoint (both
// apply only with --train, but are checked whenever given): an empty
// optimizer and checkpoint are the flags' defaults.
func CheckTrain(optimizer, checkpoint *string) error {
	*optimizer = strings.ToLower(strings.TrimSpace(*optimizer))
	if *optimizer == "" {
		*optimizer = DefaultOptimizer
	}
	if *checkpoint == "" {
		*checkpoint = DefaultCheckpoint
	}
	if err := CheckValue("--checkpoint", *checkpoint, train.CheckpointModes()...); err != nil {
		return err
	}
	return CheckValue("--optimizer", *optimizer, train.Optimizers()...)
}

// MaxGPUs is the largest tensor-parallel degree --gpus accepts.
const MaxGPUs = 1024

// CheckGPUs checks a tensor-parallel degree (--gpus); 0 is one GPU.
func CheckGPUs(n int) error {
	if n < 0 || n > MaxGPUs {
		return fmt.Errorf("--gpus %d: want a whole number from 1 to %d", n, MaxGPUs)
	}
	return nil
}
