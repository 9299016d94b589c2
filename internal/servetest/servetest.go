// Package servetest sends the requests the tests of `onnxcost serve` make
// (web's handler tests and the command's API tests), so both speak to the
// server the same way: a Host header among the headers sets the request's
// Host, as a browser behind a rebound DNS name would.
package servetest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Post sends body to the server at path with the given headers (Host
// among them) and returns the status and the answer.
func Post(t testing.TB, srv *httptest.Server, path string, body []byte, header map[string]string) (int, string) {
	t.Helper()
	return Send(t, srv, "POST", path, body, header)
}

// Send is Post with any method.
func Send(t testing.TB, srv *httptest.Server, method, path string, body []byte, header map[string]string) (int, string) {
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
