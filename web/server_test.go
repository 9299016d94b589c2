package web

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// post sends body to the server at path with the given headers (Host
// among them) and returns the status and the answer.
func post(t *testing.T, srv *httptest.Server, path string, body []byte, header map[string]string) (int, string) {
	t.Helper()
	return send(t, srv, "POST", path, body, header)
}

func send(t *testing.T, srv *httptest.Server, method, path string, body []byte, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
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
			if code, _ := send(t, srv, "GET", p, nil, map[string]string{"Host": host}); code != http.StatusMisdirectedRequest {
				t.Errorf("GET %s with Host %s: %d, want 421", p, host, code)
			}
		}
		if code, _ := post(t, srv, "/api/version", nil, map[string]string{"Host": host}); code != http.StatusMisdirectedRequest {
			t.Errorf("POST /api/version with Host %s: %d, want 421", host, code)
		}
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "LOCALHOST:" + port} {
		if code, _ := send(t, srv, "GET", "/preload.json", nil, map[string]string{"Host": host}); code != 200 {
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
		if code, _ := post(t, srv, "/api/version", nil, h); code != want {
			t.Errorf("POST with Origin %q: %d, want %d", origin, code, want)
		}
	}
	// AllowRemote serves the names other machines use.
	open := httptest.NewServer(Handler(pre, Config{AllowRemote: true}))
	defer open.Close()
	if code, _ := send(t, open, "GET", "/preload.json", nil, map[string]string{"Host": "gpu-box.lan:8080"}); code != 200 {
		t.Errorf("AllowRemote, Host gpu-box.lan: %d, want 200", code)
	}
}
