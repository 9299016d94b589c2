// Package session is what the browser build of onnxcost runs: one model
// held in memory as bytes, estimated again under each new setting (GPU,
// dtype, batch, symbols, plan) through the same pipeline as the command
// line (internal/pipeline), so the page and `onnxcost report` give the
// same numbers. It is plain Go, compiled natively for tests and to
// WebAssembly for the page (web/wasm).
package session

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/pipeline"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/viz"
)

// Settings are the command-line flags the page offers, by their flag
// names: --gpu, --dtype, --batch, --dim NAME=V, --plan.
type Settings struct {
	GPU   string           `json:"gpu"`
	DType string           `json:"dtype"`
	Batch int64            `json:"batch"`
	Dims  map[string]int64 `json:"dims"`
	Plan  string           `json:"plan"`
}

// Session is one model held as bytes. The fusion passes rewrite a graph
// in place, so every estimate loads the model again from the bytes
// (milliseconds, and it keeps each estimate independent of the last).
type Session struct {
	name    string
	data    []byte
	version string
	db      *hwdb.DB
	symbols []Symbol
	// fresh is Open's load, unbound and unplanned, kept for the first
	// estimate under default bindings (a page's first view): loading is
	// most of an estimate's cost in WebAssembly. Used once, since the
	// passes rewrite it.
	fresh *pipeline.Loaded
}

// Symbol is a symbolic dim of a graph input.
type Symbol struct {
	Name string `json:"name"`
	// Leading is true when the symbol is the first dim of some input, so
	// that --batch binds it.
	Leading bool `json:"leading"`
	// Inputs name the graph inputs that use it.
	Inputs []string `json:"inputs"`
}

// Open reads a model from bytes; name stands for the file path in every
// message (the CLI names the path it was given). A model that cannot be
// read gives the error the CLI prints for it.
func Open(name string, data []byte, toolVersion string) (*Session, error) {
	db, err := hwdb.Builtin()
	if err != nil {
		return nil, err
	}
	s := &Session{name: name, data: data, version: toolVersion, db: db}
	l, err := pipeline.LoadBytes(name, data, pipeline.Options{BindAll: true})
	if err != nil {
		return nil, err
	}
	s.symbols = symbolsOf(l)
	s.fresh = l
	return s, nil
}

// Name is the model's name as given to Open.
func (s *Session) Name() string { return s.name }

// Symbols lists the symbolic dims of the model's graph inputs, sorted.
func (s *Session) Symbols() []Symbol { return s.symbols }

