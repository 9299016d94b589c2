package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/web"
)

// setControl sets a settings control of the page as a user would and
// fires its change event: a select's or input's value, or a checkbox's
// state ("on"/"off").
func setControl(sel, value string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => {
		const e = document.querySelector(%q);
		if (e.type === "checkbox") e.checked = %q === "on"; else e.value = %q;
		e.dispatchEvent(new Event("change"));
		return true;
	})()`, sel, value, value), nil)
}

// sameTrain compares the page's training figures (data-total "train.*")
// with the CLI's, exactly.
func sameTrain(t *testing.T, what string, page map[string]float64, tr *report.Train) {
	t.Helper()
	if tr == nil {
		t.Fatalf("%s: the CLI's report has no training step", what)
	}
	m := tr.Memory
	want := map[string]float64{
		"train.step_time_s": tr.StepTimeS, "train.forward_time_s": tr.ForwardTimeS, "train.backward_time_s": tr.BackwardTimeS,
		"train.optimizer_time_s": tr.OptimizerTimeS, "train.forward_flops": tr.ForwardFLOPs, "train.backward_flops": tr.BackwardFLOPs,
		"train.optimizer_flops": tr.OptimizerFLOPs, "train.memory.peak_bytes": m.PeakBytes, "train.memory.tensor_peak_bytes": m.TensorPeakBytes,
		"train.memory.weights_bytes": m.WeightsBytes, "train.memory.master_weights_bytes": m.MasterWeightsBytes,
		"train.memory.gradients_bytes": m.GradientsBytes, "train.memory.optimizer_state_bytes": m.OptimizerStateBytes,
		"train.memory.activations_bytes": m.ActivationsBytes, "train.memory.workspace_bytes": m.WorkspaceBytes,
		"train.memory.runtime_bytes": m.RuntimeBytes,
	}
	for k, w := range want {
		if g, ok := page[k]; !ok {
			t.Errorf("%s: the page shows no %s", what, k)
		} else if g != w {
			t.Errorf("%s: %s on the page %v, CLI %v", what, k, g, w)
		}
	}
}

// samePower compares the page's power, runtime and multi-GPU totals.
func samePower(t *testing.T, what string, page map[string]float64, cli report.Totals) {
	t.Helper()
	want := map[string]float64{"avg_power_w": cli.AvgPowerW, "power_cap_w": cli.PowerCapW, "sm_clock_cap_mhz": cli.SMClockCapMHz}
	if cli.GPUs > 1 {
		want["gpus"] = float64(cli.GPUs)
		want["communication_time_s"] = cli.CommunicationTimeS
		want["per_gpu_peak_memory_bytes"] = cli.PerGPUPeakMemoryBytes
	}
	for k, w := range want {
		if g, ok := page[k]; !ok {
			t.Errorf("%s: the page shows no %s", what, k)
		} else if g != w {
			t.Errorf("%s: %s on the page %v, CLI %v", what, k, g, w)
		}
	}
}

// TestBrowserControls drives the page's runtime, training, power and
// multi-GPU controls in headless Chromium: each setting gives exactly
// `report --format json`'s numbers for the same flags, is kept in the
// URL (a reload with it shows the same report), and re-estimates in
// place: the model is fetched once.
func TestBrowserControls(t *testing.T) {
	exe, model, pre := browserFixture(t)
	var modelFetches atomic.Int32
	h := web.Handler(pre, web.Config{NoWasm: true, Version: version})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/preload.onnx" {
			modelFetches.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx := newBrowser(t, exe, 150*time.Second)

	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/"), waitEstimates(1)); err != nil {
		t.Fatalf("loading the page: %v", err)
	}
	steps := []struct {
		what     string
		controls [][2]string // selector, value, set in order
		args     []string    // the same settings as report flags
	}{
		{"runtime pytorch, train with sgd, batch 4",
			[][2]string{{"#runtime", "pytorch"}, {"#optimizer", "sgd"}, {"#train", "on"}, {"#batch", "4"}},
			[]string{"--gpu", "T4", "--runtime", "pytorch", "--train", "--optimizer", "sgd", "--batch", "4"}},
		{"adamw with sqrt checkpointing on 2 A100s at bf16, 4 micro-batches, 2 DDP replicas",
			[][2]string{{"#gpu", "A100-SXM4-80GB"}, {"#optimizer", "adamw"}, {"#checkpoint", "sqrt"}, {"#dtype", "bf16"}, {"#gpus-n", "2"},
				{"#grad-accum", "4"}, {"#data-parallel", "2"}, {"#samples", "1000"}},
			[]string{"--gpu", "A100-SXM4-80GB", "--runtime", "pytorch", "--train", "--optimizer", "adamw", "--checkpoint", "sqrt", "--batch", "4", "--dtype", "bf16", "--gpus", "2",
				"--grad-accum", "4", "--data-parallel", "2", "--samples", "1000"}},
		// No runtime named: a call under autocast runs in PyTorch, as
		// report prices it (the page once priced the model's TensorRT).
		{"inference under fp16 autocast, the runtime not named",
			[][2]string{{"#train", "off"}, {"#dtype", "fp16-amp"}},
			[]string{"--gpu", "A100-SXM4-80GB", "--batch", "4", "--dtype", "fp16-amp", "--gpus", "2"}},
		{"inference under TensorRT, 300 W cap, 1200 MHz lock, 4 GPUs, warm",
			[][2]string{{"#dtype", "bf16"}, {"#runtime", "tensorrt"}, {"#power-cap", "300"}, {"#sm-clock", "1200"}, {"#gpus-n", "4"}, {"#warm", "on"}},
			// The page keeps its optimizer and checkpoint settings with
			// training off; the CLI refuses training-only flags without
			// --train, and they change nothing here.
			[]string{"--gpu", "A100-SXM4-80GB", "--runtime", "tensorrt", "--batch", "4", "--dtype", "bf16",
				"--power-cap", "300", "--sm-clock", "1200", "--gpus", "4", "--warm"}},
	}
	n := 1
	for _, st := range steps {
		for _, c := range st.controls {
			n++
			if err := chromedp.Run(ctx, setControl(c[0], c[1]), waitEstimates(n)); err != nil {
				t.Fatalf("%s: setting %s to %s: %v", st.what, c[0], c[1], err)
			}
		}
		page, err := pageTotals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cli := cliReport(t, append([]string{model}, st.args...)...)
		sameTotals(t, st.what, page, cli.Totals)
		samePower(t, st.what, page, cli.Totals)
		if cli.Totals.Train != nil {
			sameTrain(t, st.what, page, cli.Totals.Train)
			if e := cli.Totals.Train.Epoch; e != nil {
				var got map[string]string
				if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => { const e = document.querySelector("#epoch"); return e ? {time: e.dataset.time, energy: e.dataset.energy, steps: e.dataset.steps, text: e.textContent} : {}; })()`, &got)); err != nil {
					t.Fatal(err)
				}
				want := map[string]string{"time": fmt.Sprint(e.TimeS), "energy": fmt.Sprint(e.EnergyJ), "steps": fmt.Sprint(e.Steps),
					"text": render.EpochLine(cli.Totals.Train, render.GPUsRunning(cli.Totals))}
				for k, w := range want {
					if got[k] != w {
						t.Errorf("%s: the page's epoch %s %q, CLI %q", st.what, k, got[k], w)
					}
				}
			}
		} else if _, shown := page["train.step_time_s"]; shown {
			t.Errorf("%s: the page still shows a training step", st.what)
		}
		if canonJSON(t, pageReport(t, ctx)) != canonJSON(t, cli) {
			t.Errorf("%s: the page's report JSON differs from 'report --format json %s'", st.what, strings.Join(st.args, " "))
		}
	}
	if got := modelFetches.Load(); got != 1 {
		t.Errorf("the model was fetched %d times; settings must re-estimate without reading it again", got)
	}

	// The URL keeps every setting: a fresh page on it shows the same report.
	var hash string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`location.hash`, &hash)); err != nil {
		t.Fatal(err)
	}
	for _, kv := range []string{"runtime=tensorrt", "power_cap=300", "sm_clock=1200", "gpus=4", "optimizer=adamw", "checkpoint=sqrt", "dtype=bf16", "batch=4",
		"warm=1", "grad_accum=4", "data_parallel=2", "samples=1000"} {
		if !strings.Contains(hash, kv) {
			t.Errorf("the URL hash %q does not record %s", hash, kv)
		}
	}
	if err := chromedp.Run(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(srv.URL+"/"+hash), waitEstimates(1)); err != nil {
		t.Fatalf("reloading with %s: %v", hash, err)
	}
	page, err := pageTotals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := steps[len(steps)-1]
	cli := cliTotals(t, append([]string{model}, last.args...)...)
	sameTotals(t, "reloaded "+hash, page, cli)
	samePower(t, "reloaded "+hash, page, cli)

	// A cap the GPU cannot be set to gets the CLI's line, in the page.
	var shown string
	err = chromedp.Run(ctx, setControl("#power-cap", "5"),
		chromedp.WaitVisible(`body[data-state="error"] #error`),
		chromedp.Evaluate(`document.querySelector("#error").textContent`, &shown))
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "report", model, "--gpu", "A100-SXM4-80GB", "--power-cap", "5")
	if want := strings.TrimSpace(errs); code != 2 || shown != want {
		t.Errorf("power cap 5 W: page %q, CLI (exit %d) %q", shown, code, want)
	}
}

