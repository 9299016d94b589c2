package energy

import (
	"slices"
	"strings"
	"testing"
)

// TestParseList: ranges step from LO to HI inclusive, lists keep their
// order; bad values, steps and oversized ranges name the flag.
func TestParseList(t *testing.T) {
	for in, want := range map[string][]float64{
		"600..900":     {600, 700, 800, 900},
		"200..260:25":  {200, 225, 250},
		" 300, 250.5 ": {300, 250.5},
	} {
		if got, err := ParseList("--sm-clock", in, 100); err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"0,100":     "bad value",
		"100..50":   "bad range",
		"1..9:0":    "bad step",
		"1..5000:1": "range \"1..5000:1\" has more than 1000 values",
	} {
		if _, err := ParseList("--power-cap", in, 25); err == nil || !strings.HasPrefix(err.Error(), "--power-cap: "+want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}
