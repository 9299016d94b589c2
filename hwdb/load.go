package hwdb

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/internal/safefile"
	"go.yaml.in/yaml/v3"
)

// A spec file is a YAML (or JSON) list of GPU entries, or a mapping with a
// "gpus" list, or one entry on its own. Figures may be written in human units
// (peak_tflops, mem_gib, mem_bw_gbps, l2_mib, l2_bw_gbps, launch_us) or in the
// base units of the GPU struct's JSON form (peak_flops, mem_bytes, mem_bw,
// l2_bytes, l2_bw, launch_s), so `onnxcost gpus --format json` output loads
// back unchanged. Both spellings of one figure in one entry is an error.

// Unit multipliers from the human units of the data file to base units.
const (
	tera = 1e12
	giga = 1e9
	gib  = 1 << 30
	mib  = 1 << 20
	usec = 1e-6
)

// figure describes one numeric field of an entry: its canonical (JSON) name,
// the multiplier from the spelling used in the file, and where it lives.
type figure struct {
	json     string
	scale    float64
	integer  bool // must be a whole number (SM count, year)
	required bool
	sourced  bool // needs a source (a hardware figure, not metadata like year)
	ptr      func(g *GPU) *float64
	iptr     func(g *GPU) *int
}

// figures lists every numeric key an entry may use, by its spelling in the
// file. Order matters only for error messages about missing fields.
var figures = buildFigures()

func buildFigures() map[string]figure {
	m := map[string]figure{}
	add := func(keys []string, scales []float64, f figure) {
		for i, k := range keys {
			g := f
			g.scale = scales[i]
			m[k] = g
		}
	}
	add([]string{"year"}, []float64{1}, figure{json: "year", integer: true,
		iptr: func(g *GPU) *int { return &g.Year }})
	add([]string{"sms"}, []float64{1}, figure{json: "sms", integer: true, required: true, sourced: true,
		iptr: func(g *GPU) *int { return &g.SMs }})
	add([]string{"base_clock_mhz"}, []float64{1}, figure{json: "base_clock_mhz", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.BaseClockMHz }})
	add([]string{"boost_clock_mhz"}, []float64{1}, figure{json: "boost_clock_mhz", required: true, sourced: true,
		ptr: func(g *GPU) *float64 { return &g.BoostClockMHz }})
	add([]string{"sustained_clock_mhz"}, []float64{1}, figure{json: "sustained_clock_mhz", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.SustainedClockMHz }})
	add([]string{"clock_power_w"}, []float64{1}, figure{json: "clock_power_w", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.ClockPowerW }})
	add([]string{"stream_eff"}, []float64{1}, figure{json: "stream_eff", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.StreamEff }})
	add([]string{"vector_gemm_scale"}, []float64{1}, figure{json: "vector_gemm_scale", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.VectorGEMMScale }})
	add([]string{"vector_conv_scale"}, []float64{1}, figure{json: "vector_conv_scale", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.VectorConvScale }})
	add([]string{"stream_rw_eff"}, []float64{1}, figure{json: "stream_rw_eff", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.StreamRWEff }})
	add([]string{"mem_pj_per_byte"}, []float64{1}, figure{json: "mem_pj_per_byte", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.MemPJPerByte }})
	add([]string{"mem_gib", "mem_bytes"}, []float64{gib, 1}, figure{json: "mem_bytes", required: true, sourced: true,
		ptr: func(g *GPU) *float64 { return &g.MemBytes }})
	add([]string{"cuda_mem_gib", "cuda_mem_bytes"}, []float64{gib, 1}, figure{json: "cuda_mem_bytes", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.CUDAMemBytes }})
	add([]string{"mem_bw_gbps", "mem_bw"}, []float64{giga, 1}, figure{json: "mem_bw", required: true, sourced: true,
		ptr: func(g *GPU) *float64 { return &g.MemBW }})
	add([]string{"l2_mib", "l2_bytes"}, []float64{mib, 1}, figure{json: "l2_bytes", required: true, sourced: true,
		ptr: func(g *GPU) *float64 { return &g.L2Bytes }})
	add([]string{"l2_bw_gbps", "l2_bw"}, []float64{giga, 1}, figure{json: "l2_bw", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.L2BW }})
	add([]string{"l2_partitions"}, []float64{1}, figure{json: "l2_partitions", integer: true, sourced: true,
		iptr: func(g *GPU) *int { return &g.L2Partitions }})
	add([]string{"tdp_w"}, []float64{1}, figure{json: "tdp_w", required: true, sourced: true,
		ptr: func(g *GPU) *float64 { return &g.TDPWatts }})
	add([]string{"idle_w"}, []float64{1}, figure{json: "idle_w", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.IdleWatts }})
	add([]string{"launch_us", "launch_s"}, []float64{usec, 1}, figure{json: "launch_s", required: true, sourced: true,
		ptr: func(g *GPU) *float64 { return &g.LaunchS }})
	add([]string{"min_power_w"}, []float64{1}, figure{json: "min_power_w", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.MinPowerW }})
	add([]string{"max_power_w"}, []float64{1}, figure{json: "max_power_w", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.MaxPowerW }})
	add([]string{"min_sm_clock_mhz"}, []float64{1}, figure{json: "min_sm_clock_mhz", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.MinSMClockMHz }})
	add([]string{"mem_clock_mhz"}, []float64{1}, figure{json: "mem_clock_mhz", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.MemClockMHz }})
	add([]string{"nvlink_gen"}, []float64{1}, figure{json: "nvlink_gen", integer: true, sourced: true,
		iptr: func(g *GPU) *int { return &g.NVLinkGen }})
	add([]string{"nvlink_gbps", "nvlink_bw"}, []float64{giga, 1}, figure{json: "nvlink_bw", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.NVLinkBW }})
	add([]string{"nvlink_domain"}, []float64{1}, figure{json: "nvlink_domain", integer: true, sourced: true,
		iptr: func(g *GPU) *int { return &g.NVLinkDomain }})
	add([]string{"pcie_gen"}, []float64{1}, figure{json: "pcie_gen", integer: true, sourced: true,
		iptr: func(g *GPU) *int { return &g.PCIeGen }})
	add([]string{"pcie_gbps", "pcie_bw"}, []float64{giga, 1}, figure{json: "pcie_bw", sourced: true,
		ptr: func(g *GPU) *float64 { return &g.PCIeBW }})
	return m
}

