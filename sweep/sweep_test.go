package sweep

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	for in, want := range map[string][]int64{
		"1,8,32":    {1, 8, 32},
		"1..1024":   {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024},
		"4..4":      {4},
		"1..8,12,2": {1, 2, 4, 8, 12},
		" 3 , 1 ":   {1, 3},
	} {
		got, err := ParseList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "a", "3..8", "8..1", "1..", "1,,2", "1.5"} {
		if _, err := ParseList(bad); err == nil {
			t.Errorf("ParseList(%q): want an error", bad)
		}
	}
}

// TestFindMaxBatchExact: with a peak that fits at B and not at B+1, the
// search returns B exactly, for B across powers of two and between them.
func TestFindMaxBatchExact(t *testing.T) {
	for _, B := range []int64{1, 2, 3, 7, 8, 9, 100, 127, 128, 129, 1000, 65535} {
		const perItem, fixed = 3.0, 1000.0
		limit := fixed + perItem*float64(B) // fits at B, one item too many at B+1
		res, err := FindMaxBatch(func(b int64) (float64, bool, error) {
			p := fixed + perItem*float64(b)
			return p, p <= limit, nil
		})
		if err != nil || res.Batch != B || res.Unbounded {
			t.Errorf("B=%d: got %+v, %v", B, res.Batch, err)
		}
	}
	res, err := FindMaxBatch(func(b int64) (float64, bool, error) { return 10, false, nil })
	if err != nil || res.Batch != 0 {
		t.Errorf("nothing fits: got %d, %v", res.Batch, err)
	}
	res, err = FindMaxBatch(func(b int64) (float64, bool, error) { return 10, true, nil })
	if err != nil || !res.Unbounded || res.Batch != MaxBatchLimit {
		t.Errorf("everything fits: got %+v, %v", res.Batch, err)
	}
}

// TestFindMaxBatchNotMonotone: a peak that falls as batch grows is an
// error, not a silently wrong batch; a wobble within PeakTolerance (an
// allocator's fragmentation) is not.
func TestFindMaxBatchNotMonotone(t *testing.T) {
	_, err := FindMaxBatch(func(b int64) (float64, bool, error) {
		p := 1e12 / float64(b) // bytes: falls by far more than the tolerances
		return p, b < 6, nil
	})
	if err == nil || !strings.Contains(err.Error(), "monotone") {
		t.Fatalf("got %v, want a monotonicity error", err)
	}
	// A few allocator segments' wobble on a small model is not.
	res, err := FindMaxBatch(func(b int64) (float64, bool, error) {
		p := 2.9e9 + 1e6*float64(b)
		if b == 4 {
			p -= 90e6
		}
		return p, b < 40, nil
	})
	if err != nil || res.Batch != 39 {
		t.Errorf("segment wobble: got %d, %v; want 39", res.Batch, err)
	}
}

func TestKnee(t *testing.T) {
	b := []int64{1, 2, 4, 8, 16}
	k, ok := Knee(b, []float64{10, 50, 89, 95, 100})
	if !ok || k != 8 {
		t.Errorf("knee = %d, want 8", k)
	}
	k, _ = Knee(b, []float64{10, 50, 90, 95, 100})
	if k != 4 {
		t.Errorf("knee = %d, want 4 (90%% reached exactly)", k)
	}
	if _, ok := Knee(nil, nil); ok {
		t.Error("no points: want no knee")
	}
}

// TestPolyFitExact: exact polynomials come back exactly (to rounding),
// including a large quadratic term over a wide x range.
func TestPolyFitExact(t *testing.T) {
	xs := []float64{128, 256, 512, 1024, 2048}
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = 7e6 + 3e5*x + 16*x*x
	}
	f, err := PolyFit(xs, ys, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{7e6, 3e5, 16} {
		if math.Abs(f.Coef[i]-want) > 1e-6*math.Abs(want) {
			t.Errorf("coef %d = %v, want %v", i, f.Coef[i], want)
		}
	}
	if f.R2 < 1-1e-12 || f.MaxRelResidual > 1e-12 {
		t.Errorf("R2 %v, residual %v", f.R2, f.MaxRelResidual)
	}
	if _, err := PolyFit([]float64{1, 1, 1}, []float64{1, 2, 3}, 1); err == nil {
		t.Error("one distinct x: want an error")
	}
	if _, err := Degree("cubic"); err == nil {
		t.Error("cubic: want an error")
	}
}

// TestFindMaxBatchWobble: a peak rising with batch but 0.5% lower at
// batch 101 than at 100 (within PeakTolerance) is searched as monotone.
func TestFindMaxBatchWobble(t *testing.T) {
	res, err := FindMaxBatch(func(b int64) (float64, bool, error) {
		p := 100 * float64(b)
		if b == 101 {
			p = 9950
		}
		return p, p <= 10000, nil
	})
	if err != nil || res.Batch != 101 {
		t.Errorf("got %d, %v; want 101", res.Batch, err)
	}
}

// TestRunNamesTheRuntime: a sweep says which runtime it prices; with none
// named the model decides it (onnxruntime for one holding onnxruntime's
// contrib operators), at the first point read.
func TestRunNamesTheRuntime(t *testing.T) {
	for _, c := range []struct{ model, runtime, plan string }{
		{"../testdata/models/contrib/bert_ms_attention.onnx", "onnxruntime", "onnxruntime"},
		{"zoo:resnet18", "tensorrt", "fused"},
	} {
		res, err := Run(Config{Model: c.model, GPUs: gpus(t, "A100"), Batches: []int64{1, 2}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Runtime != c.runtime || res.Plan != c.plan {
			t.Errorf("%s: runtime %s, plan %s; want %s, %s", c.model, res.Runtime, res.Plan, c.runtime, c.plan)
		}
	}
}
