package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/internal/console"
	"github.com/onnxcost/onnxcost/internal/servetest"
	"github.com/onnxcost/onnxcost/web"
	"github.com/onnxcost/onnxcost/web/session"
)

// canonJSON re-encodes a JSON document so two encodings of the same
// values compare equal byte for byte.
func canonJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSessionMatchesCLI holds the browser build's pipeline (web/session)
// to the CLI: for every fixture and several settings, its report is the
// JSON `report --format json` prints, node for node.
func TestSessionMatchesCLI(t *testing.T) {
	models, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "models", "*.onnx"))
	if err != nil || len(models) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	cases := []struct {
		args []string
		st   session.Settings
	}{
		{[]string{"--gpu", "T4"}, session.Settings{GPU: "T4"}},
		{[]string{"--gpu", "A100-SXM4-80GB", "--batch", "8", "--dtype", "fp16"}, session.Settings{GPU: "A100-SXM4-80GB", Batch: 8, DType: "fp16"}},
		{[]string{"--gpu", "H100-SXM5-80GB", "--plan", "unfused", "--dim", "seq=64"}, session.Settings{GPU: "H100-SXM5-80GB", Plan: "unfused", Dims: map[string]int64{"seq": 64}}},
		// The runtime, training, power and multi-GPU controls.
		{[]string{"--gpu", "A100-SXM4-80GB", "--runtime", "pytorch", "--train", "--optimizer", "sgd", "--batch", "4"},
			session.Settings{GPU: "A100-SXM4-80GB", Runtime: "pytorch", Train: true, Optimizer: "sgd", Batch: 4}},
		{[]string{"--gpu", "H100-SXM5-80GB", "--runtime", "tensorrt", "--power-cap", "400", "--sm-clock", "1500", "--gpus", "4"},
			session.Settings{GPU: "H100-SXM5-80GB", Runtime: "tensorrt", PowerCap: 400, SMClock: 1500, GPUs: 4}},
		{[]string{"--gpu", "A100-SXM4-80GB", "--train", "--dtype", "bf16", "--optimizer", "adamw", "--checkpoint", "sqrt", "--gpus", "2"},
			session.Settings{GPU: "A100-SXM4-80GB", Train: true, DType: "bf16", Optimizer: "adamw", Checkpoint: "sqrt", GPUs: 2}},
		// An epoch of --samples, over data-parallel replicas.
		{[]string{"--gpu", "A100-SXM4-80GB", "--train", "--batch", "4", "--data-parallel", "2", "--samples", "1000"},
			session.Settings{GPU: "A100-SXM4-80GB", Train: true, Batch: 4, DataParallel: 2, Samples: 1000}},
	}
	compared := 0
	for _, m := range models {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		s, err := session.Open(m, data, version)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		for _, c := range cases {
			args := append([]string{"report", m, "--format", "json"}, c.args...)
			code, out, errs := runCLI(t, args...)
			r, err := s.Estimate(c.st)
			if code != 0 {
				// The page must refuse what the CLI refuses, with its line.
				if err == nil || !strings.Contains(errs, err.Error()) {
					t.Errorf("%s: CLI exit %d (%s), session error %v", strings.Join(args, " "), code, strings.TrimSpace(errs), err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: session: %v", strings.Join(args, " "), err)
				continue
			}
			var want report.Report
			if err := json.Unmarshal([]byte(out), &want); err != nil {
				t.Fatal(err)
			}
			if got, w := canonJSON(t, r), canonJSON(t, &want); got != w {
				t.Errorf("%s: the session's report differs from the CLI's", strings.Join(args, " "))
			}
			compared++
		}
	}
	// Refusals compare too, but most cases must produce a report.
	if compared < 2*len(models) {
		t.Errorf("only %d of %d cases produced a report", compared, len(models)*len(cases))
	}
	t.Logf("%d reports identical to the CLI's", compared)
}

// TestSessionCompareAndGPUsMatchCLI checks the page's fused-vs-unfused
// table against `compare --format json`, and its GPU table rows against
// `report --gpu ROW`.
func TestSessionCompareAndGPUsMatchCLI(t *testing.T) {
	m := fixture(t, "resnet50.onnx")
	data, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(m, data, version)
	if err != nil {
		t.Fatal(err)
	}
	st := session.Settings{GPU: "T4", Batch: 4}
	code, out, errs := runCLI(t, "compare", m, "--gpu", "T4", "--batch", "4", "--format", "json")
	if code != 0 {
		t.Fatalf("compare: %s", errs)
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(out), &want); err != nil {
		t.Fatal(err)
	}
	c, err := s.Compare(st)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(canonJSON(t, c)), &got); err != nil {
		t.Fatal(err)
	}
	if canonJSON(t, got) != canonJSON(t, want) {
		t.Errorf("the session's comparison differs from 'compare --format json'")
	}
	rows, err := s.GPUs(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 5 {
		t.Fatalf("%d GPU rows", len(rows))
	}
	for _, i := range []int{0, len(rows) / 2, len(rows) - 1} {
		r := rows[i]
		code, out, errs := runCLI(t, "report", m, "--gpu", r.GPU, "--batch", "4", "--format", "json")
		if code != 0 {
			if r.Err == "" {
				t.Errorf("%s: CLI fails (%s) but the row has totals", r.GPU, errs)
			}
			continue
		}
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if r.Totals == nil || !reflect.DeepEqual(*r.Totals, rep.Totals) {
			t.Errorf("%s: GPU row totals %+v, CLI %+v", r.GPU, r.Totals, rep.Totals)
		}
	}
}

func TestServeRefusesRemoteAndBadModels(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "192.168.1.1:80"} {
		code, _, errs := runCLI(t, "serve", "--addr", addr)
		if code != 2 || !strings.Contains(errs, "not a loopback address") {
			t.Errorf("serve --addr %s: exit %d, %q", addr, code, errs)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0"} {
		if err := checkLoopback(addr, false); err != nil {
			t.Errorf("%s refused: %v", addr, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.onnx")
	if err := os.WriteFile(bad, []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, want := runCLI(t, "report", bad, "--gpu", "T4")
	code, out, errs := runCLI(t, "serve", "--addr", "127.0.0.1:0", bad)
	if code != 2 || out != "" || errs != want {
		t.Errorf("serve BAD: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errs, want)
	}
}

// TestSessionBadModelsMatchCLI: a bad file dropped on the page gets the
// line `report` prints for it (the page names a file by its name, so the
// CLI runs from the file's folder). The page shows Open's error, or the
// first estimate's when the file reads but cannot be costed.
func TestSessionBadModelsMatchCLI(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(fixture(t, "alexnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(i*7919 + i>>3)
	}
	files := map[string][]byte{
		"empty.onnx": {}, "junk.onnx": junk, "truncated.onnx": good[:len(good)/2], "text.onnx": []byte("not a model\n"),
	}
	bad, _ := filepath.Glob(filepath.Join("testdata", "bad", "*.onnx"))
	for _, p := range bad {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for name, data := range files {
		s, err := session.Open(name, data, version)
		if err == nil {
			_, err = s.Estimate(session.Settings{GPU: "T4"})
		}
		code, out, errs := runCLI(t, "report", name, "--gpu", "T4")
		if code != 2 || out != "" {
			t.Errorf("%s: CLI exit %d, stdout %q", name, code, out)
		}
		if err == nil {
			t.Errorf("%s: the page accepts what the CLI refuses (%s)", name, strings.TrimSpace(errs))
			continue
		}
		if page := "onnxcost: " + console.OneLine(err.Error()); page != strings.TrimSpace(errs) {
			t.Errorf("%s: page %q, CLI %q", name, page, strings.TrimSpace(errs))
		}
	}
}

// TestServeSettingsFlags: serve's runtime, training (accumulation and
// DDP too), --warm, power and --gpus flags become the page's first settings, refused as `report` refuses
// them (same line, exit 2).
func TestServeSettingsFlags(t *testing.T) {
	f := costFlags{gpu: "a100", plan: "fused", runtime: "tensorrt", powerCap: 300, smClock: 1200, gpus: 4, samples: 5000,
		trainFlags: trainFlags{train: true, optimizer: "sgd", gradAccum: 4, dataParallel: 2}}
	st, err := f.pageSettings()
	if err != nil {
		t.Fatal(err)
	}
	want := session.Settings{GPU: "A100-SXM4-80GB", Plan: "fused", Runtime: "tensorrt", Train: true, Optimizer: "sgd",
		GradAccum: 4, DataParallel: 2, PowerCap: 300, SMClock: 1200, GPUs: 4, Samples: 5000, Dims: map[string]int64{}}
	if canonJSON(t, st) != canonJSON(t, &want) {
		t.Errorf("page settings %+v, want %+v", *st, want)
	}
	w := costFlags{gpu: "a100", warm: true, trainFlags: trainFlags{gradAccum: 1, dataParallel: 1}}
	if st, err := w.pageSettings(); err != nil || !st.Warm || st.GradAccum != 0 || st.DataParallel != 0 {
		t.Errorf("serve --warm: page settings %+v (%v)", st, err)
	}
	m := fixture(t, "alexnet.onnx")
	for _, flags := range [][]string{
		{"--gpu", "A100", "--runtime", "nope"},
		{"--gpu", "A100", "--power-cap", "5"},
		{"--gpu", "A100", "--sm-clock", "99999"},
		{"--gpu", "A100", "--optimizer", "nope"},
		{"--gpu", "A100", "--gpus", "0"},
		{"--gpu", "A100", "--train", "--warm"},
		{"--gpu", "A100", "--train", "--grad-accum", "0"},
		{"--gpu", "A100", "--train", "--data-parallel", "-1"},
		{"--gpu", "A100", "--samples", "1000"},
		{"--gpu", "A100", "--train", "--samples", "0"},
		{"--gpu", "A100", "--train", "--samples", "-5"},
	} {
		_, _, want := runCLI(t, append([]string{"report", m}, flags...)...)
		// A flag parse error names the command.
		want = strings.NewReplacer("onnxcost: report:", "onnxcost: serve:", "onnxcost report --help", "onnxcost serve --help").Replace(want)
		code, out, errs := runCLI(t, append([]string{"serve", "--addr", "127.0.0.1:0", m}, flags...)...)
		if code != 2 || out != "" || errs != want {
			t.Errorf("serve %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", flags, code, out, errs, want)
		}
	}
}

// TestServeAPI: without the WebAssembly, serve answers the page's calls
// with the JSON the wasm gives: the CLI's report, and its error lines.
func TestServeAPI(t *testing.T) {
	srv := httptest.NewServer(web.Handler(nil, web.Config{NoWasm: true, Version: version}))
	defer srv.Close()
	for _, p := range web.Built {
		if code, _ := servetest.Send(t, srv, "GET", "/"+p, nil, nil); code != http.StatusNotFound {
			t.Errorf("/%s with the server's answers: %d, want 404 (the page's cue to call /api/)", p, code)
		}
	}
	if code, v := servetest.Post(t, srv, "/api/version", nil, nil); code != 200 || v != `"`+version+`"` {
		t.Errorf("/api/version: %d %s", code, v)
	}
	m := fixture(t, "alexnet.onnx")
	data, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	// Named as the CLI names it: by the path it was given.
	code, out := servetest.Post(t, srv, "/api/open?name="+url.QueryEscape(m), data, nil)
	var opened struct {
		Name, Model string
		Symbols     []session.Symbol
	}
	if err := json.Unmarshal([]byte(out), &opened); code != 200 || err != nil || opened.Name != m || opened.Model == "" {
		t.Fatalf("/api/open: %d %s (%v)", code, out, err)
	}
	code, out = servetest.Post(t, srv, "/api/estimate?model="+opened.Model, []byte(`{"gpu":"T4","batch":2}`), nil)
	var got struct{ Report *report.Report }
	if err := json.Unmarshal([]byte(out), &got); code != 200 || err != nil || got.Report == nil {
		t.Fatalf("/api/estimate: %d %.300s (%v)", code, out, err)
	}
	var want report.Report
	runJSON(t, &want, "report", "--format", "json", m, "--gpu", "T4", "--batch", "2")
	if canonJSON(t, got.Report) != canonJSON(t, &want) {
		t.Errorf("/api/estimate differs from 'report --format json'")
	}
	// The CLI's line for the CLI's mistake.
	_, out = servetest.Post(t, srv, "/api/estimate?model="+opened.Model, []byte(`{"gpu":"A100X"}`), nil)
	_, _, errs := runCLI(t, "report", m, "--gpu", "A100X")
	if want := session.ErrorJSON(errors.New(strings.TrimPrefix(strings.TrimSpace(errs), "onnxcost: "))); out != want {
		t.Errorf("unknown GPU: %s, want %s", out, want)
	}
	for _, c := range []struct {
		method, path, body string
		code               int
		has                string
	}{
		{"POST", "/api/estimate", "{}", 200, "no model is open"},
		{"POST", "/api/estimate?model=nosuch", "{}", http.StatusGone, "open it again"},
		{"POST", "/api/estimate?model=" + opened.Model, "{", 200, "bad settings"},
		{"POST", "/api/nosuch", "{}", http.StatusNotFound, ""},
		{"GET", "/api/estimate", "", http.StatusMethodNotAllowed, ""},
		{"POST", "/api/gpus?model=" + opened.Model, strings.Repeat(" ", web.MaxSettingsBytes+1), http.StatusRequestEntityTooLarge, "over"},
		{"POST", "/api/open?name=bad.onnx", "not a model", 200, `"error":"onnxcost: bad.onnx`},
	} {
		code, out := servetest.Send(t, srv, c.method, c.path, []byte(c.body), nil)
		if code != c.code || !strings.Contains(out, c.has) {
			t.Errorf("%s %s: %d %.200q, want %d and %q", c.method, c.path, code, out, c.code, c.has)
		}
	}
	// Only a few models are kept: the oldest is dropped (the page sends
	// it again on 410).
	for range web.MaxModels {
		servetest.Post(t, srv, "/api/open?name=alexnet.onnx", data, nil)
	}
	if code, _ := servetest.Post(t, srv, "/api/choices?model="+opened.Model, nil, nil); code != http.StatusGone {
		t.Errorf("a model opened %d models ago: %d, want 410", web.MaxModels, code)
	}
	// With the WebAssembly embedded, nothing is answered: the page runs it.
	if web.HasWasm() {
		srv := httptest.NewServer(web.Handler(nil, web.Config{Version: version}))
		defer srv.Close()
		if code, _ := servetest.Post(t, srv, "/api/version", nil, nil); code != http.StatusMethodNotAllowed {
			t.Errorf("/api/ with the wasm embedded: %d, want 405", code)
		}
	}
}
