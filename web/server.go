package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onnxcost/onnxcost/web/session"
)

// Preload is what the server offers the page on start: its first
// settings and, with a model, the model.
type Preload struct {
	Name     string // as given on the command line; only its base name is sent
	Data     []byte // nil without a model
	Settings *session.Settings
}

// Config is how the server answers besides its files.
type Config struct {
	// AllowRemote accepts any Host header: the names other machines
	// reach this one by are not known here.
	AllowRemote bool
	// NoWasm answers the page's calls here even when the WebAssembly is
	// embedded (the tests of that path).
	NoWasm bool
	// Version is the tool version the page's calls report and stamp on
	// their reports.
	Version string
}

// MaxModelBytes is the largest model the page may send (/api/open): the
// protobuf limit of one .onnx file.
const MaxModelBytes = 2 << 30

// MaxSettingsBytes bounds the settings JSON of the other calls.
const MaxSettingsBytes = 1 << 20

// Handler serves the embedded app and, when pre is set, the model at
// /preload.onnx with its name at /preload.json. Without the WebAssembly
// (or with cfg.NoWasm) it answers the page's calls under /api/ (apiServer).
func Handler(pre *Preload, cfg Config) http.Handler {
	app := Dist()
	withWasm := HasWasm() && !cfg.NoWasm
	files := http.FileServerFS(app)
	etags := sync.OnceValue(func() map[string]string { return contentTags(app) })
	packed := newGzipCache(app)
	var info []byte
	if pre != nil {
		m := map[string]any{"settings": pre.Settings}
		if pre.Data != nil {
			// The base name only: the folders above the model say who
			// and where the user is, to any page or proxy that reads it.
			base := filepath.Base(pre.Name)
			m["name"], m["display"] = base, base
		}
		info, _ = json.Marshal(m)
	}
	var calls *apiServer
	if !withWasm {
		calls = &apiServer{models: map[string]*apiModel{}, version: cfg.Version}
	}
	modTime := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostServed(r, cfg.AllowRemote) {
			http.Error(w, "unknown host "+r.Host, http.StatusMisdirectedRequest)
			return
		}
		h := w.Header()
		// The page needs nothing from elsewhere: say so to the browser, so
		// not even a stray link can send the model out. wasm-unsafe-eval
		// lets it compile WebAssembly; inline styles are set by app.js.
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if calls != nil && strings.HasPrefix(r.URL.Path, "/api/") {
			calls.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: only GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		switch r.URL.Path {
		case "/preload.json", "/preload.onnx":
			if pre == nil || (pre.Data == nil && r.URL.Path == "/preload.onnx") {
				http.NotFound(w, r)
				return
			}
			h.Set("Cache-Control", "no-store")
			if strings.HasSuffix(r.URL.Path, ".json") {
				h.Set("Content-Type", "application/json")
				http.ServeContent(w, r, "preload.json", modTime, bytes.NewReader(info))
				return
			}
			h.Set("Content-Type", "application/octet-stream")
			http.ServeContent(w, r, "preload.onnx", modTime, bytes.NewReader(pre.Data))
			return
		}
		// The page asks for onnxcost.wasm and, on a 404, calls /api/.
		if !withWasm && slices.Contains(Built, strings.TrimPrefix(r.URL.Path, "/")) {
			http.NotFound(w, r)
			return
		}
		// An embedded file has no modification time; its content hash lets
		// the browser keep it (and Chromium its compiled WebAssembly) and
		// ask again cheaply (304) on the next visit, never using a stale copy.
		name := strings.TrimPrefix(r.URL.Path, "/")
		if tag, ok := etags()[name]; ok {
			h.Set("ETag", tag)
			h.Set("Cache-Control", "no-cache")
		}
		if packed.worth(name) {
			// A cache between here and the browser must not hand the
			// compressed copy to a client that cannot read it, or the
			// reverse.
			h.Add("Vary", "Accept-Encoding")
			if acceptsGzip(r.Header.Get("Accept-Encoding")) {
				if gz := packed.get(name); gz != nil {
					h.Set("ETag", gz.etag)
					h.Set("Content-Type", gz.ctype)
					// Ranges count bytes of the compressed copy, the
					// representation this ETag names (RFC 9110 §14.1.2).
					http.ServeContent(&encoded{ResponseWriter: w, coding: "gzip"}, r, name, time.Time{}, bytes.NewReader(gz.data))
					return
				}
			}
		}
		files.ServeHTTP(w, r)
	})
}

