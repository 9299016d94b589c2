package profile

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// trtexec --exportProfile writes (Profiler::exportJSONProfile in
// TensorRT's samples/common/sampleReporting.cpp):
//
//	[ { "count" : N }
//	, { "name" : "<layer>", "timeMs" : T, "averageMs" : A, "medianMs" : M, "percentage" : P }
//	... ]
//
// N is the number of profiled iterations, timeMs the layer's total over
// them and averageMs = timeMs/N. --exportLayerInfo writes
// {"Layers": [...], "Bindings": [...]}; under --profilingVerbosity=detailed
// each layer is an object whose "Metadata" lists the ONNX nodes it was
// built from as "[ONNX Layer: NAME]" entries separated by \x1f (or \x1e
// between groups), otherwise each layer is just its name. Without
// metadata a fused layer's name joins its nodes' names with " + ", wraps
// pointwise fusions as "PWN(a, b)" and Myelin regions as
// "{ForeignNode[first...last]}".

// isTRTCount reports whether a first array element is trtexec's {"count": N}.
func isTRTCount(raw json.RawMessage) bool {
	var head map[string]json.RawMessage
	if json.Unmarshal(raw, &head) != nil {
		return false
	}
	_, hasCount := head["count"]
	_, hasCat := head["cat"]
	return hasCount && !hasCat
}

// trtLayer is one row of a trtexec profile.
type trtLayer struct {
	Name      *string  `json:"name"`
	TimeMs    float64  `json:"timeMs"`
	AverageMs *float64 `json:"averageMs"`
}

// ReadTensorRT reads a trtexec profile and, when layerInfoPath is not
// "", the layer information that names each layer's ONNX nodes.
func ReadTensorRT(profilePath, layerInfoPath string) (*Profile, error) {
	data, err := os.ReadFile(profilePath)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", profilePath, errorText(err))
	}
	var layers map[string][]string
	if layerInfoPath != "" {
		info, err := os.ReadFile(layerInfoPath)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", layerInfoPath, errorText(err))
		}
		if layers, err = parseLayerInfo(info); err != nil {
			return nil, fmt.Errorf("%s: %v", layerInfoPath, err)
		}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("%s: %v", profilePath, jsonError(err))
	}
	if len(items) == 0 || !isTRTCount(items[0]) {
		return nil, fmt.Errorf("%s: not a trtexec profile (its first element is not {\"count\": N})", profilePath)
	}
	p, err := parseTRT(items, layers)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", profilePath, err)
	}
	p.Path = profilePath
	return p, nil
}

// parseTRT reads a trtexec profile; layers maps layer names to ONNX
// nodes (nil: take them from the names).
func parseTRT(items []json.RawMessage, layers map[string][]string) (*Profile, error) {
	var head struct {
		Count float64 `json:"count"`
	}
	if err := json.Unmarshal(items[0], &head); err != nil || head.Count < 1 || head.Count > 1e12 || head.Count != float64(int64(head.Count)) {
		return nil, fmt.Errorf("trtexec profile count %s is not a positive whole number", strings.TrimSpace(string(items[0])))
	}
	p := &Profile{Format: TensorRT, Runs: int(head.Count)}
	for i, raw := range items[1:] {
		var l trtLayer
		if err := json.Unmarshal(raw, &l); err != nil || l.Name == nil {
			return nil, fmt.Errorf("layer %d: not a {\"name\", \"timeMs\", \"averageMs\"} object", i+1)
		}
		avg := l.TimeMs / head.Count
		if l.AverageMs != nil {
			avg = *l.AverageMs
		}
		what := fmt.Sprintf("layer %d (%q)", i+1, *l.Name)
		if err := duration(what, avg*1e-3); err != nil {
			return nil, err
		}
		if err := duration(what, l.TimeMs*1e-3); err != nil {
			return nil, err
		}
		nodes, ok := layers[*l.Name]
		if !ok {
			nodes = trtNameNodes(*l.Name)
		}
		p.Events = append(p.Events, Event{Name: *l.Name, Nodes: nodes, DurS: avg * 1e-3, Kernels: 1})
	}
	if layers != nil {
		p.Notes = append(p.Notes, "ONNX nodes per layer from the layer information's Metadata")
	} else {
		p.Notes = append(p.Notes, "ONNX nodes per layer from the layer names (no layer information)")
	}
	return p, nil
}

