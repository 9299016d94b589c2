package kernelrows

import (
	"cmp"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// Vidur's mlp.csv (microsoft/vidur @ 7d475133, data/profiling/compute/
// <gpu>/<org>/<model>/mlp.csv; testdata/vidur/README.md) times each operator
// of one transformer block, fp16, per token count and tensor-parallel
// degree, as the sum of the durations of the GPU kernels it launched (no
// launch gaps). The shapes are those of vidur/profiling/mlp/mlp_impl.py:
//
//	attn_pre_proj   [T×E]·[E×(heads+2·kv_heads)·hd/TP]   (ColumnParallelLinear)
//	attn_post_proj  [T×heads·hd/TP]·[heads·hd/TP×E]       (RowParallelLinear)
//	mlp_up_proj     [T×E]·[E×2·H/TP] gated, [E×H/TP] not
//	mlp_down_proj   [T×H/TP]·[H/TP×E]
//	*_layernorm     RMSNorm over E per token (LayerNorm for the non-gated phi-2)
//	attn_rope       one rotary kernel over q and k: (heads+kv_heads)/TP heads of hd
//	mlp_act         SiluAndMul [T×2·H/TP] → [T×H/TP] gated, GELU [T×H/TP] not
//	add             residual + hidden [T×E]; phi-2 (no post-attention norm)
//	                times attn + ffn + residual, two adds
//	emb             embedding gather of T rows of E from a vocab/TP table
//
// with T = num_tokens, E = n_embd, H = n_expanded_embd, hd = E/heads.

// vidurGPUs maps Vidur's device folders to hwdb entries. Vidur does not
// record the SKU of its compute profiles (docs/profiling.md: one "a100"
// folder serves both the A100 80GB DGX and the Azure NC A100 v4 PCIe node).
// A100: the SXM4 80GB of the DGX (README's first column); H100: the SXM5
// of the H100 DGX (its fp16 GEMMs reach 748 TFLOP/s, above an H100 PCIe's
// dense peak); A40: hwdb's A40 (there is one SKU). The refit prices the
// A100 rows as the PCIe card (refit_test.go, vidurPricedOn: its largest
// GEMMs top out at the 300 W card's 80–81% of peak).
var vidurGPUs = map[string]string{"a100": "A100-SXM4-80GB", "h100": "H100-SXM5-80GB", "a40": "A40"}

// vidurOps are the op columns, in the files' order.
var vidurOps = []string{"emb", "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
	"post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"}

// vidurConfig is a row's model shape.
type vidurConfig struct {
	heads, kvHeads, embd, hidden, vocab, tokens, tp int64
	gated, postNorm                                 bool
}

// vidurMeasure is one measured op of one row.
type vidurMeasure struct {
	gpu, op string
	cfg     vidurConfig
	medianS float64
}

// LoadVidur reads every <gpu>/<org>/<model>/mlp.csv (or mlp.csv.gz) in
// fsys and returns one row per unique (GPU, op, shape): the median of the
// medians of the rows that share it (the same shape in several models,
// and the token counts the profiler repeats). skipped says what could not
// be mapped to a kernel, with counts.
func LoadVidur(fsys fs.FS) (rows []Row, skipped []string, err error) {
	var names []string
	for _, pat := range []string{"*/*/*/mlp.csv", "*/*/*/mlp.csv.gz"} {
		m, err := fs.Glob(fsys, pat)
		if err != nil {
			return nil, nil, err
		}
		names = append(names, m...)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("vidur: no */*/*/mlp.csv under the data folder")
	}
	var ms []vidurMeasure
	for _, name := range names {
		got, err := readVidurFile(fsys, name)
		if err != nil {
			return nil, nil, err
		}
		ms = append(ms, got...)
	}
	return vidurRows(ms)
}

// csvTable reads a CSV with a header row from r (gunzipped when name ends
// in .gz): the data records and each column's index; errors name name.
func csvTable(name string, r io.Reader) (recs [][]string, col map[string]int, err error) {
	if path.Ext(name) == ".gz" {
		z, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", name, err)
		}
		defer z.Close()
		r = z
	}
	recs, err = csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(recs) < 2 {
		return nil, nil, fmt.Errorf("%s: no data rows", name)
	}
	col = map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	return recs[1:], col, nil
}

