// Package web is onnxcost's browser app, embedded here for `onnxcost
// serve`: the page as written (web/static) and what scripts/build_web.sh
// builds from Go (web/dist: onnxcost.wasm, Go's wasm_exec.js and INPUTS,
// the fingerprint of the sources it was built from). The page runs the
// command line's own pipeline compiled to WebAssembly (web/wasm,
// web/session): the model never leaves the browser.
package web

import (
	"embed"
	"errors"
	"io/fs"
)

//go:generate bash ../scripts/build_web.sh

//go:embed static dist
var files embed.FS

// Built names the files scripts/build_web.sh writes to web/dist; every
// other file the page loads is web/static's own, served as it is in the
// checkout (never copied, so the two cannot differ).
var Built = []string{"onnxcost.wasm", "wasm_exec.js", "INPUTS"}

// Dist is the app, index.html at its root: web/static's files and the
// build's (Built) beside them.
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
	for _, b := range Built {
		if name == b {
			return a.dist.Open(name)
		}
	}
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := a.static.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		// web/dist's other files (none today) are the build's too.
		return a.dist.Open(name)
	}
	return f, err
}
