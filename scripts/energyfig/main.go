//go:build !js

// Command energyfig draws the README's energy figure: time and energy
// against the power cap for several models on one GPU, from the JSON of
// `onnxcost energy`. Each argument is LABEL=FILE.json; -o names the chart.
//
//	go run ./cmd/onnxcost energy zoo:lstm-ptb --gpu V100 --batch 20 --format json > lstm.json
//	go run ./cmd/onnxcost energy zoo:resnet50 --gpu V100 --batch 64 --format json > r50.json
//	go run ./scripts/energyfig -o docs/figures/energy_lstm_resnet50_v100.png "LSTM (PTB) b20=lstm.json" "ResNet-50 b64=r50.json"
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/onnxcost/onnxcost/viz"
)

type row struct {
	PowerCapW float64 `json:"power_cap_w"`
	TimeS     float64 `json:"time_s"`
	EnergyJ   float64 `json:"energy_j"`
}

type result struct {
	GPU     string `json:"gpu"`
	Rows    []row  `json:"rows"`
	Optimal struct {
		Energy struct {
			PowerCapW float64 `json:"power_cap_w"`
		} `json:"energy"`
	} `json:"optimal"`
}

func main() {
	out := flag.String("o", "energy.png", "chart file (.svg, .png or .pdf)")
	flag.Parse()
	if err := run(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "energyfig:", err)
		os.Exit(2)
	}
}

func run(out string, args []string) error {
	var series []viz.EnergySeries
	gpu := ""
	for i, a := range args {
		label, file, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("argument %q: want LABEL=FILE.json", a)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var r result
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if len(r.Rows) == 0 {
			return fmt.Errorf("%s: no rows", file)
		}
		gpu = r.GPU
		base := r.Rows[len(r.Rows)-1] // the highest cap (TDP by default)
		ts := viz.EnergySeries{Label: label + ": time", Colour: i}
		es := viz.EnergySeries{Label: label + ": energy", Colour: i, Dashed: true, Marks: []float64{r.Optimal.Energy.PowerCapW}}
		for _, w := range r.Rows {
			ts.X, ts.Y = append(ts.X, w.PowerCapW), append(ts.Y, w.TimeS/base.TimeS)
			es.X, es.Y = append(es.X, w.PowerCapW), append(es.Y, w.EnergyJ/base.EnergyJ)
		}
		series = append(series, ts, es)
	}
	format := strings.TrimPrefix(out[strings.LastIndex(out, ".")+1:], ".")
	img, err := viz.EnergyChart(series, viz.EnergyOptions{
		Title:  "Power cap on " + gpu + ": time and energy per inference, relative to the default limit",
		XLabel: "power cap (W)", YLabel: "relative to the highest cap",
	}, format)
	if err != nil {
		return err
	}
	return os.WriteFile(out, img, 0o644)
}
