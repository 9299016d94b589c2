package pipeline

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/passes"
)

// TestLoadBytesMatchesLoad: the browser path (bytes) and the file path
// give the same report, so the two builds cannot drift apart.
func TestLoadBytesMatchesLoad(t *testing.T) {
	const path = "../testdata/models/alexnet.onnx"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	run := estimator(t, "A100", "fused")
	a := run(Load(path, Options{BindAll: true}))
	b := run(LoadBytes(path, data, Options{BindAll: true}))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("LoadBytes and Load disagree")
	}
}

// estimator returns a function that costs a loaded model on the named GPU
// as plan ("fused" runs the passes first), failing the test on any error;
// it takes Load's and LoadBytes's results as they come.
func estimator(t *testing.T, gpuName, plan string) func(*Loaded, error) *report.Report {
	t.Helper()
	gpu, err := hwdb.Lookup(gpuName)
	if err != nil {
		t.Fatal(err)
	}
	return func(l *Loaded, err error) *report.Report {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if plan == "fused" {
			if err := l.Plan(plan, passes.Options{}); err != nil {
				t.Fatal(err)
			}
		}
		r, err := Estimate(l, gpu, EstimateOptions{Plan: plan, ModelName: "m"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

// TestBadInputIsInputError: bad input is an *Error, which the command
// line maps to exit 2.
func TestBadInputIsInputError(t *testing.T) {
	_, err := LoadBytes("x.onnx", []byte("not a model"), Options{})
	if err == nil || !IsInputError(err) {
		t.Fatalf("got %v, want an input error", err)
	}
}

// TestIntervalBasisOnReports: an uncalibrated report on a GPU whose
// family has no measured kernels here says whose its interval rests on
// (totals.interval_basis, the text's interval line); one on a measured
// family leaves it out.
func TestIntervalBasisOnReports(t *testing.T) {
	for _, c := range []struct {
		gpu, want string
	}{{"L4", "on Ampere GPUs"}, {"V100", "no Volta kernel"}, {"T4", ""}, {"H100", ""}} {
		rep, err := Run("zoo:resnet18", Config{GPU: c.gpu})
		if err != nil {
			t.Fatal(err)
		}
		b := rep.Totals.IntervalBasis
		if len(rep.Totals.TimeIntervalS) != 2 || (c.want == "") != (b == "") || !strings.Contains(b, c.want) {
			t.Errorf("%s: interval %v, basis %q; want %q", c.gpu, rep.Totals.TimeIntervalS, b, c.want)
		}
	}
}