// readVidurFile parses one mlp.csv into its measured ops.
func readVidurFile(fsys fs.FS, name string) ([]vidurMeasure, error) {
	gpu, ok := vidurGPUs[strings.Split(name, "/")[0]]
	if !ok {
		return nil, fmt.Errorf("%s: device folder not one of a100, h100, a40", name)
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, col, err := csvTable(name, f)
	if err != nil {
		return nil, err
	}
	var out []vidurMeasure
	for i, rec := range recs {
		cfg, err := vidurRowConfig(rec, col)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %v", name, i+2, err)
		}
		for _, op := range vidurOps {
			j, ok := col["time_stats."+op+".median"]
			if !ok {
				continue
			}
			ms, err := strconv.ParseFloat(rec[j], 64)
			if err != nil || !(ms > 0) {
				return nil, fmt.Errorf("%s: line %d: %s median %q is not a positive time", name, i+2, op, rec[j])
			}
			out = append(out, vidurMeasure{gpu: gpu, op: op, cfg: cfg, medianS: ms * 1e-3})
		}
	}
	return out, nil
}

// vidurRowConfig reads a row's model shape. A file without the
// post_attention_layernorm column is a model without the norm (phi-2),
// whose timed add is attn + ffn + residual.
func vidurRowConfig(rec []string, col map[string]int) (vidurConfig, error) {
	var c vidurConfig
	ints := []struct {
		name string
		v    *int64
	}{{"n_head", &c.heads}, {"n_kv_head", &c.kvHeads}, {"n_embd", &c.embd}, {"n_expanded_embd", &c.hidden},
		{"vocab_size", &c.vocab}, {"num_tokens", &c.tokens}, {"num_tensor_parallel_workers", &c.tp}}
	for _, f := range ints {
		j, ok := col[f.name]
		if !ok {
			return c, fmt.Errorf("no %s column", f.name)
		}
		v, err := strconv.ParseInt(rec[j], 10, 64)
		if err != nil || v <= 0 {
			return c, fmt.Errorf("%s %q is not a positive integer", f.name, rec[j])
		}
		*f.v = v
	}
	j, ok := col["use_gated_mlp"]
	if !ok {
		return c, fmt.Errorf("no use_gated_mlp column")
	}
	c.gated = rec[j] == "True"
	_, c.postNorm = col["time_stats.post_attention_layernorm.median"]
	if c.embd%c.heads != 0 || c.heads%c.tp != 0 || c.kvHeads%c.tp != 0 || c.hidden%c.tp != 0 || c.vocab%c.tp != 0 {
		return c, fmt.Errorf("shape not divisible by TP %d", c.tp)
	}
	return c, nil
}

// vidurKey is a unique (GPU, op, shape).
type vidurKey struct {
	gpu, op string
	shape   string
}

