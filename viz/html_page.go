//go:build !js

package viz

import (
	"bytes"

	"github.com/onnxcost/onnxcost/cost/report"
)

// HTMLPage draws the roofline with gonum/plot (roofline.go), which the
// browser build leaves out, so it is built where roofline.go is.

// HTMLPage is the page HTML writes for in, with the roofline of in's
// report and other (the unfused plan, or nil) drawn under ro.
func HTMLPage(in HTMLInput, other *report.Report, ro RooflineOptions) ([]byte, error) {
	roof, err := Roofline(in.Report, other, in.Ceil, ro, "svg")
	if err != nil {
		return nil, err
	}
	in.RooflineSVG = roof
	var buf bytes.Buffer
	if err := HTML(&buf, in); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