// hostServed says whether the request names this server: with a loopback
// listener, a loopback name or address at the port served. A web page
// whose DNS name is rebound to 127.0.0.1 reaches the port, but its
// requests still name its own host, and get nothing.
func hostServed(r *http.Request, allowRemote bool) bool {
	if allowRemote {
		return true
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "80"
	}
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, lport, err := net.SplitHostPort(local.String()); err == nil && lport != port {
			return false
		}
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// apiServer answers the page's calls (web/session) when the binary has no
// WebAssembly build: POST /api/open with the model's bytes as the body and
// its name in ?name=, answered with a handle for it; POST /api/FN?model=
// HANDLE with the settings JSON as the body. Answers are the JSON the
// WebAssembly gives. A handle the server no longer holds gets 410, and the
// page opens the model again.
type apiServer struct {
	mu      sync.Mutex
	models  map[string]*apiModel
	seq     int
	version string
}

// apiModel is one model the page opened. Estimates rewrite a loaded
// graph, so one model's calls run one at a time.
type apiModel struct {
	mu   sync.Mutex
	s    *session.Session
	used int // apiServer.seq at the last call
}

// MaxModels is how many opened models the server keeps (each as its
// bytes): a page holds one, a few tabs a few.
const MaxModels = 4

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "the page's calls are POSTs", http.StatusMethodNotAllowed)
		return
	}
	// Another origin's page may post here (a form or a no-cors fetch
	// reaches a loopback port): only this origin's page may.
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		http.Error(w, "cross-origin call refused", http.StatusForbidden)
		return
	}
	fn := strings.TrimPrefix(r.URL.Path, "/api/")
	if fn == "version" {
		v, _ := json.Marshal(a.version)
		answer(w, http.StatusOK, string(v))
		return
	}
	if fn != "open" && !session.IsCall(fn) {
		http.NotFound(w, r)
		return
	}
	limit := int64(MaxSettingsBytes)
	if fn == "open" {
		limit = MaxModelBytes
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		code := http.StatusBadRequest
		if errors.As(err, new(*http.MaxBytesError)) {
			code = http.StatusRequestEntityTooLarge
			err = fmt.Errorf("over %d bytes", limit)
		}
		answer(w, code, session.ErrorJSON(fmt.Errorf("%s: %v", fn, err)))
		return
	}
	if fn == "open" {
		name := r.URL.Query().Get("name")
		s, err := session.Open(name, body, a.version)
		extra := map[string]any{}
		if err == nil {
			extra["model"] = a.keep(s)
		}
		answer(w, http.StatusOK, session.Opened(s, err, extra))
		return
	}
	var m *apiModel
	if id := r.URL.Query().Get("model"); id != "" {
		if m = a.find(id); m == nil {
			answer(w, http.StatusGone, session.ErrorJSON(errors.New("the model is no longer open here; open it again")))
			return
		}
		m.mu.Lock()
		defer m.mu.Unlock()
	}
	var s *session.Session
	if m != nil {
		s = m.s
	}
	answer(w, http.StatusOK, session.Call(fn, s, body))
}

// keep holds an opened model, dropping the least recently used beyond
// MaxModels, and returns its handle.
func (a *apiServer) keep(s *session.Session) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	id := fmt.Sprintf("%d", a.seq)
	a.models[id] = &apiModel{s: s, used: a.seq}
	for len(a.models) > MaxModels {
		old := ""
		for k, m := range a.models {
			if old == "" || m.used < a.models[old].used {
				old = k
			}
		}
		delete(a.models, old)
	}
	return id
}

func (a *apiServer) find(id string) *apiModel {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.models[id]
	if m != nil {
		a.seq++
		m.used = a.seq
	}
	return m
}

func answer(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	io.WriteString(w, body)
}

