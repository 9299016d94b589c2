package pipeline

import (
	"reflect"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/models"
)

// TestZooPathMatchesBuild: "zoo:NAME?k=v" costs exactly the model that
// models builds with those parameters, and --batch sets the batch
// parameter when the path leaves it out.
func TestZooPathMatchesBuild(t *testing.T) {
	cost := estimator(t, "V100", "unfused")
	est := func(l *Loaded, err error) float64 { return cost(l, err).Totals.FLOPs }
	e, _ := models.Lookup("alexnet")
	m, err := e.Build(map[string]int64{"batch": 4})
	if err != nil {
		t.Fatal(err)
	}
	want := est(finish("x", m, Options{}))
	if got := est(Load("zoo:alexnet?batch=4", Options{})); got != want {
		t.Errorf("zoo:alexnet?batch=4: %v FLOPs, want %v", got, want)
	}
	l, err := Load("zoo:alexnet", Options{Batch: 4})
	if got := est(l, err); got != want {
		t.Errorf("zoo:alexnet --batch 4: %v FLOPs, want %v", got, want)
	}
	if l.Bindings["batch"] != 4 {
		t.Errorf("bindings %v, want batch=4", l.Bindings)
	}
}

// TestZooPathErrors: unknown models, unknown or malformed parameters are
// input errors naming the path.
func TestZooPathErrors(t *testing.T) {
	for _, p := range []string{"zoo:nope", "zoo:alexnet?foo=1", "zoo:alexnet?batch=x", "zoo:alexnet?batch", "zoo:alexnet?batch=1&batch=2", "zoo:alexnet?batch=-5"} {
		_, err := Load(p, Options{})
		if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: got %v, want an input error naming the path", p, err)
		}
	}
}

// TestZooPathCanonical: ZooPath sorts parameters, and ParseZoo reads it back.
func TestZooPathCanonical(t *testing.T) {
	p := ZooPath("lstm-ptb", map[string]int64{"hidden": 256, "embed": 256, "batch": 8})
	if p != "zoo:lstm-ptb?batch=8&embed=256&hidden=256" {
		t.Fatalf("got %s", p)
	}
	z, err := ParseZoo(p)
	if err != nil || !reflect.DeepEqual(z.Params, map[string]int64{"hidden": 256, "embed": 256, "batch": 8}) {
		t.Fatalf("ParseZoo(%s) = %v, %v", p, z, err)
	}
}