// vidurRows turns measurements into deduplicated rows with the hold-out:
// within each (GPU, op), in shape order, every 4th shape is held out.
func vidurRows(ms []vidurMeasure) ([]Row, []string, error) {
	times := map[vidurKey][]float64{}
	specs := map[vidurKey]vidurShape{}
	skips := map[string]int{}
	for _, m := range ms {
		sh, why := vidurSpec(m.op, m.cfg)
		if why != "" {
			skips[m.op+": "+why]++
			continue
		}
		k := vidurKey{m.gpu, m.op, sh.name}
		times[k] = append(times[k], m.medianS)
		specs[k] = sh
	}
	type entry struct {
		vidurKey
		sh vidurShape
	}
	keys := make([]entry, 0, len(times))
	for k := range times {
		keys = append(keys, entry{k, specs[k]})
	}
	slices.SortFunc(keys, func(a, b entry) int {
		// The name breaks ties, so the order (and the hold-out) never
		// depends on map order.
		return cmp.Or(cmp.Compare(a.gpu, b.gpu), cmp.Compare(a.op, b.op),
			slices.Compare(a.sh.order, b.sh.order), cmp.Compare(a.shape, b.shape))
	})
	rows := make([]Row, 0, len(keys))
	seen := map[[2]string]int{}
	gpus := map[string]*hwdb.GPU{}
	for _, e := range keys {
		k, sh := e.vidurKey, e.sh
		gpu, ok := gpus[k.gpu]
		if !ok {
			var err error
			if gpu, err = lookupGPU(k.gpu, "vidur"); err != nil {
				return nil, nil, err
			}
			gpus[k.gpu] = gpu
		}
		kern, err := sh.spec.kernel(gpu)
		if err != nil {
			return nil, nil, fmt.Errorf("vidur %s %s %s: %v", k.gpu, k.op, k.shape, err)
		}
		i := seen[[2]string{k.gpu, k.op}]
		seen[[2]string{k.gpu, k.op}]++
		spec := sh.spec
		rows = append(rows, Row{Source: SourceVidur, GPU: k.gpu, Op: k.op, Shape: k.shape,
			Class: kern.Class, Kernel: kern, Compute: "fp16", Repeat: sh.repeat, Setting: perf.InPlan,
			MeasuredS: median(times[k]), HeldOut: i%4 == 3, spec: &spec})
	}
	var skipped []string
	for _, why := range sortedKeys(skips) {
		skipped = append(skipped, fmt.Sprintf("vidur %s (%d rows)", why, skips[why]))
	}
	return rows, skipped, nil
}

// vidurShape is the node an op runs, its name in words and the numbers
// that order shapes within an op.
type vidurShape struct {
	spec   nodeSpec
	name   string
	order  []int64
	repeat int
}

// vidurSpec maps one op of a row to its node; why says why it cannot.
func vidurSpec(op string, c vidurConfig) (vidurShape, string) {
	hd := c.embd / c.heads
	t := c.tokens
	switch op {
	case "attn_pre_proj":
		return matmul(t, (c.heads+2*c.kvHeads)*hd/c.tp, c.embd), ""
	case "attn_post_proj":
		return matmul(t, c.embd, c.heads*hd/c.tp), ""
	case "mlp_up_proj":
		n := c.hidden / c.tp
		if c.gated {
			n *= 2
		}
		return matmul(t, n, c.embd), ""
	case "mlp_down_proj":
		return matmul(t, c.embd, c.hidden/c.tp), ""
	case "input_layernorm", "post_attention_layernorm":
		return norm(t, c.embd, c.gated), ""
	case "attn_rope":
		return rope(t, (c.heads+c.kvHeads)/c.tp, hd), ""
	case "mlp_act":
		return act(t, c.hidden/c.tp, c.gated), ""
	case "add":
		s := fp16Node("Add", []int64{t, c.embd}, []int64{t, c.embd})
		s.spec.out = tensorSpec{ir.Float16, []int64{t, c.embd}}
		s.name, s.order = fmt.Sprintf("T=%d E=%d", t, c.embd), []int64{t, c.embd}
		// Each add reads one tensor the kernel before it wrote, the
		// other from long before (vidur/profiling/mlp/mlp_impl.py: the
		// add timer wraps residual + hidden_states, or, for a block
		// without the post-attention norm, attn_outputs + feed_forward +
		// residual, two adds): the down projection's output beside the
		// first residual sum, which the MLP's weights have since pushed
		// out of L2; or the down projection's output beside the
		// attention's, then that sum beside the block's input.
		s = justWritten(s, 0)
		if !c.postNorm {
			s.repeat = 2
		}
		return s, ""
	case "emb":
		if c.tp > 1 {
			// VocabParallelEmbedding at TP > 1 also masks the ids outside
			// its shard and zeroes their rows (several more kernels, whose
			// count the data does not show).
			return vidurShape{}, "TP > 1 (the vocab-shard masking kernels are timed with the gather)"
		}
		s := vidurShape{spec: nodeSpec{op: "Gather", compute: "fp16",
			ins: []tensorSpec{{ir.Float16, []int64{c.vocab, c.embd}}, {ir.Int64, []int64{t}}},
			out: tensorSpec{ir.Float16, []int64{t, c.embd}}}}
		s.name, s.order = fmt.Sprintf("T=%d V=%d E=%d", t, c.vocab, c.embd), []int64{t, c.vocab, c.embd}
		return s, ""
	}
	return vidurShape{}, "unknown op"
}

