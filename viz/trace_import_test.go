package viz

import (
	"fmt"
	"strings"
	"testing"
)

// TestPerfettoOverlapsRejects: slices that abut in float µs but overlap
// once ts and dur are rounded to ns each on their own, and flows that
// bind to no slice, are caught.
func TestPerfettoOverlapsRejects(t *testing.T) {
	for name, c := range map[string]struct{ events, want string }{
		"rounded overlap": {`{"name":"a","ph":"X","ts":0.0006,"dur":0.0006,"pid":1,"tid":3},{"name":"b","ph":"X","ts":0.0012,"dur":1,"pid":1,"tid":3}`, "starts before"},
		"orphan flow":     {`{"name":"a","ph":"X","ts":0,"dur":1,"pid":1,"tid":3},{"name":"f","ph":"f","ts":0.5,"id":7,"bp":"e","pid":1,"tid":3}`, "never starts"},
		"flow outside":    {`{"name":"a","ph":"X","ts":0,"dur":1,"pid":1,"tid":3},{"name":"f","ph":"s","ts":0.5,"id":7,"pid":1,"tid":1},{"name":"f","ph":"f","ts":0.5,"id":7,"bp":"e","pid":1,"tid":3}`, "outside"},
	} {
		err := PerfettoOverlaps([]byte(`{"traceEvents":[` + c.events + `]}`))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
	ok := `{"traceEvents":[{"name":"a","ph":"X","ts":0.001,"dur":0.001,"pid":1,"tid":3},{"name":"b","ph":"X","ts":0.002,"dur":0,"pid":1,"tid":3},{"name":"c","ph":"X","ts":0.002,"dur":1,"pid":1,"tid":3}]}`
	if err := PerfettoOverlaps([]byte(ok)); err != nil {
		t.Error(err)
	}
}

// TestTraceNSRoundTrips: every grid time reads back as the same
// nanoseconds whether the reader rounds or truncates ts·1000.
func TestTraceNSRoundTrips(t *testing.T) {
	for n := int64(0); n < 200000; n += 7 {
		b, _ := traceNS(n).MarshalJSON()
		var x float64
		if _, err := fmt.Sscan(string(b), &x); err != nil {
			t.Fatal(err)
		}
		if int64(x*1000) != n || roundInt(x*1000) != n {
			t.Fatalf("%d ns written %s reads back as %v", n, b, x*1000)
		}
	}
}