// TestBrowserBadURL: a URL whose gpu or batch the page cannot use keeps
// serve's --gpu and --batch, and the page says which value it dropped,
// in one line, instead of quietly showing another GPU. A GPU named in
// another case or by an alias is the one the CLI takes for it.
func TestBrowserBadURL(t *testing.T) {
	exe, _, pre := browserFixture(t)
	pre.Settings.Batch = 2
	srv := httptest.NewServer(web.Handler(pre, web.Config{NoWasm: true, Version: version}))
	defer srv.Close()
	ctx := newBrowser(t, exe, 120*time.Second)
	for _, c := range []struct {
		hash, gpu string
		batch     int
		notice    []string // in the one line shown; none: no line
	}{
		{"gpu=NoSuchGPU&batch=abc", "T4", 2, []string{"gpu=NoSuchGPU", "T4 (serve's --gpu)", "batch=abc", "batch 2 (serve's --batch)"}},
		{"gpu=NoSuchGPU&batch=8", "T4", 8, []string{"gpu=NoSuchGPU"}},
		{"gpu=h100-sxm5-80gb&batch=-3", "H100-SXM5-80GB", 2, []string{"batch=-3"}},
		{"gpu=h100&batch=4x", "H100-SXM5-80GB", 2, []string{"batch=4x"}},
		{"gpu=A100-SXM4-80GB", "A100-SXM4-80GB", 2, nil},
	} {
		var gpu, notice string
		var batch int
		var hidden bool
		err := chromedp.Run(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(srv.URL+"/#"+c.hash), waitEstimates(1),
			chromedp.Evaluate(`document.querySelector("#gpu").value`, &gpu),
			chromedp.Evaluate(`Number(document.querySelector("#batch").value) || 0`, &batch),
			chromedp.Evaluate(`document.querySelector("#notice").textContent`, &notice),
			chromedp.Evaluate(`document.querySelector("#notice").hidden`, &hidden))
		if err != nil {
			t.Fatalf("#%s: %v", c.hash, err)
		}
		if gpu != c.gpu || batch != c.batch {
			t.Errorf("#%s: the page shows %s, batch %d; want %s, batch %d", c.hash, gpu, batch, c.gpu, c.batch)
		}
		if len(c.notice) == 0 && (!hidden || notice != "") {
			t.Errorf("#%s: notice %q shown, want none", c.hash, notice)
		}
		for _, w := range c.notice {
			if hidden || !strings.Contains(notice, w) {
				t.Errorf("#%s: notice %q (hidden %v), want it to name %q", c.hash, notice, hidden, w)
			}
		}
		if strings.Contains(notice, "\n") {
			t.Errorf("#%s: notice %q: want one line", c.hash, notice)
		}
	}
}