// peakKeys maps the two spellings of the peak table to their multiplier.
var peakKeys = map[string]float64{"peak_tflops": tera, "peak_flops": 1}

// Precisions lists every known precision key, in display order.
var Precisions = []Precision{FP64, FP64Tensor, FP32, FP16, BF16, TF32Tensor,
	FP16Tensor, BF16Tensor, FP8Tensor, INT8Tensor, INT8}

func knownPrecision(p Precision) bool { return slices.Contains(Precisions, p) }

// stringKeys are the non-numeric keys of an entry.
var stringKeys = []string{"name", "base", "vendor", "arch", "aliases", "notes", "sources"}

// canonicalFigure turns a figure name as written in a sources key (either
// spelling: "mem_bw_gbps", "mem_bw", "peak_tflops.fp16_tensor",
// "peak_flops.fp16_tensor") into its JSON name, or "" if unknown.
func canonicalFigure(k string) string {
	if pk, prec, ok := strings.Cut(k, "."); ok {
		if _, isPeak := peakKeys[pk]; isPeak && knownPrecision(Precision(prec)) {
			return "peak_flops." + prec
		}
		return ""
	}
	if f, ok := figures[k]; ok && f.sourced {
		return f.json
	}
	return ""
}

// entry is one decoded entry before it is resolved against its base.
type entry struct {
	line int
	g    *GPU           // figures set in this entry (base units)
	set  map[string]int // JSON figure name -> line where it was set
	// unset holds figures the entry drops from its base with "key: null"
	// (an A100 PCIe derived from the SXM part has no SXM power limits).
	unset   map[string]int
	sources map[string]string
	srcLine map[string]int
	base    string
	hasName bool
}

// lineOf is the line where the entry sets key, or the entry's own line
// when the figure is its base's: a conflict between an inherited figure
// and one set here still points into the file.
func (e *entry) lineOf(key string) int {
	if l := e.set[key]; l > 0 {
		return l
	}
	return e.line
}

// parseOptions say how strict a parse is.
type parseOptions struct {
	origin  string // file name for messages and default sources
	builtin bool   // built-in data: every figure must carry its own source
	bases   *DB    // resolves "base:" references (nil: only this file)
}

// errList collects positioned errors so a user sees all problems at once.
type errList struct {
	origin string
	errs   []error
}

func (e *errList) add(line int, format string, args ...any) {
	e.errs = append(e.errs, fmt.Errorf("%s:%d: %s", e.origin, line, fmt.Sprintf(format, args...)))
}

func (e *errList) err() error {
	if len(e.errs) > 20 {
		e.errs = append(e.errs[:20], fmt.Errorf("... and %d more", len(e.errs)-20))
	}
	return errors.Join(e.errs...)
}

