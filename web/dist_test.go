package web

import (
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/web/buildhash"
)

// TestDistFresh fails when the committed web/dist was built from other
// sources than the checkout's: the binary would serve a stale page.
func TestDistFresh(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool on PATH to list the WebAssembly build's packages")
	}
	want, err := buildhash.Sum("..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("dist/INPUTS")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != want {
		t.Fatalf("web/dist is stale (built from inputs %s, the checkout is %s): run scripts/build_web.sh and commit web/dist",
			strings.TrimSpace(string(got)), want)
	}
}

// wasmBudget is the most bytes the WebAssembly build may have: 8.6 MB
// today (2.3 MB gzipped). It fails a change that pulls a large package
// into the browser build, such as the roofline's chart library (gonum
// plot and its fonts: 17 MB).
const wasmBudget = 10 << 20

// TestDistComplete checks the embedded app has every file the page loads,
// and web/dist only what the build makes: the page's files are served
// from web/static, never from a copy that could fall behind it.
func TestDistComplete(t *testing.T) {
	for _, f := range []string{"index.html", "app.js", "style.css", "wasm_exec.js", "onnxcost.wasm", "vendor/graphviz.js"} {
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
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	want := slices.Clone(Built)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("web/dist holds %v, want only the build's %v (the page's files are web/static's)", got, want)
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
	if _, err := Dist().Open("../go.mod"); err == nil {
		t.Errorf("the app serves a path outside it")
	}
}
