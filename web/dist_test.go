package web

import (
	"io/fs"
	"os"
	"slices"
	"testing"
)

// wasmBudget is the most bytes the WebAssembly build may have: 13.86 MB
// today (Go 1.26; it grew from 9.4 MB with the cost model, 24 KB of it
// for eager memory and module paths, and was raised from 10 MiB, then
// from 11 MiB at 11.37 MB, after the rules for onnxruntime's contrib ops
// (generation loops, packing mode, fused int4, FP4/FP8 weights) took
// 0.43 MB, to keep about a tenth of headroom; then from 12 MiB at 13.05
// MB, when the page took a calibration file: reading it as the CLI does,
// calib.Parse and the YAML decoder behind it, took 0.57 MB, 12.49 → 13.05
// MB; to 15 MiB when it took generate's view of a decoder, package
// generate, 0.67 MB more, and hwdb's reader of a GPU file 0.14 MB). It
// fails a change that
// pulls a large package into the browser build, such as the roofline's
// chart library (gonum plot and its fonts: 17 MB). Of today's build,
// gonum's Cholesky (calib's fitter) is 122 KB and the op table's Doc
// strings 13 KB.
const wasmBudget = 15 << 20

// TestDistComplete checks the embedded app has every file the page loads,
// the build's when it was built (scripts/build_web.sh; CI builds it before
// the tests), and web/dist no other file than the build's and its README:
// the page's files are served from web/static, never from a copy that
// could fall behind it.
func TestDistComplete(t *testing.T) {
	want := []string{"index.html", "app.js", "style.css", "vendor/graphviz.js"}
	if HasWasm() {
		want = append(want, Built...)
	} else {
		t.Log("no WebAssembly build embedded (scripts/build_web.sh makes one): its size is not checked")
	}
	for _, f := range want {
		st, err := fs.Stat(Dist(), f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if st.Size() == 0 {
			t.Errorf("%s is empty", f)
		}
		if f == "onnxcost.wasm" && st.Size() > wasmBudget {
			t.Errorf("onnxcost.wasm is %d bytes, over the %d budget", st.Size(), wasmBudget)
		}
	}
	ents, err := os.ReadDir("dist")
	if err != nil {
		t.Fatal(err)
	}
	allowed := append([]string{"README.md"}, Built...)
	for _, e := range ents {
		if !slices.Contains(allowed, e.Name()) {
			t.Errorf("web/dist holds %s: only the build's %v belong there (the page's files are web/static's)", e.Name(), Built)
		}
	}
	// The page is served as written.
	for _, f := range []string{"index.html", "app.js", "vendor/graphviz.js"} {
		served, err := fs.ReadFile(Dist(), f)
		if err != nil {
			t.Fatal(err)
		}
		onDisk, err := os.ReadFile("static/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if string(served) != string(onDisk) {
			t.Errorf("%s served differs from web/static/%s", f, f)
		}
	}
	for _, p := range []string{"../go.mod", "README.md"} {
		if _, err := Dist().Open(p); err == nil {
			t.Errorf("the app serves %s, which is not the page's", p)
		}
	}
}
