package calib

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/detmath"
)

// HostFactor is how far the measuring machine's host issued one eager
// runtime's work from the runtime profile's host figures (dispatch_us,
// module_us, call_us, autograd_us, optim_param_us, cudnn_us), fitted on
// the rows the host bounds: the profile's figures were measured on one
// machine (our H100's), and a host 1.3× faster or slower moves every
// host-bound call by as much. Our H200's machine ran the same eager calls
// at a median 0.86 of the H100-fitted host time (51 host-bound rows of
// testdata/measured/h200_sxm_pytorch.csv). A graph replay's runtime has
// no dispatch but its call (call_us, one launch and synchronize) floors a
// call too: kernels timed inside a graph of many calls, or from a
// profiler's durations, run under it, and their factor says so (the
// H100's single-kernel rows of internal/kernelrows, ours and Vidur's, 46
// of them under the floor, fit graph-nhwc's call at 0.49).
//
// A training step's host is mostly other code (the autograd engine's
// per-edge work, the optimizer's loop) than an inference call's module
// dispatch, and one machine can be faster at one than the other: our
// H200's machine issued its host-bound AMP training steps at a median
// 0.75 of the profile's host time where its eager inference calls took
// 0.88, our H100's at 1.01 against 1.04. So training rows fit their own
// factor (Training), pulled toward the same runtime's inference factor,
// which is the best guess for a machine's training host until its own
// training rows say otherwise.
type HostFactor struct {
	// Runtime is the runtime profile's name as the rows priced it.
	Runtime string
	// Training marks a factor fitted on training steps (applied to them).
	Training bool
	N        int
	Factor   float64
}

// hostPull is the ridge weight pulling a host factor's log toward its
// prior (0 for an inference factor, the inference factor's log for a
// training one), in rows: ESTIMATE, the class cells' pull
// (penalties.class) times four, since one machine's eager calls scatter
// by ±40% around their median (host-bound rows of our H100 and H200
// tables: 0.5-1.8).
const hostPull = 4

// minHostRows is the fewest host-bound rows a host factor is fitted
// from (ESTIMATE: fewer is one timing's noise).
const minHostRows = 3

// hostBoundMargin is how far the host must exceed the device side for a
// row to teach the host factor: near the crossover the measured time
// mixes both, and the factor would absorb the device's error.
const hostBoundMargin = 1.2

// fitHosts fits one factor per runtime and kind of call (inference,
// training step) from the rows (those with train set, or all when train
// is nil) the host bounds under theta: the factor whose predictions miss
// those rows least (hostLogFactor), shrunk by n/(n+hostPull) toward 0 for
// inference and toward the runtime's inference factor (hostFactorFor)
// for training.
func fitHosts(frs []fitRow, theta []float64, train []bool) []HostFactor {
	type key struct {
		rt       string
		training bool
	}
	bound := map[key][]boundRow{}
	for i := range frs {
		fr := &frs[i]
		if (train != nil && !train[i]) || !(fr.host > 0) || !runtimeName.MatchString(fr.runtime) {
			continue
		}
		dev := fr.device(theta, true)
		if fr.host < hostBoundMargin*dev {
			continue
		}
		k := key{fr.runtime, fr.training}
		bound[k] = append(bound[k], boundRow{meas: fr.meas, tail: fr.tail, host: fr.host, dev: dev})
	}
	var out []HostFactor
	// Inference first: a training factor's prior is one of them.
	for _, training := range []bool{false, true} {
		var fitted []HostFactor
		for k, rows := range bound {
			if k.training != training || len(rows) < minHostRows {
				continue
			}
			prior := 0.0
			if training {
				prior = detmath.Log(hostFactorFor(out, k.rt, false))
			}
			n := float64(len(rows))
			lf := prior + (hostLogFactor(rows, prior)-prior)*n/(n+hostPull)
			lf = max(-detmath.Log(maxFactor), min(detmath.Log(maxFactor), lf))
			fitted = append(fitted, HostFactor{Runtime: k.rt, Training: training, N: len(rows), Factor: round4(detmath.Exp(lf))})
		}
		out = append(out, fitted...)
	}
	slices.SortFunc(out, func(a, b HostFactor) int {
		if c := strings.Compare(a.Runtime, b.Runtime); c != 0 {
			return c
		}
		return cmpBool(a.Training, b.Training)
	})
	return out
}