// parse decodes a spec file into resolved, validated GPUs.
func parse(data []byte, opt parseOptions) ([]*GPU, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", opt.origin, err)
	}
	el := &errList{origin: opt.origin}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: no GPU entries", opt.origin)
	}
	root := deref(doc.Content[0])
	var items []*yaml.Node
	switch root.Kind {
	case yaml.SequenceNode:
		items = root.Content
	case yaml.MappingNode:
		if v := mapGet(root, "gpus"); v != nil {
			if len(root.Content) != 2 {
				el.add(root.Line, `a file with a "gpus" list may hold nothing else`)
			}
			v = deref(v)
			if v.Kind != yaml.SequenceNode {
				el.add(v.Line, `"gpus" must be a list of GPU entries`)
				return nil, el.err()
			}
			items = v.Content
		} else {
			items = []*yaml.Node{root}
		}
	default:
		return nil, fmt.Errorf("%s:%d: expected a list of GPU entries", opt.origin, root.Line)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no GPU entries", opt.origin)
	}
	var entries []*entry
	for _, it := range items {
		if e := decodeEntry(deref(it), el); e != nil {
			entries = append(entries, e)
		}
	}
	if len(el.errs) > 0 {
		return nil, el.err()
	}
	gpus := resolve(entries, opt, el)
	if len(el.errs) > 0 {
		return nil, el.err()
	}
	return gpus, nil
}

// deref follows YAML aliases (*anchor) to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func mapGet(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// decodeEntry reads one mapping node. Unknown keys, wrong types and
// duplicates are reported with their line.
func decodeEntry(n *yaml.Node, el *errList) *entry {
	if n.Kind != yaml.MappingNode {
		el.add(n.Line, "a GPU entry must be a mapping of field: value")
		return nil
	}
	e := &entry{line: n.Line, g: &GPU{}, set: map[string]int{}, unset: map[string]int{},
		sources: map[string]string{}, srcLine: map[string]int{}}
	for k, v := range mappingFields(n, el, map[string]int{}) {
		key := k.Value
		switch {
		case key == "name" || key == "vendor" || key == "arch" || key == "base":
			s, ok := scalarString(v)
			if !ok || strings.TrimSpace(s) == "" {
				el.add(v.Line, "%s must be a non-empty string", key)
				continue
			}
			if bad := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }); bad >= 0 || len(s) > 80 {
				el.add(v.Line, "%s %q has control characters or is over 80 bytes", key, s)
				continue
			}
			switch key {
			case "name":
				e.g.Name, e.hasName = s, true
			case "vendor":
				e.g.Vendor = s
			case "arch":
				e.g.Arch = s
			case "base":
				e.base = s
			}
			e.set[key] = v.Line
		case key == "aliases" || key == "notes":
			list, ok := stringList(v)
			if !ok {
				el.add(v.Line, "%s must be a list of strings", key)
				continue
			}
			if key == "aliases" {
				e.g.Aliases = list
			} else {
				e.g.Notes = list
			}
			e.set[key] = v.Line
		case key == "sources":
			decodeSources(v, e, el)
		case peakKeys[key] != 0:
			decodePeaks(key, v, e, el)
		default:
			f, ok := figures[key]
			if !ok {
				el.add(k.Line, "unknown field %q (known: %s)", key, knownFields())
				continue
			}
			if prev, dup := e.set[f.json]; dup {
				el.add(k.Line, "%s given twice in one entry (also at line %d)", f.json, prev)
				continue
			}
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				if f.required {
					el.add(v.Line, "%s is required and cannot be null", key)
					continue
				}
				e.unset[f.json] = v.Line
				e.set[f.json] = v.Line
				continue
			}
			x, ok := number(v)
			if !ok {
				el.add(v.Line, "%s must be a number, got %q", key, v.Value)
				continue
			}
			if !(x > 0) || math.IsInf(x, 0) {
				el.add(v.Line, "%s must be positive and finite, got %s", key, v.Value)
				continue
			}
			if f.integer {
				if x != math.Trunc(x) || x > 1e6 {
					el.add(v.Line, "%s must be a whole number below 1e6, got %s", key, v.Value)
					continue
				}
				*f.iptr(e.g) = int(x)
			} else {
				*f.ptr(e.g) = x * f.scale
			}
			e.set[f.json] = v.Line
		}
	}
	return e
}

