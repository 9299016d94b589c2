package generate

import (
	"testing"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
)

// TestPowerSettingAndHostCalibration: a power cap or SM clock lock prices
// every step under it (no step faster than at the GPU's default, the
// prompt's compute-bound step slower, the setting named in the result),
// and a calibration's host factor scales an eager runtime's host work as
// report applies it (it was dropped here: only the kernel factors were).
func TestPowerSettingAndHostCalibration(t *testing.T) {
	a100 := gpu(t, "A100-SXM4-80GB")
	cfg := Config{Model: "zoo:llama-7b", GPU: a100, DType: "fp16", Prompt: 256, Output: 4}
	def := run(t, cfg)
	for _, pc := range []perf.PowerControl{{CapW: 150}, {SMClockMHz: 700}} {
		c := cfg
		c.Power = pc
		res := run(t, c)
		if res.PowerCapW != pc.CapW || res.SMClockMHz != pc.SMClockMHz {
			t.Errorf("%+v: result names cap %g W, clock %g MHz", pc, res.PowerCapW, res.SMClockMHz)
		}
		if !(res.TTFTS > 1.2*def.TTFTS) || res.TPOTS < def.TPOTS || res.E2ES < def.E2ES {
			t.Errorf("%+v: TTFT %g, TPOT %g, E2E %g s; at the default %g, %g, %g: want the prompt's step slower and none faster",
				pc, res.TTFTS, res.TPOTS, res.E2ES, def.TTFTS, def.TPOTS, def.E2ES)
		}
	}
	pt, err := hwdb.LookupRuntime("pytorch")
	if err != nil {
		t.Fatal(err)
	}
	tiny := Config{Model: "zoo:llama-tiny", GPU: a100, Runtime: pt, Prompt: 16, Output: 8}
	plain := run(t, tiny)
	tiny.Calibration = &calib.Calibration{Source: calib.Source{GPU: a100.Name, Family: calib.Family(a100)}, GPUFactor: 1,
		Hosts: []calib.HostFactor{{Runtime: "pytorch", N: 10, Factor: 2}}}
	slow := run(t, tiny)
	if !(slow.TPOTS > 1.5*plain.TPOTS) {
		t.Errorf("a host factor of 2 on a host-bound eager decode: TPOT %g s, uncalibrated %g s", slow.TPOTS, plain.TPOTS)
	}
}
