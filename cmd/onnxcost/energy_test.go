package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runEnergyJSON runs `energy --format json` and decodes it.
func runEnergyJSON(t *testing.T, args ...string) (energyJSON, any) {
	t.Helper()
	var res energyJSON
	out := runJSON(t, &res, append(append([]string{"energy"}, args...), "--format", "json")...)
	var inst any
	if err := json.Unmarshal([]byte(out), &inst); err != nil {
		t.Fatal(err)
	}
	return res, inst
}

// TestEnergyJSONSchema: energy output validates against
// energy.schema.json, for cap and clock sweeps.
func TestEnergyJSONSchema(t *testing.T) {
	rs := resolveSchemaFile(t, "energy.schema.json")
	for _, args := range [][]string{
		{"zoo:alexnet", "--gpu", "V100"},
		{fixture(t, "lstm_ptb_dyn.onnx"), "--gpu", "T4", "--sm-clock", "600..1500:300"},
		{"zoo:alexnet", "--gpu", "A100", "--power-cap", "200,300,400"},
	} {
		_, inst := runEnergyJSON(t, args...)
		if err := rs.Validate(inst); err != nil {
			t.Errorf("%v: output does not match energy.schema.json: %v", args, err)
		}
	}
}

// TestEnergySweepInvariants: over the default caps, time never decreases
// as the cap falls, energy = average power × time, EDP = energy × time,
// and the optima are the rows of least energy and least EDP.
func TestEnergySweepInvariants(t *testing.T) {
	for _, m := range []string{"zoo:resnet50", "zoo:lstm-ptb"} {
		res, _ := runEnergyJSON(t, m, "--gpu", "V100", "--batch", "16")
		if len(res.Rows) != 7 || res.Rows[0].PowerCapW != 150 || res.Rows[6].PowerCapW != 300 {
			t.Fatalf("%s: rows %+v, want caps 150..300 W in 25 W steps (V100 min limit to TDP)", m, res.Rows)
		}
		minE, minD := math.Inf(1), math.Inf(1)
		for i, r := range res.Rows {
			if i > 0 && r.TimeS > res.Rows[i-1].TimeS*(1+1e-12) {
				t.Errorf("%s: time %g at %g W exceeds %g at the lower cap %g W", m, r.TimeS, r.PowerCapW, res.Rows[i-1].TimeS, res.Rows[i-1].PowerCapW)
			}
			if math.Abs(r.EnergyJ-r.AvgPowerW*r.TimeS) > 1e-9*r.EnergyJ {
				t.Errorf("%s %g W: energy %g ≠ power %g × time %g", m, r.PowerCapW, r.EnergyJ, r.AvgPowerW, r.TimeS)
			}
			if math.Abs(r.EDPJS-r.EnergyJ*r.TimeS) > 1e-12*r.EDPJS {
				t.Errorf("%s %g W: EDP %g ≠ energy × time", m, r.PowerCapW, r.EDPJS)
			}
			if r.AvgPowerW > r.PowerCapW*(1+1e-9) {
				t.Errorf("%s: %g W average under a %g W cap", m, r.AvgPowerW, r.PowerCapW)
			}
			minE, minD = min(minE, r.EnergyJ), min(minD, r.EDPJS)
		}
		for _, r := range res.Rows {
			if r.PowerCapW == res.Optimal.Energy.PowerCapW && r.EnergyJ != minE {
				t.Errorf("%s: energy-optimal cap %g W is not the least-energy row", m, r.PowerCapW)
			}
			if r.PowerCapW == res.Optimal.EDP.PowerCapW && r.EDPJS != minD {
				t.Errorf("%s: EDP-optimal cap %g W is not the least-EDP row", m, r.PowerCapW)
			}
		}
	}
}

// TestEnergyLSTMvsCNN: the seed's finding on the zoo. Capping a V100 to
// 200 W slows the PTB LSTM (batch 20, its training batch) far less than
// ResNet-50, which is compute-bound.
func TestEnergyLSTMvsCNN(t *testing.T) {
	slow := func(m, batch string) float64 {
		res, _ := runEnergyJSON(t, m, "--gpu", "V100", "--batch", batch, "--power-cap", "200,300")
		return res.Rows[0].TimeS/res.Rows[1].TimeS - 1
	}
	lstm, cnn := slow("zoo:lstm-ptb", "20"), slow("zoo:resnet50", "64")
	if !(lstm < 0.06) || !(cnn > 0.15) || !(cnn > 3*lstm) {
		t.Errorf("200 W on V100: LSTM slows %.1f%%, ResNet-50 %.1f%%; want the LSTM under 6%% and the CNN over 15%%", 100*lstm, 100*cnn)
	}
}

// TestEnergyBadInput: bad settings are one-line usage errors, exit 2, no
// output.
func TestEnergyBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"energy", "zoo:alexnet", "--gpu", "V100", "--power-cap", "100"}, // below V100's 150 W minimum
		{"energy", "zoo:alexnet", "--gpu", "V100", "--power-cap", "abc"}, // not a number
		{"energy", "zoo:alexnet", "--gpu", "V100", "--power-cap", "300..150"},
		{"energy", "zoo:alexnet", "--gpu", "V100", "--sm-clock", "5000"}, // above boost
		{"energy", "zoo:alexnet", "--gpu", "V100", "--power-cap", "200", "--sm-clock", "900"},
		{"energy", "zoo:alexnet", "--gpu", "V100", "-o", "chart.txt"},
		{"report", "zoo:alexnet", "--gpu", "V100", "--power-cap", "-5"},
		{"report", "zoo:alexnet", "--gpu", "V100", "--sm-clock", "1e9"},
	} {
		code, out, errs := runCLI(t, args...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, one line, no output", args, code, out, errs)
		}
	}
}

// TestReportPowerCap: report --power-cap slows a compute-bound model and
// records the cap; at TDP it is the uncapped report.
func TestReportPowerCap(t *testing.T) {
	get := func(args ...string) map[string]any {
		var r map[string]any
		runJSON(t, &r, append([]string{"report", "zoo:resnet50", "--gpu", "V100", "--batch", "32", "--format", "json"}, args...)...)
		return r["totals"].(map[string]any)
	}
	def, tdp, low := get(), get("--power-cap", "300"), get("--power-cap", "150")
	if def["time_s"] != tdp["time_s"] || def["energy_j"] != tdp["energy_j"] {
		t.Errorf("cap at TDP changed the report: %v vs %v", tdp, def)
	}
	if !(low["time_s"].(float64) > 1.2*def["time_s"].(float64)) || low["power_cap_w"] != 150.0 {
		t.Errorf("150 W cap: %v, uncapped %v", low, def)
	}
}

// TestEnergyDeterministic: the same sweep twice gives byte-identical text
// and SVG.
func TestEnergyDeterministic(t *testing.T) {
	dir := t.TempDir()
	var outs, svgs []string
	for i := range 2 {
		svg := filepath.Join(dir, fmt.Sprintf("e%d.svg", i))
		code, out, errs := runCLI(t, "energy", "zoo:alexnet", "--gpu", "V100", "-o", svg)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		data, err := os.ReadFile(svg)
		if err != nil {
			t.Fatal(err)
		}
		outs, svgs = append(outs, out), append(svgs, string(data))
	}
	if outs[0] != outs[1] || svgs[0] != svgs[1] {
		t.Error("two runs of the same energy sweep differ")
	}
	if !strings.Contains(outs[0], "min-energy") || !strings.Contains(outs[0], "min-EDP") {
		t.Errorf("no optimal marks in:\n%s", outs[0])
	}
}
