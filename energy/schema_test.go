package energy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/schematest"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/pipeline"
)

// load reads and plans a model for Run.
func load(t *testing.T, path string, batch int64) *pipeline.Loaded {
	t.Helper()
	l, err := pipeline.Load(path, pipeline.Options{Batch: batch, BindAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Plan("fused", passes.Options{}); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSchema: real results of a default cap sweep, a cap list and a clock
// sweep validate against the committed Schema, which rejects a row
// without its energy; the optimal rows are the least energy and EDP.
func TestSchema(t *testing.T) {
	rs := schematest.Resolve(t, Schema)
	v100, err := hwdb.Lookup("V100")
	if err != nil {
		t.Fatal(err)
	}
	l := load(t, "zoo:alexnet", 8)
	est := pipeline.EstimateOptions{Plan: "fused", ToolVersion: "test"}
	for _, cfg := range []Config{
		{},
		{Caps: []float64{150, 200, 300}},
		{Clocks: []float64{600, 900, 1200}},
	} {
		cfg.Loaded, cfg.GPU, cfg.Estimate = l, v100, est
		res, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		least := res.Rows[0]
		for _, r := range res.Rows {
			if r.EnergyJ < least.EnergyJ {
				least = r
			}
		}
		if o := res.Optimal.Energy; o.PowerCapW != least.PowerCapW || o.SMClockMHz != least.SMClockMHz {
			t.Errorf("%s: optimal energy at %+v, least energy row %+v", res.Mode, o, least.Point)
		}
		js, _ := json.Marshal(res)
		var inst map[string]any
		if err := json.Unmarshal(js, &inst); err != nil {
			t.Fatal(err)
		}
		if err := rs.Validate(inst); err != nil {
			t.Errorf("%s %v: a real result fails the schema: %v", res.Mode, cfg.Caps, err)
		}
		for _, r := range append([]Point{res.Reference.Point}, pointsOf(res.Rows)...) {
			if iv := r.TimeIntervalS; len(iv) != 2 || !(iv[0] <= r.TimeS && r.TimeS <= iv[1]) {
				t.Errorf("%s: %g W / %g MHz: time %g, 80%% interval %v", res.Mode, r.PowerCapW, r.SMClockMHz, r.TimeS, iv)
			}
		}
		var text, csv bytes.Buffer
		if err := WriteText(&text, res); err != nil || !strings.Contains(text.String(), "min-energy") || !strings.Contains(text.String(), "80% interval") {
			t.Errorf("text %q, %v", text.String(), err)
		}
		if err := WriteCSV(&csv, res); err != nil || strings.Count(csv.String(), "\n") != len(res.Rows)+1 {
			t.Errorf("CSV %q, %v", csv.String(), err)
		}
		delete(inst["rows"].([]any)[0].(map[string]any), "energy_j")
		if err := rs.Validate(inst); err == nil {
			t.Error("schema accepts a row without energy_j")
		}
	}
}

// TestDefaultCaps: the default caps run from the minimum power limit to
// TDP in CapStepW steps, TDP last.
func TestDefaultCaps(t *testing.T) {
	g := &hwdb.GPU{Name: "X", TDPWatts: 300, MinPowerW: 150}
	caps, warns := DefaultCaps(g)
	want := []float64{150, 175, 200, 225, 250, 275, 300}
	if len(warns) != 0 || len(caps) != len(want) {
		t.Fatalf("caps %v, warnings %v; want %v", caps, warns, want)
	}
	for i := range want {
		if caps[i] != want[i] {
			t.Fatalf("caps %v; want %v", caps, want)
		}
	}
	// No minimum on record: half of TDP, assumed and said.
	g.MinPowerW = 0
	if caps, warns := DefaultCaps(g); caps[0] != 150 || len(warns) != 1 {
		t.Errorf("caps %v, warnings %v; want from 150 W with a warning", caps, warns)
	}
}

// pointsOf are the rows' settings and figures.
func pointsOf(rows []Row) []Point {
	out := make([]Point, len(rows))
	for i, r := range rows {
		out[i] = r.Point
	}
	return out
}
