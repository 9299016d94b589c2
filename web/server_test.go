package web

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/internal/servetest"
)

// TestServeHandler: the app, the preloaded model, and nothing writable.
func TestServeHandler(t *testing.T) {
	m := filepath.Join("..", "testdata", "models", "alexnet.onnx")
	model, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	pre := &Preload{Name: m, Data: model}
	srv := httptest.NewServer(Handler(pre, Config{}))
	defer srv.Close()
	get := func(path string) (*http.Response, []byte) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	if resp, b := get("/"); resp.StatusCode != 200 || !bytes.Contains(b, []byte("app.js")) {
		t.Errorf("/: %d %q", resp.StatusCode, b)
	}
	// The page finds out which way its calls go by asking for the wasm.
	resp, _ := get("/onnxcost.wasm")
	if HasWasm() && resp.Header.Get("Content-Type") != "application/wasm" {
		t.Errorf("onnxcost.wasm served as %q", resp.Header.Get("Content-Type"))
	}
	if !HasWasm() && resp.StatusCode != http.StatusNotFound {
		t.Errorf("onnxcost.wasm not built, but served: %d", resp.StatusCode)
	}
	if resp, b := get("/preload.onnx"); resp.StatusCode != 200 || !bytes.Equal(b, model) {
		t.Errorf("/preload.onnx: %d, %d bytes", resp.StatusCode, len(b))
	}
	if _, b := get("/preload.json"); !strings.Contains(string(b), `"display":"alexnet.onnx"`) {
		t.Errorf("/preload.json: %s", b)
	}
	resp, err = http.Post(srv.URL+"/preload.onnx", "application/octet-stream", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
	// Without a model there is nothing to preload.
	srv2 := httptest.NewServer(Handler(nil, Config{}))
	defer srv2.Close()
	if resp, err := http.Get(srv2.URL + "/preload.json"); err != nil || resp.StatusCode != 404 {
		t.Errorf("no model: /preload.json %v %v", resp.StatusCode, err)
	}
}

// TestServeRevalidates: every file of the app carries a content ETag, so
// a second visit gets 304 (the browser keeps the WebAssembly it compiled)
// while a changed binary's files are fetched again.
func TestServeRevalidates(t *testing.T) {
	srv := httptest.NewServer(Handler(nil, Config{}))
	defer srv.Close()
	paths := []string{"/", "/app.js", "/vendor/graphviz.js"}
	if HasWasm() {
		paths = append(paths, "/onnxcost.wasm", "/wasm_exec.js")
	}
	for _, p := range paths {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		tag := resp.Header.Get("ETag")
		if resp.StatusCode != 200 || tag == "" || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s: %d, ETag %q, Cache-Control %q", p, resp.StatusCode, tag, resp.Header.Get("Cache-Control"))
			continue
		}
		req, _ := http.NewRequest("GET", srv.URL+p, nil)
		req.Header.Set("If-None-Match", tag)
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("%s with If-None-Match %s: %d, want 304", p, tag, resp.StatusCode)
		}
	}
}

