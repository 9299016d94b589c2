//go:build js && wasm

// Command wasm is onnxcost compiled to WebAssembly for the page in web/:
// it holds the dropped model's bytes and answers the page's calls with
// JSON from web/session, which runs the command line's own pipeline.
//
// Every function takes and returns strings: JSON in, and JSON out of the
// form {"error": "onnxcost: ..."} or the result. The error line is the one
// the CLI prints for the same input.
package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall/js"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/web/hwdbdata"
	"github.com/onnxcost/onnxcost/web/session"
)

// version is the tool version reported in JSON; scripts/build_web.sh sets
// it with -ldflags to the CLI's.
var version = "0.1.0-dev"

// current is the model the page last opened; nil until one opens.
var current *session.Session

// init takes the GPU and runtime databases as parsed from hwdb's YAML at
// build time: parsing the YAML here took 0.4 s of every load.
func init() { hwdbdata.Install() }

func main() {
	api := map[string]any{
		"version":  version,
		"open":     js.FuncOf(open),
		"gpuList":  call(func(session.Settings) (any, error) { return gpuList() }),
		"choices":  call(func(session.Settings) (any, error) { return session.AllChoices(), nil }),
		"estimate": withModel(estimate),
		"compare":  withModel(func(s *session.Session, st session.Settings) (any, error) { return s.Compare(st) }),
		"gpus":     withModel(func(s *session.Session, st session.Settings) (any, error) { return s.GPUs(st) }),
		"draw":     withModel(func(s *session.Session, st session.Settings) (any, error) { return s.Draw(st) }),
	}
	js.Global().Set("onnxcost", js.ValueOf(api))
	if ready := js.Global().Get("onnxcostReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {} // keep the functions alive
}

// open(name, bytes Uint8Array) reads a model and returns its symbols.
func open(_ js.Value, args []js.Value) (out any) {
	defer recoverTo(&out)
	if len(args) != 2 {
		return errJSON(fmt.Errorf("open wants (name, bytes)"))
	}
	name := args[0].String()
	data := make([]byte, args[1].Get("length").Int())
	js.CopyBytesToGo(data, args[1])
	s, err := session.Open(name, data, version)
	if err != nil {
		current = nil
		return errJSON(err)
	}
	current = s
	return toJSON(map[string]any{"name": s.Name(), "symbols": s.Symbols()})
}

// gpuList is the GPU database, as `onnxcost gpus --format json`.
func gpuList() (any, error) {
	db, err := hwdb.Builtin()
	if err != nil {
		return nil, err
	}
	return db.All(), nil
}

// estimate is the report (as `report --format json`) with its totals in
// the CLI's text units.
func estimate(s *session.Session, st session.Settings) (any, error) {
	r, err := s.Estimate(st)
	if err != nil {
		return nil, err
	}
	return map[string]any{"report": r, "text": session.Text(r)}, nil
}

// withModel is call for the functions that need an open model.
func withModel(f func(*session.Session, session.Settings) (any, error)) js.Func {
	return call(func(st session.Settings) (any, error) {
		if current == nil {
			return nil, fmt.Errorf("no model is open")
		}
		return f(current, st)
	})
}

// call wraps f as a JS function of one settings-JSON string argument.
func call(f func(session.Settings) (any, error)) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) (out any) {
		defer recoverTo(&out)
		var st session.Settings
		if len(args) > 0 && args[0].Type() == js.TypeString {
			if err := json.Unmarshal([]byte(args[0].String()), &st); err != nil {
				return errJSON(fmt.Errorf("bad settings: %w", err))
			}
		}
		v, err := f(st)
		if err != nil {
			return errJSON(err)
		}
		return toJSON(v)
	})
}

// recoverTo turns a panic into the CLI's internal-error line, so the page
// shows a message instead of a dead runtime.
func recoverTo(out *any) {
	if r := recover(); r != nil {
		*out = toJSON(map[string]string{"error": fmt.Sprintf("onnxcost: internal error (please report): %v", r)})
	}
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return errJSON(err)
	}
	return string(b)
}

// errJSON is the CLI's one error line: "onnxcost: " and the message with
// newlines folded (cmd/onnxcost/main.go, oneLine).
func errJSON(err error) string {
	msg := strings.TrimSpace(err.Error())
	msg = strings.ReplaceAll(strings.ReplaceAll(msg, "\r", " "), "\n", "; ")
	b, _ := json.Marshal(map[string]string{"error": "onnxcost: " + msg})
	return string(b)
}
