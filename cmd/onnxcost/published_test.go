package main

import (
	"bufio"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// End-to-end accuracy against published whole-model inference figures
// (testdata/published/*.csv: TensorRT BERT demo, MLPerf ResNet-50 and
// BERT-large). Each
// row is costed with the fused plan at its GPU, dtype and batch, and the
// relative error |pred − pub| / pub is logged. The assertion is a
// regression guard on the median per file, not a target: the bounds are
// the medians this model reached when they were set plus a margin (see
// publishedBounds), so a change that makes whole-model times worse fails
// here even when DeepBench's per-kernel error does not move.

// publishedRow is one published measurement.
type publishedRow struct {
	GPU, Model, DType string
	Batch             int64
	LatencyMS         float64
}

// publishedBounds is the largest median |error| each file may reach.
// Achieved when set (go test ./cmd/onnxcost -run TestPublished -v;
// CALIBRATION.md revision 5): bert_tensorrt.csv 20.1% (P90 42.0%, 52 rows
// with L40S), resnet50.csv 9.4% (P90 44.3%) on 12 rows. Adding the MLPerf
// H100 SXM/PCIe, H200 and L40S Offline rows (16 rows) moved resnet50.csv
// to 12.0% (P90 55.9%), still inside its bound, which was left as it was
// (not tightened: the median got worse; not loosened: it still holds).
// The margin (3-5 points)
// absorbs small, deliberate changes elsewhere in the model; anything
// larger should be looked at, not absorbed.
//
// bert_mlperf.csv (MLPerf bert-99 Offline int8, BERT-large at sequence
// 384, 10 GPUs) reached a median of 70.0% (P90 124.1%) when its bound was
// set; the bound is that plus 5 points. The error is dominated by a known
// one-sided bias, not noise: NVIDIA's harness runs the real SQuAD lengths
// with variable-length kernels while bert_large_s384 is padded to 384, so
// every row is over-predicted (+41% to +182%; see the CSV's header). The
// bound guards against regressions only; it says nothing about accuracy.
// Revision 7 of the time model (CALIBRATION.md: pointwise and
// normalisation kernels held to the rate Vidur's measured on A100/H100)
// took it to 129.2% (P90 146.6%): the padded model's 48 LayerNorms over
// 491k tokens price a quarter of its time at that rate, where TensorRT's
// variable-length kernels run neither the padding nor (it seems) a norm
// that slow; the same revision took bert_tensorrt.csv from 22.4% to
// 15.7%, and the bounds follow (each +5 points over what it reaches).
var publishedBounds = map[string]float64{
	"bert_mlperf.csv":   1.35,
	"bert_tensorrt.csv": 0.21,
	"resnet50.csv":      0.14,
}

// paddedFiles lists the files whose published runs did less work than our
// model of them (MLPerf BERT: real SQuAD lengths vs our padded 384). An
// exact model would over-predict every such row, so a row predicted
// faster than published shows the model too fast, whatever the median.
var paddedFiles = map[string]bool{"bert_mlperf.csv": true}

// readPublished parses a published CSV: '#' lines are comments, the
// first other line is the header gpu,model,dtype,batch,latency_ms.
func readPublished(path string) ([]publishedRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []publishedRow
	header := false
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if !header {
			if s != "gpu,model,dtype,batch,latency_ms" {
				return nil, fmt.Errorf("%s:%d: unexpected header %q", path, line, s)
			}
			header = true
			continue
		}
		c := strings.Split(s, ",")
		if len(c) != 5 {
			return nil, fmt.Errorf("%s:%d: want 5 fields, got %d", path, line, len(c))
		}
		b, err1 := strconv.ParseInt(c[3], 10, 64)
		ms, err2 := strconv.ParseFloat(c[4], 64)
		if err1 != nil || err2 != nil || b <= 0 || ms <= 0 {
			return nil, fmt.Errorf("%s:%d: bad batch or latency in %q", path, line, s)
		}
		rows = append(rows, publishedRow{GPU: c[0], Model: c[1], DType: c[2], Batch: b, LatencyMS: ms})
	}
	return rows, sc.Err()
}

// publishedResult is one row with its prediction.
type publishedResult struct {
	publishedRow
	PredMS float64
	Err    float64 // (pred − pub) / pub, signed
	// LoMS, HiMS are the report's 80% interval (0 when it has none).
	LoMS, HiMS float64
}

