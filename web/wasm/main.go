//go:build js && wasm

// Command wasm is onnxcost compiled to WebAssembly for the page in web/:
// it holds the dropped model's bytes and answers the page's calls with
// JSON from web/session, which runs the command line's own pipeline.
//
// Every function takes and returns strings: JSON in, and JSON out of the
// form {"error": "onnxcost: ..."} or the result. The error line is the one
// the CLI prints for the same input. `onnxcost serve` built without this
// answers the same calls over HTTP (web/server.go).
package main

import (
	"fmt"
	"syscall/js"

	"github.com/onnxcost/onnxcost/web/session"
)

// version is the tool version reported in JSON; scripts/build_web.sh sets
// it with -ldflags to the CLI's.
var version = "0.1.0-dev"

// current is the model the page last opened; nil until one opens.
var current *session.Session

func main() {
	api := map[string]any{"version": version, "open": js.FuncOf(open)}
	for _, fn := range session.CallNames() {
		api[fn] = js.FuncOf(func(_ js.Value, args []js.Value) any {
			var st []byte
			if len(args) > 0 && args[0].Type() == js.TypeString {
				st = []byte(args[0].String())
			}
			return session.Call(fn, current, st)
		})
	}
	js.Global().Set("onnxcost", js.ValueOf(api))
	if ready := js.Global().Get("onnxcostReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {} // keep the functions alive
}

// open(name, bytes Uint8Array) reads a model and returns its symbols.
func open(_ js.Value, args []js.Value) (out any) {
	defer func() {
		if r := recover(); r != nil {
			out = session.ErrorJSON(fmt.Errorf("internal error (please report): %v", r))
		}
	}()
	if len(args) != 2 {
		return session.ErrorJSON(fmt.Errorf("open wants (name, bytes)"))
	}
	name := args[0].String()
	data := make([]byte, args[1].Get("length").Int())
	js.CopyBytesToGo(data, args[1])
	s, err := session.Open(name, data, version)
	current = s
	if err != nil {
		current = nil
	}
	return session.Opened(s, err, nil)
}