// justWritten marks inputs of s's node as written by the kernel before
// it (nodeSpec.justWritten).
func justWritten(s vidurShape, inputs ...int) vidurShape {
	s.spec.justWritten = make([]bool, len(s.spec.ins))
	for _, i := range inputs {
		s.spec.justWritten[i] = true
	}
	return s
}

// fp16Node is op over fp16 inputs of the given dims.
func fp16Node(op string, dims ...[]int64) vidurShape {
	s := nodeSpec{op: op, compute: "fp16"}
	for _, d := range dims {
		s.ins = append(s.ins, tensorSpec{ir.Float16, d})
	}
	return vidurShape{spec: s}
}

// matmul is [m×k]·[k×n] in fp16 (F.linear: cuBLAS; a bias, where the
// model has one, rides in the epilogue and is not priced).
func matmul(m, n, k int64) vidurShape {
	s := fp16Node("MatMul", []int64{m, k}, []int64{k, n})
	s.spec.out = tensorSpec{ir.Float16, []int64{m, n}}
	s.name, s.order = fmt.Sprintf("M=%d N=%d K=%d", m, n, k), []int64{n, k, m}
	return s
}

// norm is RMSNorm (sarathi's rms_norm kernel) or, for a non-gated model,
// LayerNorm with a bias (torch.nn.LayerNorm), over e per token.
func norm(t, e int64, rms bool) vidurShape {
	var s vidurShape
	if rms {
		s = fp16Node("RMSNormalization", []int64{t, e}, []int64{e})
	} else {
		s = fp16Node("LayerNormalization", []int64{t, e}, []int64{e}, []int64{e})
	}
	s.spec.attrs = []*ir.Attribute{ir.IntAttr("axis", -1)}
	s.spec.out = tensorSpec{ir.Float16, []int64{t, e}}
	s.name, s.order = fmt.Sprintf("T=%d E=%d", t, e), []int64{e, t}
	return s
}

// rope is sarathi's rotary kernel, which rotates q and k in place in one
// launch: one RotaryEmbedding over heads heads of hd (the whole head: the
// profiler builds get_rope with rotary_dim = head size), cos/sin caches of
// the positions used.
func rope(t, heads, hd int64) vidurShape {
	s := fp16Node("RotaryEmbedding", []int64{1, t, heads * hd}, []int64{t, hd / 2}, []int64{t, hd / 2})
	s.spec.ins = append(s.spec.ins, tensorSpec{ir.Int64, []int64{1, t}})
	s.spec.attrs = []*ir.Attribute{ir.IntAttr("num_heads", heads)}
	s.spec.out = tensorSpec{ir.Float16, []int64{1, t, heads * hd}}
	s.name, s.order = fmt.Sprintf("T=%d heads=%d hd=%d", t, heads, hd), []int64{heads * hd, hd, t}
	return s
}

// act is SiluAndMul (one kernel: reads gate and up, writes their
// silu(gate)·up: a Mul's traffic with a Sigmoid and a second Mul's
// arithmetic) or, for a non-gated model, GELU over [t×h].
func act(t, h int64, gated bool) vidurShape {
	var s vidurShape
	if gated {
		s = fp16Node("Mul", []int64{t, h}, []int64{t, h})
		s.spec.extra = []string{"Sigmoid", "Mul"}
	} else {
		s = fp16Node("Gelu", []int64{t, h})
	}
	s.spec.out = tensorSpec{ir.Float16, []int64{t, h}}
	s.name, s.order = fmt.Sprintf("T=%d H=%d", t, h), []int64{h, t}
	return s
}
