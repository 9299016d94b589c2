package main

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

func compareJSON(t *testing.T, args ...string) report.Comparison {
	t.Helper()
	var c report.Comparison
	runJSON(t, &c, append([]string{"compare", "--format", "json"}, args...)...)
	return c
}

// ResNet-50 (opset 13 export, BN already folded by the exporter): every
// Conv+Relu and Conv+Add+Relu chain is fused, the fused plan has fewer
// than half the launches and fewer bytes; without Winograd the FLOPs are
// exactly the unfused ones (a fused kernel does the sum of its parts).
func TestCompareResNet50(t *testing.T) {
	m := fixture(t, "resnet50.onnx")
	c := compareJSON(t, m, "--gpu", "T4", "--batch", "1", "--check", "--disable", "winograd")
	if !(c.Fused.Launches < c.Unfused.Launches/2) {
		t.Errorf("launches %v fused vs %v unfused, want fewer than half", c.Fused.Launches, c.Unfused.Launches)
	}
	if !(c.Fused.Bytes < c.Unfused.Bytes) {
		t.Errorf("bytes %v fused vs %v unfused, want fewer", c.Fused.Bytes, c.Unfused.Bytes)
	}
	if c.Fused.FLOPs != c.Unfused.FLOPs {
		t.Errorf("FLOPs %v fused vs %v unfused, want equal without winograd", c.Fused.FLOPs, c.Unfused.FLOPs)
	}
	claimedRelu := 0
	for i, g := range c.Groups {
		if g.OpType == "Relu" || g.OpType == "Add" {
			t.Errorf("group %s: a lone %s was left unfused", g.Name, g.OpType)
		}
		for _, p := range g.Constituents {
			if strings.HasSuffix(p, "Relu") {
				claimedRelu++
			}
		}
		if i > 0 && g.SavingS > c.Groups[i-1].SavingS {
			t.Errorf("groups not sorted by saving at %d", i)
		}
	}
	const relus = 49 // 1 stem + 16 blocks × 3
	if claimedRelu != relus {
		t.Errorf("%d Relu nodes fused, want %d", claimedRelu, relus)
	}
	// Each plan's time carries its 80% interval.
	for _, p := range []struct {
		t  float64
		iv []float64
	}{{c.Unfused.TimeS, c.UnfusedTimeIntervalS}, {c.Fused.TimeS, c.FusedTimeIntervalS}} {
		if len(p.iv) != 2 || !(p.iv[0] <= p.t && p.t <= p.iv[1]) {
			t.Errorf("plan time %g, 80%% interval %v", p.t, p.iv)
		}
	}
	// With Winograd, the 3×3 convolutions with enough tiles execute fewer
	// FLOPs; the model's FLOPs stay the same.
	w := compareJSON(t, m, "--gpu", "T4", "--batch", "1")
	if !(w.Fused.ExecutedFLOPs < c.Fused.ExecutedFLOPs) || w.Fused.FLOPs != c.Fused.FLOPs {
		t.Errorf("winograd: executed FLOPs %v vs %v, FLOPs %v vs %v", w.Fused.ExecutedFLOPs, c.Fused.ExecutedFLOPs, w.Fused.FLOPs, c.Fused.FLOPs)
	}
}

func TestCompareFormats(t *testing.T) {
	m := fixture(t, "alexnet.onnx")
	for _, f := range []string{"text", "markdown"} {
		code, out, errs := runCLI(t, "compare", m, "--gpu", "A100-SXM4-80GB", "--format", f, "--top", "3")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errs)
		}
		if !strings.Contains(out, "launches") || !strings.Contains(out, "more groups") {
			t.Errorf("%s output lacks the totals or the --top note:\n%s", f, out)
		}
		_, again, _ := runCLI(t, "compare", m, "--gpu", "A100-SXM4-80GB", "--format", f, "--top", "3")
		if again != out {
			t.Errorf("%s output is not deterministic", f)
		}
	}
	if code, _, _ := runCLI(t, "compare", m, "--gpu", "T4", "--disable", "no-such-pass"); code != 2 {
		t.Errorf("unknown pass: exit %d, want 2", code)
	}
}
