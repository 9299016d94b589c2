package pipeline

import (
	"maps"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/models"
)

// ZooPrefix marks a model path that names a built-in zoo model instead of
// a file: "zoo:NAME" or "zoo:NAME?k=v&k=v" (k a zoo parameter of NAME).
const ZooPrefix = "zoo:"

// IsZoo reports whether a model path names a zoo model.
func IsZoo(path string) bool { return strings.HasPrefix(path, ZooPrefix) }

// ZooSpec is a parsed "zoo:NAME?k=v" path.
type ZooSpec struct {
	Entry  models.Entry
	Params map[string]int64
}

// ParseZoo parses a "zoo:NAME?k=v&k=v" model path. Parameter values are
// integers; a repeated key is an error, as is an unknown model (the
// message lists the known ones). Unknown parameter names are reported by
// the entry's Build, which lists the known ones.
func ParseZoo(path string) (*ZooSpec, error) {
	rest := strings.TrimPrefix(path, ZooPrefix)
	name, query, _ := strings.Cut(rest, "?")
	e, ok := models.Lookup(name)
	if !ok {
		return nil, inputErr("%s: unknown zoo model %q (one of %s)", path, name, strings.Join(models.Names(), ", "))
	}
	params := map[string]int64{}
	if query != "" {
		for _, kv := range strings.Split(query, "&") {
			k, v, ok := strings.Cut(kv, "=")
			k, _ = url.QueryUnescape(k)
			if !ok || k == "" {
				return nil, inputErr("%s: zoo parameter %q: want K=V", path, kv)
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return nil, inputErr("%s: zoo parameter %s=%q: value must be an integer", path, k, v)
			}
			if _, dup := params[k]; dup {
				return nil, inputErr("%s: zoo parameter %s given twice", path, k)
			}
			params[k] = n
		}
	}
	return &ZooSpec{Entry: e, Params: params}, nil
}

// ZooPath writes a zoo model path with params in sorted order, so that
// the same model always gets the same name.
func ZooPath(name string, params map[string]int64) string {
	if len(params) == 0 {
		return ZooPrefix + name
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatInt(params[k], 10)
	}
	return ZooPrefix + name + "?" + strings.Join(parts, "&")
}

// hasParam reports whether the entry has a parameter called name.
func (z *ZooSpec) hasParam(name string) bool {
	for _, p := range z.Entry.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

// loadZoo builds a zoo model in memory and runs it through the rest of
// the pipeline. The zoo's models name their symbolic dims "batch" and
// "seq"; --batch N and --dim seq=N therefore set those parameters when
// the path does not, so `report zoo:resnet50 --batch 8` costs batch 8
// (a zoo model's batch is otherwise concrete, 1 by default, and --batch
// would have nothing to bind).
func loadZoo(path string, opt Options) (*Loaded, error) {
	z, err := ParseZoo(path)
	if err != nil {
		return nil, err
	}
	params := make(map[string]int64, len(z.Params)+2)
	for k, v := range z.Params {
		params[k] = v
	}
	if b, set := params["batch"]; set && opt.Batch > 0 && b != opt.Batch {
		return nil, inputErr("%s: --batch %d conflicts with batch=%d in the zoo path", path, opt.Batch, b)
	}
	if _, set := params["batch"]; !set && opt.Batch > 0 && z.hasParam("batch") {
		params["batch"] = opt.Batch
	}
	// A zoo parameter of 0 means its default, so --dim seq=0 is left a
	// binding: it then matches nothing and says so.
	// A path's seq=-1 keeps the dim symbolic, and the binding binds it.
	if v, ok := opt.Dims["seq"]; ok && v > 0 && z.hasParam("seq") && params["seq"] >= 0 {
		if s, set := params["seq"]; set && s != v {
			return nil, inputErr("%s: --dim seq=%d conflicts with seq=%d in the zoo path", path, v, s)
		}
		params["seq"] = v
		// The model is built at that length, so no input dim is left for
		// the binding to match: kept, it would warn that it matched
		// nothing when it did all it could.
		opt.Dims = maps.Clone(opt.Dims)
		delete(opt.Dims, "seq")
	}
	m, err := z.Entry.Build(params)
	if err != nil {
		return nil, inputErr("%s: %w", path, err)
	}
	m.Path = path
	// The zoo built the batch in: the model's batch dim is concrete now,
	// and binding it again would read as a static export to rewrite.
	if _, ok := params["batch"]; ok {
		opt.Batch = 0
	}
	l, err := finish(path, m, opt)
	if err != nil {
		return nil, err
	}
	// The parameters that stand for dims are bindings in all but name: a
	// report of zoo:resnet50?batch=8 says batch 8, as one of a file bound
	// with --batch 8 would.
	for _, k := range []string{"batch", "seq"} {
		if v, ok := params[k]; ok && v > 0 {
			l.Bindings[k] = v
		}
	}
	return l, nil
}