// symbolsOf collects the symbolic dims of the declared graph inputs.
func symbolsOf(l *pipeline.Loaded) []Symbol {
	by := map[string]*Symbol{}
	for _, in := range l.Model.Graph.Inputs {
		if in == nil || in.IsInitializer || in.Declared == nil {
			continue
		}
		for i, d := range in.Declared.Shape.Dims {
			if d.IsKnown() || d.Sym == "" {
				continue
			}
			sym := by[d.Sym]
			if sym == nil {
				sym = &Symbol{Name: d.Sym}
				by[d.Sym] = sym
			}
			sym.Leading = sym.Leading || i == 0
			if n := len(sym.Inputs); n == 0 || sym.Inputs[n-1] != in.Name {
				sym.Inputs = append(sym.Inputs, in.Name)
			}
		}
	}
	out := make([]Symbol, 0, len(by))
	for _, sym := range by {
		out = append(out, *sym)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// validDTypes are the values --dtype accepts ("" is the model's own).
var validDTypes = []string{"", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"}

// check validates settings with the CLI's messages for the same flags.
func (s *Session) check(st *Settings) (*hwdb.GPU, error) {
	if st.Plan == "" {
		st.Plan = "fused"
	}
	if st.GPU == "" {
		return nil, fmt.Errorf("--gpu is required (see 'onnxcost gpus' for the list)")
	}
	if err := checkValue("--dtype", st.DType, validDTypes...); err != nil {
		return nil, err
	}
	if err := checkValue("--plan", st.Plan, "fused", "unfused"); err != nil {
		return nil, err
	}
	if st.Batch < 0 {
		return nil, fmt.Errorf("--batch must be positive, got %d", st.Batch)
	}
	for k, v := range st.Dims {
		if strings.TrimSpace(k) == "" || v <= 0 {
			return nil, fmt.Errorf("--dim %q: value must be a positive integer", fmt.Sprintf("%s=%d", k, v))
		}
	}
	g, err := s.db.Lookup(st.GPU)
	if err != nil {
		return nil, fmt.Errorf("--gpu: %w", err)
	}
	return g, nil
}

// checkValue requires a value to be one of allowed, with the CLI's message.
func checkValue(flag, got string, allowed ...string) error {
	var named []string
	for _, a := range allowed {
		if got == a {
			return nil
		}
		if a != "" {
			named = append(named, a)
		}
	}
	return fmt.Errorf("%s %q: want one of %s", flag, got, strings.Join(named, "|"))
}

// load reads the bytes again and runs the plan's passes, as `report` does.
func (s *Session) load(st Settings) (*pipeline.Loaded, error) {
	var l *pipeline.Loaded
	if s.fresh != nil && st.Batch == 0 && len(st.Dims) == 0 {
		l, s.fresh = s.fresh, nil
	} else {
		var err error
		l, err = pipeline.LoadBytes(s.name, s.data, pipeline.Options{Batch: st.Batch, Dims: st.Dims, BindAll: true})
		if err != nil {
			return nil, err
		}
	}
	// The CLI's default pass flags: all passes, no checks, no dumps.
	if err := l.Plan(st.Plan, passes.Options{DumpTo: io.Discard}); err != nil {
		return nil, err
	}
	return l, nil
}

// Estimate is `onnxcost report MODEL --format json` under the settings.
func (s *Session) Estimate(st Settings) (*report.Report, error) {
	r, _, _, err := s.estimate(st)
	return r, err
}

func (s *Session) estimate(st Settings) (*report.Report, *pipeline.Loaded, *hwdb.GPU, error) {
	gpu, err := s.check(&st)
	if err != nil {
		return nil, nil, nil, err
	}
	l, err := s.load(st)
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := pipeline.Estimate(l, gpu, pipeline.EstimateOptions{
		DType: st.DType, Plan: st.Plan, ToolVersion: s.version, ModelName: s.name,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return r, l, gpu, nil
}

// GPURow is one GPU of the comparison table.
type GPURow struct {
	GPU    string `json:"gpu"`
	Vendor string `json:"vendor"`
	Arch   string `json:"arch"`
	// Totals are the report's totals on this GPU; Err is set instead when
	// the model cannot be costed there (e.g. fp8 on a GPU without it).
	Totals *report.Totals `json:"totals,omitempty"`
	Err    string         `json:"error,omitempty"`
}

// GPUs costs the model on every GPU of the database under the other
// settings (st.GPU is ignored): each row's totals are what `report --gpu
// ROW` prints. The model is loaded and planned once (neither depends on
// the GPU) and costed per GPU.
func (s *Session) GPUs(st Settings) ([]GPURow, error) {
	if st.Plan == "" {
		st.Plan = "fused"
	}
	all := s.db.All()
	if len(all) == 0 {
		return nil, fmt.Errorf("the GPU database is empty")
	}
	st.GPU = all[0].Name
	if _, err := s.check(&st); err != nil {
		return nil, err
	}
	l, err := s.load(st)
	if err != nil {
		return nil, err
	}
	rows := make([]GPURow, 0, len(all))
	for _, g := range all {
		row := GPURow{GPU: g.Name, Vendor: g.Vendor, Arch: g.Arch}
		r, err := pipeline.Estimate(l, g, pipeline.EstimateOptions{
			DType: st.DType, Plan: st.Plan, ToolVersion: s.version, ModelName: s.name,
		})
		if err != nil {
			row.Err = err.Error()
		} else {
			t := r.Totals
			row.Totals = &t
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// GPUList is the database's GPUs, as `onnxcost gpus --format json` lists them.
func (s *Session) GPUList() []*hwdb.GPU { return s.db.All() }

// Views are the drawings of one estimate: the annotated graph as DOT (the
// page lays it out with Graphviz) and the roofline's data (the page draws
// it: the chart library of `onnxcost roofline` would triple the
// WebAssembly's size).
type Views struct {
	DOT      string   `json:"dot"`
	Roofline Roofline `json:"roofline"`
}

// Roofline is the data of a roofline chart: the GPU's roofs and every
// node placed under them, for the plan and (when the plan is fused) the
// unfused plan.
type Roofline struct {
	HBMBW     float64 `json:"hbm_bw"`
	L2BW      float64 `json:"l2_bw"`
	L2Assumed bool    `json:"l2_assumed"`
	// Peaks are the compute roofs of the precisions the nodes run at.
	Peaks   map[string]float64 `json:"peaks"`
	Points  []RoofPoint        `json:"points"`
	Unfused []RoofPoint        `json:"unfused,omitempty"`
}

// RoofPoint is one node under the roofs (viz.RoofOf).
type RoofPoint struct {
	Name      string  `json:"name"`
	OpType    string  `json:"op_type"`
	AI        float64 `json:"ai"`       // FLOP/byte
	Achieved  float64 `json:"achieved"` // estimated FLOP/s
	Roof      float64 `json:"roof"`
	Ceiling   string  `json:"ceiling"`
	Precision string  `json:"precision"`
	TimeS     float64 `json:"time_s"`
}

// Draw is `onnxcost graph MODEL` (default flags) under the settings, the
// DOT of the plan's graph, collapsed by module when large, with the data
// of `onnxcost roofline MODEL`.
func (s *Session) Draw(st Settings) (*Views, error) {
	r, l, gpu, err := s.estimate(st)
	if err != nil {
		return nil, err
	}
	ceil := viz.CeilingsOf(gpu)
	opt := viz.GraphOptions{Color: "bound", Halo: viz.DefaultHalo, RankDir: "TB"}
	opt.Inputs, opt.Outputs = l.GraphIO()
	src, err := viz.DOT(r, ceil, opt)
	if err != nil {
		return nil, err
	}
	v := &Views{DOT: src, Roofline: Roofline{HBMBW: ceil.HBMBW, L2BW: ceil.L2BW, L2Assumed: ceil.L2Assumed, Peaks: map[string]float64{}}}
	v.Roofline.Points = roofPoints(r, ceil, v.Roofline.Peaks)
	if st.Plan == "" || st.Plan == "fused" {
		u := st
		u.Plan = "unfused"
		ur, err := s.Estimate(u)
		if err != nil {
			return nil, err
		}
		v.Roofline.Unfused = roofPoints(ur, ceil, v.Roofline.Peaks)
	}
	return v, nil
}

// roofPoints places every node that runs a kernel with FLOPs and bytes
// (log axes cannot show the others) and records the peaks it uses.
func roofPoints(r *report.Report, c viz.Ceilings, peaks map[string]float64) []RoofPoint {
	out := []RoofPoint{}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		rf := c.RoofOf(n)
		if n.FLOPs <= 0 || n.BytesRead+n.BytesWritten <= 0 || rf.Achieved <= 0 || rf.AI <= 0 {
			continue
		}
		if n.Precision != "" {
			peaks[n.Precision] = c.Peak(n.Precision)
		}
		out = append(out, RoofPoint{Name: n.Name, OpType: ir.QualifiedOp(n.Domain, n.OpType), AI: rf.AI,
			Achieved: rf.Achieved, Roof: rf.Roof, Ceiling: string(rf.Ceiling), Precision: n.Precision, TimeS: n.TimeS})
	}
	return out
}

// Text is the report's totals as the CLI's text report writes them
// (cost/render), keyed by the JSON field (plus "bytes": read + written),
// so the page's cards read exactly as `report` prints.
func Text(r *report.Report) map[string]string {
	t := r.Totals
	return map[string]string{
		"header":               render.Clean(render.Header(r)),
		"time_s":               render.Seconds(t.TimeS),
		"flops":                render.FLOPs(t.FLOPs),
		"macs":                 render.Count(t.MACs),
		"transcendentals":      render.Count(t.Transcendentals),
		"bytes":                render.Bytes(t.BytesRead + t.BytesWritten),
		"bytes_read":           render.Bytes(t.BytesRead),
		"bytes_written":        render.Bytes(t.BytesWritten),
		"launches":             render.Count(t.Launches),
		"peak_memory_bytes":    render.Bytes(t.PeakMemoryBytes),
		"energy_j":             render.Joules(t.EnergyJ),
		"params":               render.Count(t.Params),
		"param_bytes":          render.Bytes(t.ParamBytes),
		"gemm_conv_time_share": render.Percent(t.GEMMConvTimeShare),
		"nodes":                render.Count(float64(t.Nodes)),
	}
}