// parseLayerInfo maps each layer's name to its ONNX nodes from
// --exportLayerInfo output; a layer without Metadata maps to the nodes
// its name gives.
func parseLayerInfo(data []byte) (map[string][]string, error) {
	var doc struct {
		Layers []json.RawMessage `json:"Layers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonError(err)
	}
	if doc.Layers == nil {
		return nil, fmt.Errorf("no \"Layers\" list: not a trtexec --exportLayerInfo file")
	}
	out := map[string][]string{}
	for i, raw := range doc.Layers {
		var name string
		if json.Unmarshal(raw, &name) == nil {
			out[name] = trtNameNodes(name)
			continue
		}
		var l struct {
			Name     string `json:"Name"`
			Metadata string `json:"Metadata"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("layer %d: neither a name nor a {\"Name\", \"Metadata\"} object", i)
		}
		if nodes := metadataNodes(l.Metadata); len(nodes) > 0 {
			out[l.Name] = nodes
		} else {
			out[l.Name] = trtNameNodes(l.Name)
		}
	}
	return out, nil
}

// metadataNodes splits "[ONNX Layer: a]\x1f[ONNX Layer: b]".
func metadataNodes(meta string) []string {
	var nodes []string
	for _, part := range strings.FieldsFunc(meta, func(r rune) bool { return r == 0x1f || r == 0x1e }) {
		part = strings.TrimSpace(part)
		if name, ok := strings.CutPrefix(part, "[ONNX Layer: "); ok {
			nodes = append(nodes, strings.TrimSuffix(name, "]"))
		}
	}
	return nodes
}

// trtNameNodes takes the ONNX node names out of a layer name: "a + b",
// "PWN(a, b)", "{ForeignNode[a...b]}" (a range: its two ends are listed
// and MatchReport covers the report nodes between them). A layout or
// precision copy TensorRT adds, "Reformatting CopyNode for Input Tensor
// <i> to LAYER" or "... for Output Tensor <i> to LAYER", gives LAYER's
// nodes: it converts that layer's input or output for it. Other layers
// TensorRT adds name no ONNX node and give none.
func trtNameNodes(name string) []string {
	if rest, ok := strings.CutPrefix(name, "Reformatting CopyNode"); ok {
		_, layer, ok := strings.Cut(rest, " to ")
		if !ok || strings.HasPrefix(layer, "Reformatting CopyNode") {
			return nil
		}
		return trtNameNodes(layer)
	}
	var nodes []string
	for _, part := range strings.Split(name, " + ") {
		part = strings.TrimSpace(part)
		if inner, ok := strings.CutPrefix(part, "{ForeignNode["); ok {
			inner = strings.TrimSuffix(inner, "]}")
			if a, b, ok := strings.Cut(inner, "..."); ok {
				nodes = append(nodes, ForeignRangePrefix+a, ForeignRangePrefix+b)
				continue
			}
			part = inner
		}
		if inner, ok := strings.CutPrefix(part, "PWN("); ok {
			// Pointwise fusions nest: "PWN(PWN(a), PWN(b, c))".
			for _, n := range splitTopLevel(strings.TrimSuffix(inner, ")")) {
				nodes = append(nodes, trtNameNodes(n)...)
			}
			continue
		}
		if part != "" {
			nodes = append(nodes, part)
		}
	}
	return nodes
}

// splitTopLevel splits s at the ", " separators outside parentheses.
func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

// ForeignRangePrefix marks the two ends of a Myelin region
// ("{ForeignNode[first...last]}") in Event.Nodes: the event covers every
// report node from first to last in report order.
const ForeignRangePrefix = "range:"
