package calib

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeTable(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.csv")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadMeasurements(t *testing.T) {
	p := writeTable(t, "\ufeffmodel, ms,batch,dtype,dims,runtime,train,Warm\n"+
		"# a comment\n"+
		"models/resnet.onnx,1.25,8,FP16,,onnxruntime,no,yes\n"+
		"/abs/bert.onnx,0.5,,,seq=128; batch=2,,,\n"+
		"zoo:resnet50,20.1,64,fp16-amp,,pytorch-nhwc,Momentum,no\n"+
		"zoo:vgg16,11.5,32,,,,yes,TRUE\n")
	ms, err := ReadMeasurements(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(p)
	want := []Measurement{
		{Model: filepath.Join(dir, "models/resnet.onnx"), MeasuredS: 1.25e-3, Batch: 8, DType: "fp16", Runtime: "onnxruntime", Warm: true, Line: 3},
		{Model: "/abs/bert.onnx", MeasuredS: 0.5e-3, Dims: map[string]int64{"seq": 128, "batch": 2}, Line: 4},
		{Model: "zoo:resnet50", MeasuredS: 20.1e-3, Batch: 64, DType: "fp16-amp", Runtime: "pytorch-nhwc", Train: true, Optimizer: "momentum", Line: 5},
		{Model: "zoo:vgg16", MeasuredS: 11.5e-3, Batch: 32, Train: true, Warm: true, Line: 6},
	}
	if !reflect.DeepEqual(ms, want) {
		t.Errorf("got %+v\nwant %+v", ms, want)
	}
}

func TestReadMeasurementsRejectsBadTables(t *testing.T) {
	for name, c := range map[string]struct{ body, want string }{
		"empty":          {"", "empty file"},
		"header only":    {"model,ms\n", "no rows"},
		"no ms":          {"model,batch\nm.onnx,1\n", `no "ms" column`},
		"unknown column": {"model,ms,gpu\nm.onnx,1,T4\n", `:1: unknown column "gpu"`},
		"twice":          {"model,ms,MS\nm.onnx,1,2\n", "given twice"},
		"bad ms":         {"model,ms\nm.onnx,1\nm.onnx,fast\n", ":3: ms \"fast\""},
		"zero ms":        {"model,ms\nm.onnx,0\n", ":2: ms"},
		"inf ms":         {"model,ms\nm.onnx,inf\n", ":2: ms"},
		"bad batch":      {"model,ms,batch\nm.onnx,1,-2\n", ":2: batch"},
		"bad dims":       {"model,ms,dims\nm.onnx,1,seq\n", "not name=value"},
		"dims value":     {"model,ms,dims\nm.onnx,1,seq=x\n", "positive integer"},
		"dims twice":     {"model,ms,dims\nm.onnx,1,seq=1;seq=2\n", "given twice"},
		"empty model":    {"model,ms\n,1\n", ":2: empty model"},
		"short row":      {"model,ms,batch\nm.onnx,1\n", ":2: wrong number of fields"},
		"bad train":      {"model,ms,train\nm.onnx,1,Adam!\n", ":2: train \"Adam!\""},
		"bad warm":       {"model,ms,warm\nm.onnx,1,hot\n", ":2: warm \"hot\" is not yes or no"},
	} {
		p := writeTable(t, c.body)
		_, err := ReadMeasurements(p)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, p) || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line naming %s and %q", name, msg, p, c.want)
		}
	}
	if _, err := ReadMeasurements(filepath.Join(t.TempDir(), "none.csv")); err == nil || !strings.Contains(err.Error(), "none.csv") {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzReadMeasurements: any table either reads, every row a positive
// finite time with its settings in range, or fails with one line naming
// the file; never a panic.
func FuzzReadMeasurements(f *testing.F) {
	for _, seed := range []string{
		"model,ms\nm.onnx,1\n",
		"model,ms,batch,dtype,dims,runtime,train\nm.onnx,1.5,8,fp16,seq=128;b=2,pytorch,adam\nzoo:resnet50,2,1,,,,no\n",
		"\ufeffmodel, ms,train\n# c\nm.onnx,3,yes\n",
		"model,ms,train\nm.onnx,1,Adam!\n",
		"model,ms\nm.onnx,inf\n",
		"ms,model\n1,\"m,1.onnx\"\n",
		"# device: NVIDIA H200\n# sms: 132\n# memory_gib: 139.8\n# driver: 580\nmodel,ms\nm.onnx,1\n# device: x\n",
		"# sms: 1e3\nmodel,ms\nm.onnx,1\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		p := filepath.Join(t.TempDir(), "m.csv")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		// The provenance lines read alone: an error is one line naming
		// the file, and what is read is sane.
		if prov, err := ReadTableProvenance(p); err != nil {
			if msg := err.Error(); !strings.Contains(msg, p) || strings.Contains(msg, "\n") {
				t.Fatalf("provenance error %q: want one line naming %s", msg, p)
			}
		} else if prov.SMs < 0 || prov.MemoryGiB < 0 || math.IsInf(prov.MemoryGiB, 0) || math.IsNaN(prov.MemoryGiB) {
			t.Fatalf("provenance %+v accepted", prov)
		}
		ms, err := ReadMeasurements(p)
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, p) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q: want one line naming %s", msg, p)
			}
			return
		}
		if len(ms) == 0 {
			t.Fatal("a table read with no rows")
		}
		for _, m := range ms {
			if !(m.MeasuredS > 0) || math.IsInf(m.MeasuredS, 0) || m.Batch < 0 || m.Model == "" || (!m.Train && m.Optimizer != "") {
				t.Fatalf("row %+v accepted", m)
			}
			for k, v := range m.Dims {
				if k == "" || v <= 0 {
					t.Fatalf("dims %v accepted", m.Dims)
				}
			}
		}
	})
}