func knownFields() string {
	keys := slices.Clone(stringKeys)
	for k := range figures {
		keys = append(keys, k)
	}
	for k := range peakKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

func decodePeaks(key string, v *yaml.Node, e *entry, el *errList) {
	if v.Kind != yaml.MappingNode {
		el.add(v.Line, "%s must be a mapping of precision: value", key)
		return
	}
	if e.g.Peak == nil {
		e.g.Peak = map[Precision]float64{}
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		pk, pv := v.Content[i], deref(v.Content[i+1])
		p := Precision(pk.Value)
		if !knownPrecision(p) {
			el.add(pk.Line, "unknown precision %q (known: %s)", pk.Value, precisionList())
			continue
		}
		name := "peak_flops." + string(p)
		if prev, dup := e.set[name]; dup {
			el.add(pk.Line, "%s given twice in one entry (also at line %d)", name, prev)
			continue
		}
		x, ok := number(pv)
		if !ok || !(x > 0) || math.IsInf(x, 0) {
			el.add(pv.Line, "%s.%s must be a positive finite number, got %q", key, p, pv.Value)
			continue
		}
		e.g.Peak[p] = x * peakKeys[key]
		e.set[name] = pv.Line
	}
}

func precisionList() string {
	s := make([]string, len(Precisions))
	for i, p := range Precisions {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// decodeSources reads a GPU entry's sources mapping.
func decodeSources(v *yaml.Node, e *entry, el *errList) {
	decodeSourceMap(v, e.sources, e.srcLine, el, func(part string) (string, bool) {
		name := canonicalFigure(part)
		return name, name != ""
	}, "sources: %q is not a figure (use e.g. mem_bw_gbps or peak_tflops.fp16_tensor)")
}

// decodeSourceMap reads a sources mapping (figure: source text) into
// sources and srcLine, keyed by each figure's JSON name; GPU entries and
// runtime profiles share it so both accept and reject the same shapes. A
// key may name several figures separated by commas when one document gives
// them all. figure turns one such name into its JSON name (false for a name
// that is not a figure, reported with the format unknown).
func decodeSourceMap(v *yaml.Node, sources map[string]string, srcLine map[string]int, el *errList,
	figure func(string) (string, bool), unknown string) {
	if v.Kind != yaml.MappingNode {
		el.add(v.Line, "sources must be a mapping of figure: source text")
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, sv := v.Content[i], deref(v.Content[i+1])
		text, ok := scalarString(sv)
		if !ok || strings.TrimSpace(text) == "" {
			el.add(sv.Line, "source for %q must be non-empty text", k.Value)
			continue
		}
		for part := range strings.SplitSeq(k.Value, ",") {
			name, ok := figure(strings.TrimSpace(part))
			if !ok {
				el.add(k.Line, unknown, strings.TrimSpace(part))
				continue
			}
			if prev, dup := srcLine[name]; dup {
				el.add(k.Line, "sources: %s given twice (also at line %d)", name, prev)
				continue
			}
			sources[name], srcLine[name] = strings.TrimSpace(text), k.Line
		}
	}
}

// mappingFields yields a mapping's keys and values (aliases resolved),
// recording each key's line in seen. A key given twice is reported and
// skipped: a YAML decoder would silently keep the last, hiding a typo'd
// copy of a figure.
func mappingFields(n *yaml.Node, el *errList, seen map[string]int) iter.Seq2[*yaml.Node, *yaml.Node] {
	return func(yield func(k, v *yaml.Node) bool) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], deref(n.Content[i+1])
			if prev, dup := seen[k.Value]; dup {
				el.add(k.Line, "field %q repeated (first at line %d)", k.Value, prev)
				continue
			}
			seen[k.Value] = k.Line
			if !yield(k, v) {
				return
			}
		}
	}
}

func scalarString(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", false
	}
	return n.Value, true
}

func stringList(n *yaml.Node) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		s, ok := scalarString(deref(c))
		if !ok || strings.TrimSpace(s) == "" {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// number accepts YAML ints and floats (not strings that look like numbers:
// "300" in quotes is most likely a mistake worth reporting).
func number(n *yaml.Node) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		return 0, false
	}
	var x float64
	if err := n.Decode(&x); err != nil {
		return 0, false
	}
	return x, true
}