// predictPublished costs every row with the fused plan.
func predictPublished(t *testing.T, rows []publishedRow) []publishedResult {
	t.Helper()
	out := make([]publishedResult, 0, len(rows))
	for _, r := range rows {
		path := filepath.Join("..", "..", "testdata", "models", r.Model+".onnx")
		f := costFlags{gpu: r.GPU, dtype: r.DType, plan: "fused"}
		f.batch = r.Batch
		rep, _, err := estimate(path, &f)
		if err != nil {
			t.Fatalf("%s %s %s b=%d: %v", r.Model, r.GPU, r.DType, r.Batch, err)
		}
		pred := rep.Totals.TimeS * 1e3
		pr := publishedResult{publishedRow: r, PredMS: pred, Err: (pred - r.LatencyMS) / r.LatencyMS}
		if iv := rep.Totals.TimeIntervalS; len(iv) == 2 {
			pr.LoMS, pr.HiMS = iv[0]*1e3, iv[1]*1e3
		}
		out = append(out, pr)
	}
	return out
}

// quantileAbs is the q-quantile (nearest rank, linear between ranks) of |err|.
func quantileAbs(res []publishedResult, q float64) float64 {
	if len(res) == 0 {
		return 0
	}
	a := make([]float64, len(res))
	for i, r := range res {
		a[i] = math.Abs(r.Err)
	}
	sort.Float64s(a)
	pos := q * float64(len(a)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(a)-1)
	return a[lo] + (pos-float64(lo))*(a[hi]-a[lo])
}

// logGroups logs median and P90 |error| per group key, sorted by key.
func logGroups(t *testing.T, title string, res []publishedResult, key func(publishedResult) string) {
	t.Helper()
	groups := map[string][]publishedResult{}
	for _, r := range res {
		groups[key(r)] = append(groups[key(r)], r)
	}
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		t.Logf("  %-8s %-22s n=%-3d median %5.1f%%  P90 %5.1f%%", title, k, len(g), 100*quantileAbs(g, 0.5), 100*quantileAbs(g, 0.9))
	}
}

// batchRange buckets a batch for the summary.
func batchRange(b int64) string {
	switch {
	case b <= 1:
		return "b=1"
	case b <= 32:
		return "b=2..32"
	case b <= 256:
		return "b=33..256"
	}
	return "b>256"
}

func TestPublishedEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("costs whole models")
	}
	files := make([]string, 0, len(publishedBounds))
	for f := range publishedBounds {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, file := range files {
		t.Run(strings.TrimSuffix(file, ".csv"), func(t *testing.T) {
			rows, err := readPublished(filepath.Join("..", "..", "testdata", "published", file))
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) == 0 {
				t.Fatal("no rows")
			}
			res := predictPublished(t, rows)
			t.Logf("%-16s %-15s %-5s %5s %10s %10s %8s", "gpu", "model", "dtype", "batch", "pub ms", "pred ms", "error")
			for _, r := range res {
				t.Logf("%-16s %-15s %-5s %5d %10.3f %10.3f %+7.1f%%", r.GPU, r.Model, r.DType, r.Batch, r.LatencyMS, r.PredMS, 100*r.Err)
			}
			logGroups(t, "gpu", res, func(r publishedResult) string { return r.GPU })
			logGroups(t, "dtype", res, func(r publishedResult) string { return r.Model + " " + r.DType })
			logGroups(t, "batch", res, func(r publishedResult) string { return batchRange(r.Batch) })
			med, p90 := quantileAbs(res, 0.5), quantileAbs(res, 0.9)
			t.Logf("%s: n=%d median |error| %.1f%%, P90 %.1f%%", file, len(res), 100*med, 100*p90)
			inside, widths := 0, make([]float64, 0, len(res))
			for _, r := range res {
				if r.LoMS <= r.LatencyMS && r.LatencyMS <= r.HiMS {
					inside++
				}
				if r.LoMS > 0 {
					widths = append(widths, r.HiMS/r.LoMS)
				}
			}
			slices.Sort(widths)
			if len(widths) == 0 {
				t.Fatalf("%s: no report gave a time interval", file)
			}
			t.Logf("%s: the published time lies inside the 80%% interval for %d of %d rows, median width %.2f", file, inside, len(res), widths[len(widths)/2])
			if paddedFiles[file] {
				for _, r := range res {
					if r.Err < 0 {
						t.Errorf("%s %s b=%d: predicted %.3f ms, faster than the published %.3f ms of a run that did less work", r.GPU, r.Model, r.Batch, r.PredMS, r.LatencyMS)
					}
				}
			}
			if bound := publishedBounds[file]; med > bound {
				t.Errorf("%s: median |error| %.1f%% exceeds the regression bound %.0f%%", file, 100*med, 100*bound)
			}
		})
	}
}

func TestReadPublishedRejectsBadRows(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"header": "gpu,model\nT4,bert_base,fp16,1,1\n",
		"fields": "gpu,model,dtype,batch,latency_ms\nT4,bert_base,fp16,1\n",
		"batch":  "gpu,model,dtype,batch,latency_ms\nT4,bert_base,fp16,0,1\n",
	} {
		p := filepath.Join(dir, name+".csv")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readPublished(p); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}
