package render

import "testing"

// A CSV column holds one notation: plain decimals for every value a cost
// can take.
func TestCSVNumberOneNotation(t *testing.T) {
	for v, want := range map[float64]string{
		5444: "5444", 14630.5: "14630.5", 1.15605504e8: "115605504", 2.5e-7: "0.00000025",
		0: "0", -3.5: "-3.5", 1e21: "1e+21", 1e-13: "1e-13",
	} {
		if got := CSVNumber(v); got != want {
			t.Errorf("CSVNumber(%g) = %q, want %q", v, got, want)
		}
	}
}
