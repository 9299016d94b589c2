package calib

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/hwdb"
)

// HostFactor is how far the measuring machine's host issued one eager
// runtime's work from the runtime profile's host figures (dispatch_us,
// module_us, call_us, autograd_us, optim_param_us, cudnn_us), fitted on
// the rows the host bounds: the profile's figures were measured on one
// machine (our H100's), and a host 1.3× faster or slower moves every
// host-bound call by as much. Our H200's machine ran the same eager calls
// at a median 0.86 of the H100-fitted host time (51 host-bound rows of
// testdata/measured/h200_sxm_pytorch.csv).
type HostFactor struct {
	// Runtime is the runtime profile's name as the rows priced it.
	Runtime string
	N       int
	Factor  float64
}

// hostPull is the ridge weight pulling a host factor's log toward 0, in
// rows: ESTIMATE, the class cells' pull (penalties.class) times four,
// since one machine's eager calls scatter by ±40% around their median
// (host-bound rows of our H100 and H200 tables: 0.5-1.8).
const hostPull = 4

// minHostRows is the fewest host-bound rows a host factor is fitted
// from (ESTIMATE: fewer is one timing's noise).
const minHostRows = 3

// hostBoundMargin is how far the host must exceed the device side for a
// row to teach the host factor: near the crossover the measured time
// mixes both, and the factor would absorb the device's error.
const hostBoundMargin = 1.2

// hostFit is one runtime's fitted host factor and the rows it came from.
type hostFit struct {
	factor float64
	n      int
}

// fitHosts fits one factor per runtime from the rows (those with train
// set, or all when train is nil) the host bounds under theta: the median
// log of measured over host time, shrunk toward 0 by n/(n+hostPull).
func fitHosts(frs []fitRow, theta []float64, train []bool) map[string]hostFit {
	logs := map[string][]float64{}
	for i := range frs {
		fr := &frs[i]
		if (train != nil && !train[i]) || !(fr.host > 0) || !runtimeName.MatchString(fr.runtime) {
			continue
		}
		if fr.host < hostBoundMargin*fr.device(theta, true) {
			continue
		}
		logs[fr.runtime] = append(logs[fr.runtime], math.Log(fr.meas/(fr.tail+fr.host)))
	}
	out := map[string]hostFit{}
	for rt, l := range logs {
		if len(l) < minHostRows {
			continue
		}
		n := float64(len(l))
		lf := quantile(l, 0.5) * n / (n + hostPull)
		out[rt] = hostFit{math.Exp(max(-math.Log(maxFactor), min(math.Log(maxFactor), lf))), len(l)}
	}
	return out
}

// setHosts sets each row's host factor from hosts (1 where none).
func setHosts(frs []fitRow, hosts map[string]hostFit) {
	for i := range frs {
		frs[i].hostFactor = 1
		if h, ok := hosts[frs[i].runtime]; ok {
			frs[i].hostFactor = h.factor
		}
	}
}

// hostList is hosts as the calibration keeps them, sorted by runtime.
func hostList(hosts map[string]hostFit) []HostFactor {
	var out []HostFactor
	for rt, h := range hosts {
		out = append(out, HostFactor{Runtime: rt, N: h.n, Factor: round4(h.factor)})
	}
	slices.SortFunc(out, func(a, b HostFactor) int { return strings.Compare(a.Runtime, b.Runtime) })
	return out
}

// HostFactor is the factor on runtime rt's host figures where a applies:
// on the GPU the calibration was fitted on (the host is that machine's; a
// sibling GPU, or any other, is most likely in another machine), its own
// or that of the runtime it is a layout variant of (pytorch for
// pytorch-nhwc: the same host code), else 1.
func (a *Applied) HostFactor(rt string) float64 {
	if !a.Fitted() || rt == "" {
		return 1
	}
	f, found, base := 1.0, false, strings.TrimSuffix(rt, "-nhwc")
	for _, h := range a.cal.Hosts {
		if h.Runtime == rt {
			return h.Factor
		}
		if !found && strings.TrimSuffix(h.Runtime, "-nhwc") == base {
			f, found = h.Factor, true // a layout variant's, unless rt has its own
		}
	}
	return f
}

// ScaleHost returns a copy of runtime r with its host figures scaled by
// a's host factor for it, or r itself when the factor is 1.
func (a *Applied) ScaleHost(r *hwdb.Runtime) *hwdb.Runtime {
	if r == nil {
		return r
	}
	f := a.HostFactor(r.Name)
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
		if slices.ContainsFunc(out, func(o HostFactor) bool { return o.Runtime == h.Runtime }) {
			return nil, fmt.Errorf("%s: runtime %q twice", at, h.Runtime)
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
	Runtime string  `yaml:"runtime"`
	N       int     `yaml:"n"`
	Factor  float64 `yaml:"factor"`
}

func writeHosts(p func(string, ...any), hosts []HostFactor) {
	if len(hosts) == 0 {
		return // absent: a file of a calibration without host-bound rows reads as before
	}
	p("hosts:\n")
	p("  # per eager runtime, the factor on its host figures (dispatch, module,\n")
	p("  # call, autograd, optimizer, cuDNN call) fitted on the rows the host\n")
	p("  # bounded (n); applies on the GPU fitted, whose machine's host it is\n")
	for _, h := range hosts {
		p("  - {runtime: %s, n: %d, factor: %s}\n", quote(h.Runtime), h.N, num(h.Factor))
	}
}