// resolve applies "base:" inheritance, fills default sources for user files,
// and validates each finished GPU.
func resolve(entries []*entry, opt parseOptions, el *errList) []*GPU {
	byName := map[string]*entry{}
	for _, e := range entries {
		if !e.hasName {
			el.add(e.line, "entry has no name")
			continue
		}
		k := normalize(e.g.Name)
		if prev, dup := byName[k]; dup {
			el.add(e.line, "GPU %q defined twice in this file (also at line %d)", e.g.Name, prev.line)
			continue
		}
		byName[k] = e
	}
	if len(el.errs) > 0 {
		return nil
	}
	done := map[*entry]*GPU{}
	var build func(e *entry, depth int) *GPU
	build = func(e *entry, depth int) *GPU {
		if g, ok := done[e]; ok {
			return g
		}
		if depth > len(entries)+1 {
			el.add(e.line, "base chain of %q loops", e.g.Name)
			return nil
		}
		var g *GPU
		switch {
		case e.base == "":
			g = &GPU{}
		case byName[normalize(e.base)] != nil && byName[normalize(e.base)] != e:
			b := build(byName[normalize(e.base)], depth+1)
			if b == nil {
				return nil
			}
			g = b.Clone()
		case opt.bases != nil:
			b, err := opt.bases.Lookup(e.base)
			if err != nil {
				el.add(e.lineOf("base"), "base: %v", err)
				return nil
			}
			g = b
		default:
			el.add(e.lineOf("base"), "base %q is not defined before use in this file", e.base)
			return nil
		}
		inheritedName := g.Name
		merge(g, e, opt)
		// A derived entry does not take its base's aliases: two GPUs
		// answering to "a100" would make lookups ambiguous.
		if e.base != "" && normalize(inheritedName) != normalize(g.Name) && e.set["aliases"] == 0 {
			g.Aliases = nil
		}
		if e.base != "" && e.set["notes"] == 0 {
			g.Notes = append(slices.Clone(g.Notes), fmt.Sprintf("derived from %s; figures not set in %s are the base's", inheritedName, opt.origin))
		}
		validate(g, e, opt, el)
		done[e] = g
		return g
	}
	var out []*GPU
	for _, e := range entries {
		if g := build(e, 0); g != nil {
			out = append(out, g)
		}
	}
	return out
}

// merge copies the figures an entry sets onto g (base units already).
func merge(g *GPU, e *entry, opt parseOptions) {
	if g.Sources == nil {
		g.Sources = map[string]string{}
	}
	if g.Peak == nil {
		g.Peak = map[Precision]float64{}
	}
	for key, f := range figures {
		if _, ok := e.set[f.json]; !ok || key != canonicalSpelling(f.json) {
			continue
		}
		if _, drop := e.unset[f.json]; drop {
			if f.integer {
				*f.iptr(g) = 0
			} else {
				*f.ptr(g) = 0
			}
			continue
		}
		if f.integer {
			*f.iptr(g) = *f.iptr(e.g)
		} else {
			*f.ptr(g) = *f.ptr(e.g)
		}
	}
	// A CUDA-visible total measured on the base's memory size says nothing
	// of another size: an entry that resizes the memory and gives no CUDA
	// figure of its own drops the base's (CUDAMem then falls back to the
	// nominal size, and the built-in data's test asks for a figure).
	if _, resized := e.set["mem_bytes"]; resized {
		if _, own := e.set["cuda_mem_bytes"]; !own && g.CUDAMemBytes > 0 {
			g.CUDAMemBytes = 0
			delete(g.Sources, "cuda_mem_bytes")
		}
	}
	for p, x := range e.g.Peak {
		g.Peak[p] = x
	}
	if _, ok := e.set["name"]; ok {
		g.Name = e.g.Name
	}
	if _, ok := e.set["vendor"]; ok {
		g.Vendor = e.g.Vendor
	}
	if _, ok := e.set["arch"]; ok {
		g.Arch = e.g.Arch
	}
	if _, ok := e.set["aliases"]; ok {
		g.Aliases = e.g.Aliases
	}
	if _, ok := e.set["notes"]; ok {
		g.Notes = e.g.Notes
	}
	// A figure set here replaces the base's figure, so the base's source
	// no longer describes it: take this entry's source, or (user files)
	// say where the number came from.
	for name, line := range e.set {
		if !isSourced(name) {
			continue
		}
		if _, drop := e.unset[name]; drop {
			delete(g.Sources, name)
			continue
		}
		if src, ok := e.sources[name]; ok {
			g.Sources[name] = src
		} else if !opt.builtin {
			g.Sources[name] = fmt.Sprintf("user file %s:%d", opt.origin, line)
		} else {
			delete(g.Sources, name)
		}
	}
	for name, src := range e.sources {
		if _, setHere := e.set[name]; !setHere {
			g.Sources[name] = src // re-sourcing an inherited figure
		}
	}
}

