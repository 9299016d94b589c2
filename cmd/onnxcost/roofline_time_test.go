package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTimeRooflinePoints: at every batch the estimate is max(compute,
// memory) + launch of the floors drawn, so it lies on or above each; the
// compute floor of a conv grows with batch, the launch floor does not.
func TestTimeRooflinePoints(t *testing.T) {
	f := costFlags{gpu: "V100", plan: "fused"}
	pts, title, err := timeRooflinePoints("zoo:resnet50", &f, &timeRooflineFlags{on: true, sweep: "batch=1..256", node: "/layer3/layer3.0/conv2/Conv"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 9 || !strings.Contains(title, "V100") {
		t.Fatalf("%d points, title %q", len(pts), title)
	}
	for i, p := range pts {
		want := max(p.ComputeS, p.MemoryS) + p.LaunchS
		if d := p.TimeS - want; d > 1e-12*want || d < -1e-12*want {
			t.Errorf("batch %v: estimate %v, max(compute, memory) + launch = %v", p.X, p.TimeS, want)
		}
		if i > 0 && !(p.ComputeS > pts[i-1].ComputeS) {
			t.Errorf("batch %v: compute floor did not grow", p.X)
		}
		if p.LaunchS != pts[0].LaunchS || p.LaunchS <= 0 {
			t.Errorf("batch %v: launch floor %v", p.X, p.LaunchS)
		}
	}
	// Whole model: the floors are sums over nodes; the estimate is the
	// sum of per-node maxima, so it is at least the largest summed floor.
	pts, _, err = timeRooflinePoints("zoo:resnet18", &f, &timeRooflineFlags{on: true, sweep: "batch=1,8"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		if p.TimeS < max(p.ComputeS, p.MemoryS) {
			t.Errorf("batch %v: estimate %v below a floor", p.X, p.TimeS)
		}
	}
}

// TestTimeRooflineCLI: the chart is written, byte-identical across runs;
// bad flags are one-line errors with exit 2.
func TestTimeRooflineCLI(t *testing.T) {
	dir := t.TempDir()
	var svgs [2][]byte
	for i := range svgs {
		p := filepath.Join(dir, "t"+itoa64(int64(i))+".svg")
		code, _, errs := runCLI(t, "roofline", "zoo:lstm-ptb", "--gpu", "V100", "--time", "--sweep", "batch=1..64", "--node", "/rnn/LSTM", "-o", p)
		if code != 0 {
			t.Fatal(errs)
		}
		svgs[i], _ = os.ReadFile(p)
	}
	if len(svgs[0]) == 0 || !bytes.Equal(svgs[0], svgs[1]) {
		t.Fatal("no chart, or two runs differ")
	}
	for _, args := range [][]string{
		{"--time"},
		{"--sweep", "batch=1..4"},
		{"--time", "--sweep", "batch"},
		{"--time", "--sweep", "batch=3..4"},
		{"--time", "--sweep", "batch=1..4", "--node", "nosuch"},
	} {
		code, out, errs := runCLI(t, append([]string{"roofline", "zoo:alexnet", "--gpu", "V100", "-o", filepath.Join(dir, "x.svg")}, args...)...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, %q, %q", args, code, out, errs)
		}
	}
}

// TestTimeRooflinePricesTheRuntime: --time prices what report prices at
// each point (the runtime named, a training step, a power cap) and its
// title names it; before, it priced the default runtime whatever was
// asked.
func TestTimeRooflinePricesTheRuntime(t *testing.T) {
	dir := t.TempDir()
	chart := func(args ...string) string {
		t.Helper()
		p := filepath.Join(dir, "c.svg")
		code, _, errs := runCLI(t, append([]string{"roofline", "zoo:resnet18", "--gpu", "A100", "--time", "--sweep", "batch=1,8", "-o", p, "-q"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	seen := map[string]string{}
	for _, c := range []struct {
		args  []string
		title string
	}{
		{nil, "dtype fp32, runtime tensorrt (fused kernels): time against batch"},
		{[]string{"--runtime", "pytorch"}, "dtype fp32, runtime pytorch (eager kernels): time against batch"},
		{[]string{"--runtime", "graph"}, "dtype fp32, runtime graph (eager kernels): time against batch"},
		{[]string{"--train"}, "dtype fp32, runtime pytorch (eager kernels), training step (optimizer adam, checkpoint none): time against batch"},
		{[]string{"--gpus", "2"}, "dtype fp32, runtime tensorrt (fused kernels), tensor-parallel over 2 GPUs: time against batch"},
		{[]string{"--power-cap", "150"}, "dtype fp32, runtime tensorrt (fused kernels), power cap 150 W: time against batch"},
	} {
		svg := chart(c.args...)
		if !strings.Contains(svg, c.title) {
			t.Errorf("%v: the title does not say %q", c.args, c.title)
		}
		if prev, dup := seen[svg]; dup {
			t.Errorf("%v draws the same chart as %s", c.args, prev)
		}
		seen[svg] = strings.Join(c.args, " ")
	}
	code, _, errs := runCLI(t, "roofline", "zoo:resnet18", "--gpu", "A100", "--time", "--sweep", "batch=1,8", "-o", filepath.Join(dir, "x.svg"), "--power-cap", "5")
	if code != 2 || !strings.Contains(errs, "power") {
		t.Errorf("--power-cap 5: exit %d, %q; want 2 naming the cap", code, errs)
	}
}
