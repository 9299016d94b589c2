// Package web is onnxcost's browser app, embedded here for `onnxcost
// serve`: the page as written (web/static) and, when scripts/build_web.sh
// has run, what it builds from Go into web/dist (onnxcost.wasm and Go's
// wasm_exec.js; build output, never committed). With them the page runs
// the command line's own pipeline compiled to WebAssembly (web/wasm,
// web/session) in the browser; without them (a plain `go install`) serve
// answers the page's calls itself, over loopback, with the same JSON
// (server.go). Either way the model stays on the machine.
package web

import (
	"embed"
	"io/fs"
	"slices"
)

//go:generate bash ../scripts/build_web.sh

// dist holds web/dist/README.md at least (committed, so that the pattern
// matches on a fresh clone) and the build's files when they were built.
//
//go:embed static dist
var files embed.FS

// Built names the files scripts/build_web.sh writes to web/dist; every
// other file the page loads is web/static's own, served as it is in the
// checkout (never copied, so the two cannot differ).
var Built = []string{"onnxcost.wasm", "wasm_exec.js"}

// HasWasm says whether this binary embeds the WebAssembly build, so that
// the page can run without a server's help.
func HasWasm() bool {
	for _, b := range Built {
		if _, err := fs.Stat(files, "dist/"+b); err != nil {
			return false
		}
	}
	return true
}

// Dist is the app, index.html at its root: web/static's files and the
// build's (Built, when embedded) beside them.
func Dist() fs.FS {
	static, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // "static" is a valid path, checked at compile time by go:embed
	}
	dist, err := fs.Sub(files, "dist")
	if err != nil {
		panic(err)
	}
	return app{static: static, dist: dist}
}

// app serves the built files from web/dist and the rest from web/static.
type app struct{ static, dist fs.FS }

func (a app) Open(name string) (fs.File, error) {
	if slices.Contains(Built, name) {
		return a.dist.Open(name)
	}
	return a.static.Open(name)
}