// boundRow is a host-bound row as the host factor sees it: measured time,
// the fixed tail after both sides, the host's time and the device side's
// under the fitted kernels.
type boundRow struct{ meas, tail, host, dev float64 }

// hostLogFactorStep is the grid hostLogFactor searches, in log factor:
// 0.1%, finer than any timing's noise.
const hostLogFactorStep = 1e-3

// hostLogFactor is the log factor f on the rows' host time that
// minimises Σ |log(meas / (tail + max(e^f·host, dev)))|, the nearest to
// prior among equal minima, searched on a grid over ±log maxFactor.
// Scaling the host moves a row's prediction only while the host still
// bounds it: a kernel timed inside a CUDA graph of repeats, or from a
// profiler's durations, measures below the runtime's per-call floor
// (call_us), and once the factor takes the floor below the device side
// the row is the device's. The median of measured over host time, the
// rule before this one, counted such a row at its whole ratio, and rows
// the host barely bounds at theirs: our H100's 1M-element add, timed at
// 2.92 µs in a graph of 20 (device side 2.66 µs, one call's floor 10
// µs), stayed +97% calibrated among kernels the floor did not bind.
func hostLogFactor(rows []boundRow, prior float64) float64 {
	miss := func(lf float64) float64 {
		f := detmath.Exp(lf)
		var sum float64
		for _, r := range rows {
			sum += math.Abs(detmath.Log(r.meas / (r.tail + max(f*r.host, r.dev))))
		}
		return sum
	}
	lim := detmath.Log(maxFactor)
	n := int(math.Round(lim / hostLogFactorStep))
	best, bestLF := math.Inf(1), prior
	for i := -n; i <= n; i++ {
		lf := float64(i) * hostLogFactorStep
		m := miss(lf)
		// Ties (a flat stretch where every row is the device's) go to the
		// factor nearest the prior: the data say nothing beyond it.
		if m < best-1e-12 || (math.Abs(m-best) <= 1e-12 && math.Abs(lf-prior) < math.Abs(bestLF-prior)) {
			best, bestLF = m, lf
		}
	}
	return bestLF
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// setHosts sets each row's host factor from hosts as a calibration
// applies them (hostFactorFor; 1 where none).
func setHosts(frs []fitRow, hosts []HostFactor) {
	for i := range frs {
		frs[i].hostFactor = hostFactorFor(hosts, frs[i].runtime, frs[i].training)
	}
}

// hostFactorFor is the factor hosts give runtime rt's calls (training
// steps when training): the factor fitted on rt's calls of that kind,
// else on a layout variant's (pytorch for pytorch-nhwc: the same host
// code); a training step without either takes the inference factor by
// the same rule (the machine's host, on other code); else 1.
func hostFactorFor(hosts []HostFactor, rt string, training bool) float64 {
	f, _ := lookupHost(hosts, rt, training)
	return f
}

// lookupHost is hostFactorFor's factor and whether hosts hold one for rt
// at all (found false: 1, the profile's own figures).
func lookupHost(hosts []HostFactor, rt string, training bool) (factor float64, found bool) {
	base := strings.TrimSuffix(rt, "-nhwc")
	kinds := []bool{training}
	if training {
		kinds = append(kinds, false)
	}
	for _, kind := range kinds {
		f, found := 1.0, false
		for _, h := range hosts {
			if h.Training != kind {
				continue
			}
			if h.Runtime == rt {
				return h.Factor, true
			}
			if !found && strings.TrimSuffix(h.Runtime, "-nhwc") == base {
				f, found = h.Factor, true // a layout variant's, unless rt has its own
			}
		}
		if found {
			return f, true
		}
	}
	return 1, false
}

// HostFactor is the factor on runtime rt's host figures where a applies
// (training: for a training step): on the GPU the calibration was fitted
// on (the host is that machine's; a sibling GPU, or any other, is most
// likely in another machine), as hostFactorFor finds it; else 1.
func (a *Applied) HostFactor(rt string, training bool) float64 {
	if !a.Fitted() || rt == "" {
		return 1
	}
	return hostFactorFor(a.cal.Hosts, rt, training)
}

// MeasuredHost reports whether a carries a host factor fitted on this
// machine for runtime rt (for a training step when training), directly or
// through its layout variant or, for training, its inference factor: the
// host's figures are then this machine's, not the profile's.
func (a *Applied) MeasuredHost(rt string, training bool) bool {
	if !a.Fitted() || rt == "" {
		return false
	}
	_, found := lookupHost(a.cal.Hosts, rt, training)
	return found
}

// ScaleHost returns a copy of runtime r with its host figures scaled by
// a's host factor for it (for a training step when training), or r
// itself when the factor is 1.
func (a *Applied) ScaleHost(r *hwdb.Runtime, training bool) *hwdb.Runtime {
	if r == nil {
		return r
	}
	f := a.HostFactor(r.Name, training)
	if f == 1 {
		return r
	}
	s := *r
	s.DispatchS *= f
	s.ModuleS *= f
	s.CallS *= f
	s.AutogradS *= f
	s.OptimParamS *= f
	s.CudnnS *= f
	return &s
}

func hostsFromDoc(fh []fileHost) ([]HostFactor, error) {
	out := make([]HostFactor, 0, len(fh))
	for i, h := range fh {
		at := fmt.Sprintf("hosts[%d]", i)
		if !runtimeName.MatchString(h.Runtime) {
			return nil, fmt.Errorf("%s: runtime %q is not a runtime profile's name (letters, digits, '.', '_', '-')", at, h.Runtime)
		}
		if err := checkFactor(at+".factor", h.Factor); err != nil {
			return nil, err
		}
		if h.N < 0 {
			return nil, fmt.Errorf("%s: n %d is negative", at, h.N)
		}
		if slices.ContainsFunc(out, func(o HostFactor) bool { return o.Runtime == h.Runtime && o.Training == h.Training }) {
			return nil, fmt.Errorf("%s: runtime %q twice%s", at, h.Runtime, trainingText(h.Training))
		}
		out = append(out, HostFactor(h))
	}
	return out, nil
}

// runtimeName is what a host factor's runtime may be: a profile name as
// hwdb/runtimes.yaml and --runtime-file write them, at most 64 characters
// (a name Write would have to alter could not read back as itself).
var runtimeName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

type fileHost struct {
	Runtime  string  `yaml:"runtime"`
	Training bool    `yaml:"training"`
	N        int     `yaml:"n"`
	Factor   float64 `yaml:"factor"`
}

// trainingText marks a training factor in messages.
func trainingText(training bool) string {
	if training {
		return " (training)"
	}
	return ""
}

func writeHosts(p func(string, ...any), hosts []HostFactor) {
	// Absent without host-bound rows: such a file reads as before hosts were written.
	if !beginSection(p, "hosts", len(hosts), "",
		"per runtime, the factor on its host figures (dispatch, module,",
		"call, autograd, optimizer, cuDNN call) fitted on the rows the host",
		"bounded (n), training steps apart; applies on the GPU fitted, whose",
		"machine's host it is") {
		return
	}
	for _, h := range hosts {
		training := ""
		if h.Training {
			training = ", training: true"
		}
		p("  - {runtime: %s%s, n: %d, factor: %s}\n", quote(h.Runtime), training, h.N, num(h.Factor))
	}
}
