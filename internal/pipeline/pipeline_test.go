package pipeline

import (
	"os"
	"reflect"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/passes"
)

// TestLoadBytesMatchesLoad: the browser path (bytes) and the file path
// give the same report, so the two builds cannot drift apart.
func TestLoadBytesMatchesLoad(t *testing.T) {
	const path = "../../testdata/models/alexnet.onnx"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := hwdb.Lookup("A100")
	if err != nil {
		t.Fatal(err)
	}
	run := func(l *Loaded, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Plan("fused", passes.Options{}); err != nil {
			t.Fatal(err)
		}
		r, err := Estimate(l, gpu, EstimateOptions{Plan: "fused", ModelName: "m"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := run(Load(path, Options{BindAll: true}))
	b := run(LoadBytes(path, data, Options{BindAll: true}))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("LoadBytes and Load disagree")
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