// TestServeRefusesOtherHostsAndOrigins: a request naming another host
// (a DNS name rebound to the loopback address) gets nothing, not even the
// preloaded model; a call posted from another origin is refused.
func TestServeRefusesOtherHostsAndOrigins(t *testing.T) {
	m := filepath.Join("..", "testdata", "models", "alexnet.onnx")
	model, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	pre := &Preload{Name: m, Data: model}
	srv := httptest.NewServer(Handler(pre, Config{NoWasm: true}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1:1", "localhost.evil.example:" + port, "10.0.0.1:" + port} {
		for _, p := range []string{"/", "/preload.onnx", "/preload.json", "/app.js"} {
			if code, _ := servetest.Send(t, srv, "GET", p, nil, map[string]string{"Host": host}); code != http.StatusMisdirectedRequest {
				t.Errorf("GET %s with Host %s: %d, want 421", p, host, code)
			}
		}
		if code, _ := servetest.Post(t, srv, "/api/version", nil, map[string]string{"Host": host}); code != http.StatusMisdirectedRequest {
			t.Errorf("POST /api/version with Host %s: %d, want 421", host, code)
		}
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "LOCALHOST:" + port} {
		if code, _ := servetest.Send(t, srv, "GET", "/preload.json", nil, map[string]string{"Host": host}); code != 200 {
			t.Errorf("GET /preload.json with Host %s: %d, want 200", host, code)
		}
	}
	same := "http://127.0.0.1:" + port
	for origin, want := range map[string]int{"": 200, same: 200, "http://evil.example": http.StatusForbidden,
		"http://localhost:" + port: http.StatusForbidden, "null": http.StatusForbidden} {
		h := map[string]string{}
		if origin != "" {
			h["Origin"] = origin
		}
		if code, _ := servetest.Post(t, srv, "/api/version", nil, h); code != want {
			t.Errorf("POST with Origin %q: %d, want %d", origin, code, want)
		}
	}
	// AllowRemote serves the names other machines use.
	open := httptest.NewServer(Handler(pre, Config{AllowRemote: true}))
	defer open.Close()
	if code, _ := servetest.Send(t, open, "GET", "/preload.json", nil, map[string]string{"Host": "gpu-box.lan:8080"}); code != 200 {
		t.Errorf("AllowRemote, Host gpu-box.lan: %d, want 200", code)
	}
}

// fetchRaw sends method to path with the given headers and returns the
// answer as sent: the transport's own gzip handling is off, so that the
// test sees the Content-Encoding and the bytes on the wire.
func fetchRaw(t *testing.T, srv *httptest.Server, method, path string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestServeCompressed: a browser that takes gzip gets the larger files
// compressed (the largest at under 40% of its size when it is the
// WebAssembly; the vendored Graphviz holds its own WebAssembly already
// compressed, as text, and shrinks less), decompressing to the very
// bytes; with its own ETag that revalidates, and the same copy each
// time. A client that does not take gzip, or refuses it, gets the file
// as it is.
func TestServeCompressed(t *testing.T) {
	srv := httptest.NewServer(Handler(nil, Config{}))
	defer srv.Close()
	app := Dist()
	paths := []string{"app.js", "vendor/graphviz.js", "style.css"}
	if HasWasm() {
		paths = append(paths, "onnxcost.wasm", "wasm_exec.js")
	}
	largest, largestRatio := "", 0.0
	var largestSize int
	gz := map[string]string{"Accept-Encoding": "gzip, deflate, br, zstd"}
	for _, p := range paths {
		want, err := fs.ReadFile(app, p)
		if err != nil {
			t.Fatal(err)
		}
		resp, b := fetchRaw(t, srv, "GET", "/"+p, gz)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s: %d, Content-Encoding %q, Vary %q", p, resp.StatusCode, resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
			continue
		}
		if ct, plain := resp.Header.Get("Content-Type"), mime.TypeByExtension(path.Ext(p)); ct != plain {
			t.Errorf("%s compressed: Content-Type %q, want %q", p, ct, plain)
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: decompresses to %d bytes (%v), want the file's %d", p, len(got), err, len(want))
		}
		ratio := float64(len(b)) / float64(len(want))
		t.Logf("%s: %d → %d bytes (%.1f%%)", p, len(want), len(b), 100*ratio)
		if len(want) > largestSize {
			largest, largestSize, largestRatio = p, len(want), ratio
		}
		if p == "app.js" && ratio >= 0.4 {
			t.Errorf("app.js compressed to %.1f%% of its size, want under 40%%", 100*ratio)
		}
		if ratio >= 0.9 {
			t.Errorf("%s compressed to %.1f%% of its size", p, 100*ratio)
		}
		// Compressed once: the next answer is the same copy.
		if _, again := fetchRaw(t, srv, "GET", "/"+p, gz); !bytes.Equal(again, b) {
			t.Errorf("%s: a second request got other bytes", p)
		}
		tag := resp.Header.Get("ETag")
		_, plain := fetchRaw(t, srv, "GET", "/"+p, nil)
		plainResp, _ := fetchRaw(t, srv, "HEAD", "/"+p, nil)
		if plainTag := plainResp.Header.Get("ETag"); tag == "" || tag == plainTag {
			t.Errorf("%s: compressed ETag %q, plain %q: want distinct", p, tag, plainTag)
		}
		if !bytes.Equal(plain, want) {
			t.Errorf("%s without Accept-Encoding: %d bytes, want the file's %d", p, len(plain), len(want))
		}
		for _, ae := range []string{"", "identity", "gzip;q=0", "*;q=0", "br", "gzip;q=0, *"} {
			resp, b := fetchRaw(t, srv, "GET", "/"+p, map[string]string{"Accept-Encoding": ae})
			if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(b, want) {
				t.Errorf("%s with Accept-Encoding %q: Content-Encoding %q, %d bytes", p, ae, resp.Header.Get("Content-Encoding"), len(b))
			}
			if resp.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("%s with Accept-Encoding %q: Vary %q", p, ae, resp.Header.Get("Vary"))
			}
		}
		// Revalidation: each variant's tag gets 304 for its own variant.
		for _, c := range []struct {
			h   map[string]string
			tag string
		}{{map[string]string{"Accept-Encoding": "gzip", "If-None-Match": tag}, tag}, {map[string]string{"If-None-Match": plainResp.Header.Get("ETag")}, ""}} {
			if resp, _ := fetchRaw(t, srv, "GET", "/"+p, c.h); resp.StatusCode != http.StatusNotModified {
				t.Errorf("%s %v: %d, want 304", p, c.h, resp.StatusCode)
			}
		}
		// The plain tag does not revalidate the compressed copy.
		if resp, _ := fetchRaw(t, srv, "GET", "/"+p, map[string]string{"Accept-Encoding": "gzip", "If-None-Match": plainResp.Header.Get("ETag")}); resp.StatusCode != 200 {
			t.Errorf("%s: compressed request with the plain ETag: %d, want 200", p, resp.StatusCode)
		}
		// HEAD: the compressed copy's headers and length, no body.
		head, hb := fetchRaw(t, srv, "HEAD", "/"+p, gz)
		if head.StatusCode != 200 || len(hb) != 0 || head.ContentLength != int64(len(b)) || head.Header.Get("ETag") != tag {
			t.Errorf("%s HEAD: %d, %d body bytes, length %d (want %d), ETag %q", p, head.StatusCode, len(hb), head.ContentLength, len(b), head.Header.Get("ETag"))
		}
		// A range counts bytes of the representation sent: the compressed
		// copy when gzip is taken, the file otherwise.
		rr, rb := fetchRaw(t, srv, "GET", "/"+p, map[string]string{"Accept-Encoding": "gzip", "Range": "bytes=10-99"})
		if rr.StatusCode != http.StatusPartialContent || !bytes.Equal(rb, b[10:100]) || rr.Header.Get("Content-Range") != fmt.Sprintf("bytes 10-99/%d", len(b)) {
			t.Errorf("%s compressed range: %d, %q, %d bytes", p, rr.StatusCode, rr.Header.Get("Content-Range"), len(rb))
		}
		rr, rb = fetchRaw(t, srv, "GET", "/"+p, map[string]string{"Range": "bytes=10-99"})
		if rr.StatusCode != http.StatusPartialContent || !bytes.Equal(rb, want[10:100]) || rr.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s plain range: %d, %d bytes, Content-Encoding %q", p, rr.StatusCode, len(rb), rr.Header.Get("Content-Encoding"))
		}
		// If-Range with the other variant's tag: the whole compressed copy.
		rr, rb = fetchRaw(t, srv, "GET", "/"+p, map[string]string{"Accept-Encoding": "gzip", "Range": "bytes=10-99", "If-Range": plainResp.Header.Get("ETag")})
		if rr.StatusCode != 200 || !bytes.Equal(rb, b) {
			t.Errorf("%s If-Range with the plain tag: %d, %d bytes", p, rr.StatusCode, len(rb))
		}
	}
	if largest == "onnxcost.wasm" && largestRatio >= 0.4 {
		t.Errorf("%s, the largest file, compressed to %.1f%% of its size, want under 40%%", largest, 100*largestRatio)
	}
	// The index page too, at "/".
	if resp, _ := fetchRaw(t, srv, "GET", "/", gz); resp.Header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("/: Content-Encoding %q, Content-Type %q", resp.Header.Get("Content-Encoding"), resp.Header.Get("Content-Type"))
	}
	// A range past the end: an error, in plain text.
	if resp, _ := fetchRaw(t, srv, "GET", "/app.js", map[string]string{"Accept-Encoding": "gzip", "Range": "bytes=9999999-"}); resp.StatusCode != http.StatusRequestedRangeNotSatisfiable || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("range past the end: %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	// Small files and what is not text go as they are.
	for _, p := range []string{"/vendor/README.md", "/vendor/graphviz.LICENSE"} {
		if resp, _ := fetchRaw(t, srv, "GET", p, gz); resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: %d, Content-Encoding %q", p, resp.StatusCode, resp.Header.Get("Content-Encoding"))
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "x-gzip": true, "deflate, gzip;q=0.5": true, "gzip;q=0": false,
		"gzip; q=0.0": false, "*": true, "*;q=0": false, "gzip;q=0, *": false, "br, *;q=0.1": true, "identity": false,
		"br": false, "gzip;q=bogus": false,
	} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
}