// canonicalSpelling returns the one figures key for a JSON name, so merge
// copies each figure once although it has two spellings.
func canonicalSpelling(json string) string {
	for _, k := range []string{"year", "sms", "base_clock_mhz", "boost_clock_mhz", "sustained_clock_mhz", "clock_power_w", "stream_eff", "vector_gemm_scale", "vector_conv_scale", "stream_rw_eff", "mem_pj_per_byte", "mem_gib",
		"cuda_mem_gib", "mem_bw_gbps", "l2_mib", "l2_bw_gbps", "l2_partitions", "tdp_w", "idle_w", "launch_us", "min_power_w", "max_power_w",
		"min_sm_clock_mhz", "mem_clock_mhz", "nvlink_gen", "nvlink_gbps", "nvlink_domain", "pcie_gen", "pcie_gbps"} {
		if figures[k].json == json {
			return k
		}
	}
	return ""
}

func isSourced(json string) bool {
	if strings.HasPrefix(json, "peak_flops.") {
		return true
	}
	for _, f := range figures {
		if f.json == json {
			return f.sourced
		}
	}
	return false
}

// validate checks a finished GPU: required figures present, sources for
// every figure (built-in data), and relations between figures.
func validate(g *GPU, e *entry, opt parseOptions, el *errList) {
	line := e.line
	if g.Vendor == "" {
		el.add(line, "%s: vendor is required", g.Name)
	}
	if g.Arch == "" {
		el.add(line, "%s: arch is required", g.Name)
	}
	for _, key := range []string{"sms", "boost_clock_mhz", "mem_gib", "mem_bw_gbps", "l2_mib", "tdp_w", "launch_us"} {
		f := figures[key]
		missing := false
		if f.integer {
			missing = *f.iptr(g) == 0
		} else {
			missing = *f.ptr(g) == 0
		}
		if missing {
			el.add(line, "%s: %s is required (or %s in base units)", g.Name, key, f.json)
		}
	}
	if g.Peak[FP32] == 0 {
		el.add(line, "%s: peak_tflops.fp32 is required", g.Name)
	}
	// A tensor path slower than the vector path of its precision is
	// another figure (a sparse or per-SM number, a unit slip): the cost
	// model runs a GEMV on the vector path and a tile on the tensor path,
	// and takes the faster, so such a board would price kernels faster
	// than its stated peak.
	for _, pair := range [][2]Precision{{FP16Tensor, FP16}, {BF16Tensor, BF16}, {TF32Tensor, FP32}, {INT8Tensor, INT8}, {FP64Tensor, FP64}} {
		if t, v := g.Peak[pair[0]], g.Peak[pair[1]]; t > 0 && t < v {
			el.add(e.lineOf("peak_flops."+string(pair[0])), "%s: peak %s %g TFLOPS below the vector path's %s %g TFLOPS", g.Name, pair[0], t/tera, pair[1], v/tera)
		}
	}
	if g.BaseClockMHz > g.BoostClockMHz && g.BoostClockMHz > 0 {
		el.add(e.lineOf("base_clock_mhz"), "%s: base clock %g MHz above boost clock %g MHz", g.Name, g.BaseClockMHz, g.BoostClockMHz)
	}
	if g.SustainedClockMHz > g.BoostClockMHz && g.BoostClockMHz > 0 {
		el.add(e.lineOf("sustained_clock_mhz"), "%s: sustained clock %g MHz above boost clock %g MHz", g.Name, g.SustainedClockMHz, g.BoostClockMHz)
	}
	if g.StreamEff < 0 || g.StreamEff > 1 {
		el.add(e.lineOf("stream_eff"), "%s: stream efficiency %g is not a fraction of the memory bandwidth (0 to 1)", g.Name, g.StreamEff)
	}
	// A board's CUDA-core products run within a factor of two of the
	// model's rate; outside it the figure is of something else.
	if g.VectorGEMMScale != 0 && (g.VectorGEMMScale < 0.5 || g.VectorGEMMScale > 2) {
		el.add(e.lineOf("vector_gemm_scale"), "%s: vector GEMM scale %g is outside 0.5-2 (the time of a CUDA-core product's main loop over the model's)", g.Name, g.VectorGEMMScale)
	}
	if g.VectorConvScale != 0 && (g.VectorConvScale < 0.5 || g.VectorConvScale > 2) {
		el.add(e.lineOf("vector_conv_scale"), "%s: vector convolution scale %g is outside 0.5-2 (the time of a CUDA-core convolution's main loop over the model's)", g.Name, g.VectorConvScale)
	}
	if g.StreamRWEff < 0 || g.StreamRWEff > 1 {
		el.add(e.lineOf("stream_rw_eff"), "%s: read-write stream efficiency %g is not a share of the stream efficiency (0 to 1)", g.Name, g.StreamRWEff)
	}
	if g.IdleWatts >= g.TDPWatts && g.TDPWatts > 0 {
		el.add(e.lineOf("idle_w"), "%s: idle power %g W not below TDP %g W", g.Name, g.IdleWatts, g.TDPWatts)
	}
	// The whole path costs about a hundred pJ per byte (DRAM access alone
	// a few pJ per bit): over 1,000 is a slip of units.
	if g.MemPJPerByte > 1000 {
		el.add(e.lineOf("mem_pj_per_byte"), "%s: memory energy %g pJ/B is not a per-byte figure (expected tens to a few hundred)", g.Name, g.MemPJPerByte)
	}
	// CUDA reports the nominal size less reservations, never more; below
	// 3/4 of it is a unit slip (MiB written as GiB) or another board's figure.
	if g.CUDAMemBytes > 0 && g.MemBytes > 0 && (g.CUDAMemBytes > g.MemBytes || g.CUDAMemBytes < 0.75*g.MemBytes) {
		el.add(e.lineOf("cuda_mem_bytes"), "%s: CUDA-visible memory %.4g GiB must lie between 3/4 of the nominal %.4g GiB and the nominal size (when changing mem_gib/mem_bytes, give cuda_mem_gib/cuda_mem_bytes for the new size or remove it)", g.Name, g.CUDAMemBytes/gib, g.MemBytes/gib)
	}
	validatePowerClocks(g, e, el)
	validateInterconnect(g, e, el)
	if g.LaunchS > 1e-3 {
		el.add(e.lineOf("launch_s"), "%s: launch overhead %g s is over 1 ms; launch_us is in microseconds", g.Name, g.LaunchS)
	}
	for _, name := range figureNames(g) {
		if _, ok := g.Sources[name]; !ok {
			el.add(line, "%s: %s has no source", g.Name, name)
		}
	}
	for name, l := range e.srcLine {
		if !slices.Contains(figureNames(g), name) {
			el.add(l, "%s: source given for %s, which the entry does not have", g.Name, name)
		}
	}
	for _, a := range g.Aliases {
		if normalize(a) == "" {
			el.add(e.lineOf("aliases"), "%s: alias %q is empty once '-', '_' and spaces are dropped", g.Name, a)
		}
	}
	if normalize(g.Name) == "" {
		el.add(line, "name %q is empty once '-', '_' and spaces are dropped", g.Name)
	}
}

