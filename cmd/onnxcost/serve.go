package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/web"
	"github.com/onnxcost/onnxcost/web/session"
	"github.com/spf13/cobra"
)

func init() { register("serve", newServeCmd) }

func newServeCmd(stdout, stderr io.Writer) *cobra.Command {
	var addr string
	var allowRemote bool
	var f costFlags
	c := &cobra.Command{
		Use:   "serve [MODEL.onnx]",
		Short: "Serve the browser app (drop a model, pick a GPU) on a local address",
		Long: `serve runs onnxcost's browser app from this binary: the page runs the same
pipeline as 'report', compiled to WebAssembly, on a model dropped onto it;
the model never leaves the browser. With MODEL the page opens that model
on start (it is served read-only at /preload.onnx). --gpu, --dtype,
--batch, --dim, --plan, --runtime, --train, --optimizer, --checkpoint,
--power-cap, --sm-clock and --gpus set the page's first settings (the URL's
#gpu=...&batch=... wins over them), so the page opens on the numbers
'report MODEL' prints with the same flags. Nothing can be uploaded; the
server only answers GET and HEAD.

The address is loopback (127.0.0.1:8080) by default; a non-loopback
address is refused unless --allow-remote is given, since anyone who can
reach it can read MODEL.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			useGCPercent()
			if err := checkLoopback(addr, allowRemote); err != nil {
				return err
			}
			st, err := f.pageSettings()
			if err != nil {
				return err
			}
			pre := &preload{settings: st}
			if len(args) == 1 {
				if pre, err = readPreload(args[0]); err != nil {
					return err
				}
				pre.settings = st
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageErr("--addr %s: %v", addr, err)
			}
			srv := &http.Server{Handler: serveHandler(pre), ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(stdout, "onnxcost: serving on http://%s/ (Ctrl-C stops)\n", ln.Addr())
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			go func() {
				<-ctx.Done()
				shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_ = srv.Shutdown(shut)
			}()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen on `HOST:PORT` (loopback unless --allow-remote)")
	c.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow a non-loopback --addr (anyone who can reach it can read MODEL)")
	c.Flags().StringVar(&f.gpu, "gpu", "", "the page's first GPU (see 'onnxcost gpus')")
	c.Flags().StringVar(&f.dtype, "dtype", "", "the page's first compute dtype: fp32|tf32|fp16|bf16|fp8|int8")
	c.Flags().Int64Var(&f.batch, "batch", 0, "the page's first batch (binds the leading symbolic dim of every graph input)")
	c.Flags().StringArrayVar(&f.dims, "dim", nil, "the page's first binding of a symbolic dim: `NAME=VALUE` (repeatable)")
	c.Flags().StringVar(&f.plan, "plan", "fused", "the page's first plan: fused|unfused")
	c.Flags().StringVar(&f.runtime, "runtime", "", "the page's first execution profile (see 'onnxcost gpus runtimes')")
	c.Flags().BoolVar(&f.train, "train", false, "the page opens costing one training step")
	c.Flags().StringVar(&f.optimizer, "optimizer", "", "the page's first optimizer with --train (default adam)")
	c.Flags().StringVar(&f.checkpoint, "checkpoint", "", "the page's first activation recomputation with --train (default none)")
	c.Flags().Float64Var(&f.powerCap, "power-cap", 0, "the page's first board power limit in watts (default: the GPU's TDP)")
	c.Flags().Float64Var(&f.smClock, "sm-clock", 0, "the page's first SM clock lock in MHz (default: no lock)")
	f.gpus = 1
	c.Flags().Var(&f.gpus, "gpus", "the page's first tensor-parallel degree")
	return c
}

// pageSettings checks the serve flags that set the page's first settings,
// as `report` checks the same flags.
func (f *costFlags) pageSettings() (*session.Settings, error) {
	if err := checkValue("--dtype", f.dtype, validDTypes...); err != nil {
		return nil, err
	}
	if err := checkValue("--plan", f.plan, "fused", "unfused"); err != nil {
		return nil, err
	}
	if f.batch < 0 {
		return nil, usageErr("--batch must be positive, got %d", f.batch)
	}
	dims, err := parseDims(f.dims)
	if err != nil {
		return nil, err
	}
	if f.runtime != "" {
		if _, err := resolveRuntime(f.runtime, ""); err != nil {
			return nil, err
		}
	}
	// Flags left out stay empty, so the page's own defaults (and its URL)
	// apply; validate would fill them in.
	opt, ckpt := f.optimizer, f.checkpoint
	if err := asUsage(pipeline.CheckTrain(&opt, &ckpt)); err != nil {
		return nil, err
	}
	st := &session.Settings{DType: f.dtype, Batch: f.batch, Dims: dims, Plan: f.plan, Runtime: f.runtime,
		Train: f.train, Optimizer: f.optimizer, Checkpoint: f.checkpoint, PowerCap: f.powerCap, SMClock: f.smClock}
	if f.gpus > 1 {
		st.GPUs = int(f.gpus)
	}
	if f.gpu != "" {
		g, err := resolveGPU(f.gpu, "")
		if err != nil {
			return nil, err
		}
		if err := checkPowerControl(g, f.powerControl()); err != nil {
			return nil, err
		}
		st.GPU = g.Name
	}
	return st, nil
}

// checkLoopback refuses an address other machines could reach, unless
// allowed: an empty host listens on every interface.
func checkLoopback(addr string, allow bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErr("--addr %q: %v", addr, err)
	}
	if allow || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usageErr("--addr %s is not a loopback address; pass --allow-remote to serve it to other machines", addr)
}

// preload is what `serve` offers the page on start: its first settings
// and, with MODEL, the model.
type preload struct {
	name     string // as given on the command line: the report names it so
	data     []byte // nil without MODEL
	settings *session.Settings
}

// readPreload reads MODEL and checks it loads, so a bad file fails here
// with the CLI's one-line error instead of in the page.
func readPreload(path string) (*preload, error) {
	if _, err := pipeline.Load(path, pipeline.Options{BindAll: true}); err != nil {
		return nil, pipeErr(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	return &preload{name: path, data: data}, nil
}

// serveHandler serves the embedded app and, when pre is set, the model at
// /preload.onnx with its name at /preload.json. It only reads.
func serveHandler(pre *preload) http.Handler {
	app := web.Dist()
	files := http.FileServerFS(app)
	etags := sync.OnceValue(func() map[string]string { return contentTags(app) })
	var info []byte
	if pre != nil {
		m := map[string]any{"settings": pre.settings}
		if pre.data != nil {
			m["name"], m["display"] = pre.name, filepath.Base(pre.name)
		}
		info, _ = json.Marshal(m)
	}
	modTime := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: only GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		// The page needs nothing from elsewhere: say so to the browser, so
		// not even a stray link can send the model out. wasm-unsafe-eval
		// lets it compile WebAssembly; inline styles are set by app.js.
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		switch r.URL.Path {
		case "/preload.json", "/preload.onnx":
			if pre == nil || (pre.data == nil && r.URL.Path == "/preload.onnx") {
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
			http.ServeContent(w, r, "preload.onnx", modTime, bytes.NewReader(pre.data))
			return
		}
		// An embedded file has no modification time; its content hash lets
		// the browser keep it (and Chromium its compiled WebAssembly) and
		// ask again cheaply (304) on the next visit, never using a stale copy.
		if tag, ok := etags()[strings.TrimPrefix(r.URL.Path, "/")]; ok {
			h.Set("ETag", tag)
			h.Set("Cache-Control", "no-cache")
		}
		files.ServeHTTP(w, r)
	})
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
	for _, f := range web.Built {
		add(f)
	}
	tags[""] = tags["index.html"]
	return tags
}
