//go:build !js

package viz

import (
	"strings"
	"testing"
)

// TestEnergyChart: an energy chart draws its series and the ring legend;
// nothing to draw is an error, not an empty image.
func TestEnergyChart(t *testing.T) {
	if _, err := EnergyChart(nil, EnergyOptions{}, "svg"); err == nil {
		t.Error("empty chart accepted")
	}
	s := []EnergySeries{
		{Label: "model: time", X: []float64{150, 200, 300}, Y: []float64{1.4, 1.2, 1}},
		{Label: "model: energy", X: []float64{150, 200, 300}, Y: []float64{0.8, 0.9, 1}, Dashed: true, Marks: []float64{150}},
	}
	img, err := EnergyChart(s, EnergyOptions{Title: "t", XLabel: "power cap (W)", YLabel: "relative"}, "svg")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"model: time", "model: energy", "least-energy setting", "power cap (W)"} {
		if !strings.Contains(string(img), want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}