// contentTags are strong ETags of the app's files, by path ("" is the
// index page): web/static's (listed by walking the app) and the build's.
func contentTags(app fs.FS) map[string]string {
	tags := map[string]string{}
	add := func(p string) {
		if b, err := fs.ReadFile(app, p); err == nil {
			sum := sha256.Sum256(b)
			tags[p] = `"` + hex.EncodeToString(sum[:16]) + `"`
		}
	}
	_ = fs.WalkDir(app, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			add(p)
		}
		return nil
	})
	for _, f := range Built {
		add(f)
	}
	tags[""] = tags["index.html"]
	return tags
}

// minGzip is the smallest file worth compressing: below it, the
// headers and a gzip frame cost about what compression saves.
const minGzip = 1 << 10

// gzipCache holds the gzip-compressed copies of the app's larger files,
// each compressed on its first request and kept: the files are embedded,
// so a copy never goes stale, and compressing the WebAssembly (about
// 10 MB) on every visit would cost a CPU-second each time.
type gzipCache struct {
	app   fs.FS
	files sync.Map // name → func() *gzipped
}

type gzipped struct {
	data  []byte
	etag  string
	ctype string
}

func newGzipCache(app fs.FS) *gzipCache { return &gzipCache{app: app} }

// worth says whether name is a file served compressed to a client that
// takes gzip: an app file of text or WebAssembly of at least minGzip
// bytes. It reads only the file's size and name, so that a request that
// will not be compressed never waits for compression.
func (c *gzipCache) worth(name string) bool {
	switch name {
	case "":
		name = "index.html"
	case "index.html":
		return false // the file server redirects it to "/"
	}
	switch path.Ext(name) {
	case ".js", ".wasm", ".css", ".html", ".json", ".svg":
	default:
		return false
	}
	st, err := fs.Stat(c.app, name)
	return err == nil && !st.IsDir() && st.Size() >= minGzip
}

// get returns name's compressed copy, compressing it once; nil when
// compression would not make it smaller.
func (c *gzipCache) get(name string) *gzipped {
	if name == "" {
		name = "index.html"
	}
	f, _ := c.files.LoadOrStore(name, sync.OnceValue(func() *gzipped {
		b, err := fs.ReadFile(c.app, name)
		if err != nil {
			return nil
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level: no error
		zw.Write(b)
		zw.Close()
		if buf.Len() >= len(b) {
			return nil
		}
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" {
			ctype = http.DetectContentType(b)
		}
		sum := sha256.Sum256(buf.Bytes())
		// Its own tag: a cache or browser that holds one encoding must
		// not revalidate the other with it.
		return &gzipped{data: buf.Bytes(), etag: `"` + hex.EncodeToString(sum[:16]) + `-gzip"`, ctype: ctype}
	}))
	return f.(func() *gzipped)()
}

// encoded marks the answer with its Content-Encoding only as its header
// is written: http.ServeContent leaves out Content-Length when it sees
// one, as it would be the length before some later encoding, and a
// browser shows no download progress without it. An error (a range past
// the end) goes without, being plain text.
type encoded struct {
	http.ResponseWriter
	coding string
	wrote  bool
}

func (e *encoded) WriteHeader(code int) {
	if !e.wrote {
		e.wrote = true
		if code < 300 || code == http.StatusNotModified {
			e.Header().Set("Content-Encoding", e.coding)
		}
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *encoded) Write(b []byte) (int, error) {
	if !e.wrote {
		e.WriteHeader(http.StatusOK)
	}
	return e.ResponseWriter.Write(b)
}

// acceptsGzip reads an Accept-Encoding header (RFC 9110 §12.5.3): gzip
// (or x-gzip, or *) listed without q=0.
func acceptsGzip(header string) bool {
	gz, star := -1.0, -1.0
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					f = 0
				}
				q = f
			}
		}
		switch strings.ToLower(strings.TrimSpace(coding)) {
		case "gzip", "x-gzip":
			gz = max(gz, q)
		case "*":
			star = q
		}
	}
	if gz >= 0 {
		return gz > 0
	}
	return star > 0
}
