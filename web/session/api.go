package session

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The page's calls are answered in one of two places: by onnxcost.wasm in
// the page (web/wasm), or by `onnxcost serve` over HTTP when the binary
// was built without the WebAssembly. Both answer through Call and
// Opened, so the page sees the same JSON either way.

// calls are the page's calls other than open, by name; model says the
// call needs an open model.
var calls = map[string]struct {
	model bool
	run   func(*Session, Settings) (any, error)
}{
	// The GPUs the menu offers: the database's, and --gpu-file's.
	"gpuList": {false, func(_ *Session, st Settings) (any, error) {
		db, err := GPUDB(st.GPUFile)
		if err != nil {
			return nil, err
		}
		return db.All(), nil
	}},
	// The runtime profiles the menu offers: the built-in ones, and
	// --runtime-file's.
	"runtimeList": {false, func(_ *Session, st Settings) (any, error) {
		db, err := RuntimeDB(st.RuntimeFile)
		if err != nil {
			return nil, err
		}
		return db.All(), nil
	}},
	"choices": {false, func(*Session, Settings) (any, error) { return AllChoices(), nil }},
	// The report (as `report --format json`) with its totals in the CLI's
	// text units.
	"estimate": {true, func(s *Session, st Settings) (any, error) {
		r, err := s.Estimate(st)
		if err != nil {
			return nil, err
		}
		return map[string]any{"report": r, "text": Text(r)}, nil
	}},
	"compare": {true, func(s *Session, st Settings) (any, error) { return s.Compare(st) }},
	"gpus":    {true, func(s *Session, st Settings) (any, error) { return s.GPUs(st) }},
	"draw":    {true, func(s *Session, st Settings) (any, error) { return s.Draw(st) }},
	// `generate --format json` and its text, for a decoder.
	"generate": {true, func(s *Session, st Settings) (any, error) { return s.Generate(st) }},
}

// CallNames are the page's calls other than open, sorted: the
// WebAssembly build exports each (web/wasm), serve answers each.
func CallNames() []string {
	names := make([]string, 0, len(calls))
	for fn := range calls {
		names = append(names, fn)
	}
	sort.Strings(names)
	return names
}

// IsCall says whether fn is one of the page's calls other than open.
func IsCall(fn string) bool {
	_, ok := calls[fn]
	return ok
}

// Call answers the page's call fn under the settings (JSON; empty is every
// default) on the open model s (nil when none): the result's JSON, or
// {"error": "onnxcost: ..."} with the line the CLI prints for the same
// input.
func Call(fn string, s *Session, settings []byte) (out string) {
	defer recoverTo(&out)
	c, ok := calls[fn]
	if !ok {
		return ErrorJSON(fmt.Errorf("no call %q", fn))
	}
	var st Settings
	if len(settings) > 0 {
		if err := json.Unmarshal(settings, &st); err != nil {
			return ErrorJSON(fmt.Errorf("bad settings: %w", err))
		}
	}
	if c.model && s == nil {
		return ErrorJSON(fmt.Errorf("no model is open"))
	}
	v, err := c.run(s, st)
	if err != nil {
		return ErrorJSON(err)
	}
	return toJSON(v)
}

// Opened is open's answer: the model's name and symbols, or the error
// Open gave. extra adds fields (the server's handle for the model).
func Opened(s *Session, err error, extra map[string]any) string {
	if err != nil {
		return ErrorJSON(err)
	}
	m := map[string]any{"name": s.Name(), "symbols": s.Symbols(), "decoder": s.Decoder()}
	for k, v := range extra {
		m[k] = v
	}
	return toJSON(m)
}

// recoverTo turns a panic into the CLI's internal-error line, so the page
// shows a message instead of a dead runtime or a dropped connection.
func recoverTo(out *string) {
	if r := recover(); r != nil {
		*out = toJSON(map[string]string{"error": fmt.Sprintf("onnxcost: internal error (please report): %v", r)})
	}
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ErrorJSON(err)
	}
	return string(b)
}

// ErrorJSON is the CLI's one error line as the page's calls return it:
// "onnxcost: " and the message with newlines folded (internal/console,
// OneLine).
func ErrorJSON(err error) string {
	msg := strings.TrimSpace(err.Error())
	msg = strings.ReplaceAll(strings.ReplaceAll(msg, "\r", " "), "\n", "; ")
	b, _ := json.Marshal(map[string]string{"error": "onnxcost: " + msg})
	return string(b)
}
