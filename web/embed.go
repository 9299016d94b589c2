// Package web is onnxcost's browser app, built into web/dist by
// scripts/build_web.sh and embedded here for `onnxcost serve`. The page
// (web/static) runs the command line's own pipeline compiled to
// WebAssembly (web/wasm, web/session): the model never leaves the browser.
package web

import (
	"embed"
	"io/fs"
)

//go:generate bash ../scripts/build_web.sh

//go:embed dist
var dist embed.FS

// Dist is the built app: index.html at its root.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a valid path, checked at compile time by go:embed
	}
	return sub
}
