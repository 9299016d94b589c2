// Package profile reads measured per-op profiles (onnxruntime, PyTorch
// Kineto, TensorRT trtexec) and matches their time to the nodes of an
// onnxcost report, so that `onnxcost calibrate` can set predicted time
// beside measured time node by node and kernel class by kernel class.
//
// Read detects the format from the content. Every format becomes a list
// of Events in execution order, each with its measured time averaged per
// run; MatchReport (match.go) attributes them to report nodes.
package profile

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/internal/safefile"
)

// Format names a profile's producer.
type Format string

const (
	ONNXRuntime Format = "onnxruntime"
	PyTorch     Format = "pytorch"
	TensorRT    Format = "tensorrt"
)

// Event is one measured op: its name as the profile gives it, the ONNX
// node names it covers when the profile says (TensorRT layer metadata),
// its op type when given (an ONNX op type where the format allows), its
// measured time per run in seconds (GPU kernel time when the profile has
// GPU kernels, else the op's own time) and its GPU kernels per run.
type Event struct {
	Name    string   `json:"name"`
	OpType  string   `json:"op_type,omitempty"`
	Nodes   []string `json:"nodes,omitempty"`
	DurS    float64  `json:"dur_s"`
	Kernels int      `json:"kernels"`
	// Within names the control-flow node (Loop, Scan, If) whose subgraph
	// the event ran in ("" at the top level): its time is the subgraph
	// node's own, and the control-flow node's event keeps only its own
	// (onnxruntime times a Loop's body nodes inside the Loop's span).
	Within string `json:"within,omitempty"`
}

// Profile is a parsed profile. Events are in execution order (first run
// kept); Runs is how many runs their durations are averaged over; Device
// is what the profile says of the machine it ran on (a Kineto trace's
// deviceProperties and driver version; the CPU for a Kineto trace with
// neither a device nor a GPU kernel and for an onnxruntime profile of its
// CPU provider alone; nothing for other onnxruntime and trtexec
// profiles); Notes say what the reader chose (a dropped warm-up run, time
// left out) in one line each.
type Profile struct {
	Format Format  `json:"format"`
	Path   string  `json:"path"`
	Events []Event `json:"events"`
	Runs   int     `json:"runs"`
	// Replayed says the times are a CUDA-graph replay's, aligned with an
	// eager call's kernels (ReadKinetoReplay).
	Replayed bool             `json:"replayed,omitempty"`
	Device   calib.Provenance `json:"device,omitzero"`
	Notes    []string         `json:"notes,omitempty"`
}

// TotalS is the summed time of all events per run.
func (p *Profile) TotalS() float64 {
	t := 0.0
	for _, e := range p.Events {
		t += e.DurS
	}
	return t
}

// Read reads and parses the profile at path.
func Read(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, errorText(err))
	}
	return Parse(path, data)
}

// errorText is err without the path os already put in front of it.
func errorText(err error) string {
	return safefile.Reason(err).Error()
}

// Parse parses a profile held in memory; name stands for its path in
// errors. The format is told from the JSON's shape: an array whose first
// element is {"count": N} is a trtexec profile, an array of trace events
// is onnxruntime's, an object with traceEvents is Kineto's. Gzip-compressed
// JSON is read too (torch.profiler's tensorboard_trace_handler writes
// *.pt.trace.json.gz).
func Parse(name string, data []byte) (*Profile, error) {
	data, err := gunzipped(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	p, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	p.Path = name
	return p, nil
}

// maxGunzipped is the most a compressed profile may expand to: a trace
// of a few thousand steps' kernels is tens of MB of JSON, and a file that
// claims more is refused before it fills memory (a gzip bomb). A
// variable so that a test can lower it.
var maxGunzipped = 1 << 30

// gunzipped is data decompressed when it starts with gzip's magic, else
// data as given.
func gunzipped(data []byte) ([]byte, error) {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("gzip: %v", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, int64(maxGunzipped)+1))
	if err != nil {
		return nil, fmt.Errorf("gzip: %v", err)
	}
	if len(out) > maxGunzipped {
		return nil, fmt.Errorf("gzip: expands past %d MiB: not read as a profile", maxGunzipped>>20)
	}
	return out, nil
}

func parse(data []byte) (*Profile, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("empty file, not a profile")
	}
	switch trimmed[0] {
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(trimmed, &items); err != nil {
			return nil, jsonError(err)
		}
		if len(items) > 0 && isTRTCount(items[0]) {
			return parseTRT(items, nil)
		}
		return parseORT(items)
	case '{':
		var top map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &top); err != nil {
			return nil, jsonError(err)
		}
		if ev, ok := top["traceEvents"]; ok {
			return parseKineto(ev, top)
		}
		if _, ok := top["Layers"]; ok {
			return nil, fmt.Errorf("a TensorRT layer-info file (--exportLayerInfo): give the profile (--exportProfile) and pass this one with it")
		}
		return nil, fmt.Errorf("a JSON object with no traceEvents: not an onnxruntime, Kineto or trtexec profile")
	}
	return nil, fmt.Errorf("not JSON: a profile is an onnxruntime, Kineto or trtexec JSON file")
}

// jsonError words a decoding error in one line.
func jsonError(err error) error {
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Errorf("bad JSON at byte %d: %v (truncated?)", se.Offset, se)
	}
	if err.Error() == "unexpected end of JSON input" {
		return fmt.Errorf("bad JSON: unexpected end of input (truncated?)")
	}
	return fmt.Errorf("bad JSON: %v", err)
}

// duration checks a duration read from a profile: finite, not negative,
// and under an hour (a per-op time beyond that is a corrupt file, not a
// measurement).
func duration(what string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("%s: duration %g is not a non-negative number", what, v)
	}
	if v > maxDurS {
		return fmt.Errorf("%s: duration %g s exceeds an hour", what, v)
	}
	return nil
}

// maxDurS bounds one event's duration in seconds (see duration).
const maxDurS = 3600.0