// validatePowerClocks checks the power-limit range against the default
// limit (TDP) and the clock range against the rated clocks:
// idle < min power ≤ TDP ≤ max power, min SM clock ≤ base ≤ boost, and a
// sustained clock inside the range.
func validatePowerClocks(g *GPU, e *entry, el *errList) {
	if g.MinPowerW > 0 && g.MinPowerW > g.TDPWatts && g.TDPWatts > 0 {
		el.add(e.lineOf("min_power_w"), "%s: min power limit %g W above the default limit (TDP) %g W", g.Name, g.MinPowerW, g.TDPWatts)
	}
	if g.MaxPowerW > 0 && g.MaxPowerW < g.TDPWatts {
		el.add(e.lineOf("max_power_w"), "%s: max power limit %g W below the default limit (TDP) %g W", g.Name, g.MaxPowerW, g.TDPWatts)
	}
	if g.MinPowerW > 0 && g.MaxPowerW > 0 && g.MinPowerW > g.MaxPowerW {
		el.add(e.lineOf("min_power_w"), "%s: min power limit %g W above max power limit %g W", g.Name, g.MinPowerW, g.MaxPowerW)
	}
	// idle_w is the draw between kernels of a running job, and the power
	// model holds it fixed under a cap (cost/perf/power.go): a cap at or
	// below it cannot be met. The driver can hold the board at its minimum
	// limit, so an idle figure at or above that limit is a reading of
	// something else (a busy process, clocks the limit would lower) and
	// would put part of the GPU's own limit range out of reach.
	if g.MinPowerW > 0 && g.IdleWatts >= g.MinPowerW {
		el.add(e.lineOf("idle_w"), "%s: idle power %g W not below the min power limit %g W (idle_w is the draw between kernels, which every settable limit must exceed)", g.Name, g.IdleWatts, g.MinPowerW)
	}
	if g.MinSMClockMHz > 0 {
		if floor := max(g.BaseClockMHz, g.SustainedClockMHz); g.MinSMClockMHz > g.BoostClockMHz || (floor > 0 && g.MinSMClockMHz > floor) {
			el.add(e.lineOf("min_sm_clock_mhz"), "%s: min SM clock %g MHz above the base, sustained or boost clock", g.Name, g.MinSMClockMHz)
		}
	}
}

// Per-direction ceilings by generation, GB/s: PCIe x16 (8, 16, 32, 64
// GT/s per lane, 128b/130b coding from gen 3; gen 6 uses FLIT/PAM4,
// ~121 GB/s) and NVLink per GPU at the most links any part has
// (NVLink1 4 x 20, NVLink2 6 x 25, NVLink3 12 x 25, NVLink4 18 x 25,
// NVLink5 18 x 50). A figure above its generation's ceiling is a
// bidirectional number entered as one direction.
var (
	pcieCeilingGBps   = map[int]float64{1: 4, 2: 8, 3: 15.76, 4: 31.51, 5: 63.02, 6: 121}
	nvlinkCeilingGBps = map[int]float64{1: 80, 2: 150, 3: 300, 4: 450, 5: 900}
)

// validateInterconnect checks that each link bandwidth comes with its
// generation and fits in one direction of it.
func validateInterconnect(g *GPU, e *entry, el *errList) {
	check := func(kind, genKey, bwKey string, gen int, bw float64, ceil map[int]float64) {
		if (gen > 0) != (bw > 0) {
			el.add(e.line, "%s: %s and %s go together (a bandwidth needs its generation)", g.Name, genKey, bwKey)
			return
		}
		if gen == 0 {
			return
		}
		c, ok := ceil[gen]
		if !ok {
			el.add(e.lineOf(genKey), "%s: unknown %s generation %d", g.Name, kind, gen)
			return
		}
		if bw > c*giga*1.001 {
			el.add(e.lineOf(bwKey), "%s: %s bandwidth %g GB/s exceeds one direction of %s gen %d (%g GB/s): give bytes/s per direction, not both directions added",
				g.Name, kind, bw/giga, kind, gen, c)
		}
	}
	check("PCIe", "pcie_gen", "pcie_gbps", g.PCIeGen, g.PCIeBW, pcieCeilingGBps)
	check("NVLink", "nvlink_gen", "nvlink_gbps", g.NVLinkGen, g.NVLinkBW, nvlinkCeilingGBps)
	if (g.NVLinkBW > 0) != (g.NVLinkDomain > 0) {
		el.add(e.line, "%s: nvlink_gbps and nvlink_domain go together (how many GPUs the NVLink fabric joins)", g.Name)
	} else if g.NVLinkDomain == 1 || g.NVLinkDomain > 576 {
		el.add(e.lineOf("nvlink_domain"), "%s: nvlink_domain %d must be 2..576 GPUs", g.Name, g.NVLinkDomain)
	}
}

// figureNames lists the JSON names of the sourced figures g has, sorted.
func figureNames(g *GPU) []string {
	var names []string
	for _, f := range figures {
		has := false
		if f.integer {
			has = *f.iptr(g) != 0
		} else {
			has = *f.ptr(g) != 0
		}
		if f.sourced && has && !slices.Contains(names, f.json) {
			names = append(names, f.json)
		}
	}
	for p := range g.Peak {
		names = append(names, "peak_flops."+string(p))
	}
	sort.Strings(names)
	return names
}

// Clone returns a deep copy, so callers may adjust figures (e.g. apply a
// measured ceiling) without touching the shared database.
func (g *GPU) Clone() *GPU {
	c := *g
	c.Aliases = slices.Clone(g.Aliases)
	c.Notes = slices.Clone(g.Notes)
	c.Peak = make(map[Precision]float64, len(g.Peak))
	for k, v := range g.Peak {
		c.Peak[k] = v
	}
	c.Sources = make(map[string]string, len(g.Sources))
	for k, v := range g.Sources {
		c.Sources[k] = v
	}
	return &c
}

// LoadFile reads a user spec file (YAML or JSON, a regular file of at
// most safefile.SideFileLimit bytes). Entries may name a
// built-in GPU as "base:" and override only the figures they measured; an
// entry whose name is a built-in one replaces it when used through
// WithUserFile.
func LoadFile(path string) ([]*GPU, error) {
	data, err := safefile.ReadFile(path, safefile.SideFileLimit)
	if err != nil {
		// Named as a parse error is ("FILE: problem"), not "stat FILE: …".
		return nil, fmt.Errorf("%s: %w", path, safefile.Reason(err))
	}
	return ParseData(path, data)
}

// ParseData is LoadFile for a file's contents; name stands for its path
// in messages and in the sources of figures it leaves unsourced.
func ParseData(name string, data []byte) ([]*GPU, error) {
	b, err := builtin()
	if err != nil {
		return nil, err
	}
	return parse(data, parseOptions{origin: name, bases: b})
}
