package cost

import (
	"fmt"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// onnxruntime's generation ops (BeamSearch, WhisperBeamSearch,
// GreedySearch, Sampling) run a whole generation in one node. The rule
// prices what their CUDA implementation (contrib_ops/cuda/transformers)
// runs: for a decoder-only model the decoder (or init_decoder) over the
// prompt at batch × beams sequences, then one run per further token over
// a cache one longer each time; for an encoder-decoder model the encoder
// subgraph once at the batch (it also runs the decoder's first step),
// then the decoder a token at a time. After each run come the search's
// own kernels: the log-softmax of the last token's logits, the beam
// scores added and the top 2·beams of each batch entry's beams × vocab
// (greedy search: the top 1; sampling: a sort for top-p, softmax,
// cumulative sum and the draw), and, with more than one beam, every
// present copied to the next run's past in the chosen beams' order
// (PickGptPastState; none when the decoder shares past and present
// buffers, which its past_sequence_length input marks); after an
// encoder, the same copies expand its caches and hidden states from the
// batch to the beams.
//
// A run is priced by inferring the subgraph again at that run's shapes
// (ir.ReinferSubgraph) and costing it as any graph. A run's cost is
// nearly linear in its cache length, so the decode runs are priced at a
// few points spread from the first to the last and the rest summed on the
// straight lines between them (exact when every run is a point). Left
// out: the beam scorer's host work and the host-device copies and stream
// synchronisations around it each step, and the per-beam launches of
// PickGptPastState's cudaMemcpyAsync calls (each present's copy is priced
// as one gather).

// genPoints is how many decode runs are priced when not all are.
const genPoints = 5

func init() {
	for _, op := range []string{"BeamSearch", "WhisperBeamSearch", "GreedySearch", "Sampling"} {
		RegisterRule(msDomain, op, generationRule)
	}
}

// genRun is one subgraph run.
type genRun struct {
	g    *ir.Graph
	step ir.GenerationStep
}

// genSum accumulates weighted graph costs; the weights each subgraph
// reads count once, whatever its runs.
type genSum struct {
	est    NodeEstimate
	agg    aggregate
	params float64
	seen   map[*ir.Graph]bool
}

func (s *genSum) add(g *ir.Graph, gc *graphCost, w float64) {
	e := gc.est
	e.scale(w)
	if !s.seen[g] {
		if s.seen == nil {
			s.seen = map[*ir.Graph]bool{}
		}
		s.seen[g] = true
		s.params += e.Params
	}
	e.Params = 0
	s.est.add(e)
	a := gc.agg
	a.scale(w)
	s.agg.add(a)
}

func generationRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	dec := attrGraph(n, "decoder")
	if dec == nil || c.sub == nil || c.Model == nil {
		return NodeEstimate{}, fmt.Errorf("%s without its decoder graph", n.OpType)
	}
	p := ir.ReadGenerationParams(n)
	if !p.Batch.IsKnown() || !p.PromptLen.IsKnown() {
		c.markUnknown(n.In(0))
		return NodeEstimate{Note: n.OpType + ": batch or prompt length unknown, not counted"}, nil
	}
	batch, prompt := p.Batch.Value, p.PromptLen.Value
	beams := p.Beams
	if beams <= 0 {
		c.Warnf("num_beams unknown (bind it with --dim num_beams=N): 1 beam counted")
		beams = 1
	}
	bb := batch * beams
	decoderOnly := p.ModelType == ir.GenDecoderOnly
	// Decoder runs after the first (the prompt's, or the encoder's, which
	// also runs the decoder's first step); decode run i has the prompt
	// and i generated tokens cached.
	var decodes int64
	known := p.MaxLength > 0
	if known {
		decodes = max(p.MaxLength-prompt-1, 0)
	} else {
		c.Warnf("max_length unknown (bind it with --dim max_length=N): the first run only counted")
	}

	first := genRun{g: dec, step: ir.GenerationStep{Batch: bb, New: prompt}}
	if g := attrGraph(n, "init_decoder"); decoderOnly && g != nil {
		first.g = g
	}
	if !decoderOnly {
		// The encoder runs at the batch, before the beams expand it.
		first.g = attrGraph(n, "encoder")
		first.step = ir.GenerationStep{Batch: batch, New: prompt}
		if p.EncoderLen.IsKnown() {
			first.step.EncoderLen = p.EncoderLen.Value
		}
	}
	var sum genSum
	var ids *ir.Value
	if !decoderOnly {
		ids = n.In(0)
	}
	gc, err := c.genRunCost(first.g, first.step, p, beams, ids)
	if err != nil {
		return NodeEstimate{}, err
	}
	sum.add(first.g, gc, 1)
	var encLen int64
	if !decoderOnly {
		if encLen = encoderLength(first.g); encLen <= 0 && decodes > 0 {
			c.Warnf("the encoder's output length is unknown: decoder runs not counted")
			decodes = 0
		}
	}
	for _, pt := range genPointsOf(decodes) {
		step := ir.GenerationStep{Batch: bb, New: 1, Past: prompt + pt.index, EncoderLen: encLen}
		gc, err := c.genRunCost(dec, step, p, beams, nil)
		if err != nil {
			return NodeEstimate{}, err
		}
		sum.add(dec, gc, pt.weight)
	}
	// Leave the subgraphs as inference left them: at their declared types.
	for _, name := range []string{"encoder", "init_decoder", "decoder"} {
		if g := attrGraph(n, name); g != nil {
			if err := ir.ReinferSubgraph(c.Model, g, nil); err != nil {
				return NodeEstimate{}, err
			}
		}
	}
	e := sum.est
	e.Params = sum.params
	agg := sum.agg
	e.composite = &agg
	e.Note = fmt.Sprintf("%s: %d decoder runs at %d sequences (batch %d × %d beams)", n.OpType, decodes+1, bb, batch, beams)
	if !decoderOnly {
		e.Note = fmt.Sprintf("%s: encoder at batch %d, then %d decoder runs at %d sequences (%d beams)", n.OpType, batch, decodes, bb, beams)
	}
	if !known {
		e.Note += "; max_length unknown, the first run only"
	}
	return e, nil
}

// genPoint is a decode run priced (index from 0) and its weight: the
// number of runs it stands for on the lines through the points.
type genPoint struct {
	index  int64
	weight float64
}

// genPointsOf spreads the priced runs over n decode runs: every run when
// there are few, else genPoints evenly spaced from the first to the last,
// each weighted by the runs its two lines give it.
func genPointsOf(n int64) []genPoint {
	if n <= 0 {
		return nil
	}
	if n <= genPoints+1 {
		pts := make([]genPoint, n)
		for i := range pts {
			pts[i] = genPoint{int64(i), 1}
		}
		return pts
	}
	pts := make([]genPoint, genPoints)
	for i := range pts {
		pts[i].index = int64(i) * (n - 1) / (genPoints - 1)
	}
	for j := 0; j+1 < len(pts); j++ {
		a, b := pts[j].index, pts[j+1].index
		end := b
		if j+2 == len(pts) {
			end = b + 1 // the last segment takes its end point
		}
		for t := a; t < end; t++ {
			lam := float64(t-a) / float64(b-a)
			pts[j].weight += 1 - lam
			pts[j+1].weight += lam
		}
	}
	return pts
}

// encoderLength is the encoder's output length: its cross-attention
// cache's length dim or its hidden states' sequence dim.
func encoderLength(enc *ir.Graph) int64 {
	for _, o := range enc.Outputs {
		s, l := o.Shape, strings.ToLower(o.Name)
		if !s.Ranked || s.Rank() < 3 {
			continue
		}
		at := -1
		switch {
		case strings.Contains(l, "cross") && s.Rank() == 4:
			at = 2
		case strings.Contains(l, "encoder_hidden_states"):
			at = 1
		}
		if at >= 0 && s.Dims[at].IsKnown() {
			return s.Dims[at].Value
		}
	}
	return 0
}

// genRunCost prices one run of g at step and the search kernels after it.
// An encoder's first input is the node's input_ids (Whisper: its audio
// features), whose shape it takes whole.
func (c *RuleCtx) genRunCost(g *ir.Graph, step ir.GenerationStep, p ir.GenerationParams, beams int64, ids *ir.Value) (*graphCost, error) {
	shapes := step.InputShapes(g)
	if ids != nil && len(shapes) > 0 && ids.Shape.Ranked && ids.Shape.Rank() == g.Inputs[0].Declared.Shape.Rank() {
		shapes[0] = ids.Shape.Clone()
	}
	if err := ir.ReinferSubgraph(c.Model, g, shapes); err != nil {
		return nil, err
	}
	gc, err := c.sub(g)
	if err != nil {
		return nil, err
	}
	sg, err := searchStepGraph(c.Model, g, p, beams)
	if err != nil || sg == nil {
		return gc, err
	}
	sc, err := c.sub(sg)
	if err != nil {
		return nil, err
	}
	out := *gc
	out.est.add(sc.est)
	out.agg.add(sc.agg)
	return &out, nil
}

// searchStepGraph is the search's kernels after one run of g (its outputs
// at the run's shapes) over batch × beams sequences: nil when the logits'
// shape is not known. After an encoder run (at the batch) the gathers
// stand for the expansion of its caches to the beams.
func searchStepGraph(m *ir.Model, g *ir.Graph, p ir.GenerationParams, beams int64) (*ir.Graph, error) {
	if len(g.Outputs) == 0 {
		return nil, nil
	}
	logits := g.Outputs[0]
	ls := logits.Shape
	if !ls.Ranked || ls.Rank() != 3 || !ls.Dims[2].IsKnown() {
		return nil, nil
	}
	vocab, batch := ls.Dims[2].Value, p.Batch.Value
	sequences := batch * beams
	sg := ir.NewSubgraph(g.Name+"/search", g)
	b := searchBuilder{g: sg}
	last := b.input("next_token_logits", logits.DType, sequences, vocab)
	switch {
	case p.Sampling:
		sorted := b.topK(last, vocab)
		probs := b.node("Softmax", []*ir.Value{sorted}, 1, ir.IntAttr("axis", -1))
		cum := b.node("CumSum", []*ir.Value{probs, b.ints("axis", 1)}, 1)
		b.topK(cum, 1)
	case beams <= 1:
		b.topK(last, 1)
	default:
		scores := b.node("LogSoftmax", []*ir.Value{last}, 1, ir.IntAttr("axis", -1))
		scores = b.node("Add", []*ir.Value{scores, b.input("beam_scores", logits.DType, sequences, 1)}, 1)
		flat := b.node("Reshape", []*ir.Value{scores, b.ints("beams_vocab", batch, beams*vocab)}, 1)
		b.topK(flat, 2*beams)
		if !sharesPastBuffer(g) {
			idx := b.input("beam_indices", ir.Int64, sequences)
			for _, o := range g.Outputs[1:] {
				if at := batchAxis(o); at >= 0 {
					pres := b.inputLike(o)
					b.node("Gather", []*ir.Value{pres, idx}, 1, ir.IntAttr("axis", int64(at)))
				}
			}
		}
	}
	if b.err != nil {
		return nil, b.err
	}
	return sg, ir.ReinferSubgraph(m, sg, nil)
}

// sharesPastBuffer reports whether the decoder takes the cache's length
// as an input (GPT-2's past_sequence_length, T5's past_seq_len): its past
// and present share one buffer of the maximum length, and beams are
// followed through cache_indirection instead of copies.
func sharesPastBuffer(g *ir.Graph) bool {
	for _, in := range g.Inputs {
		if in.Name == "past_sequence_length" || in.Name == "past_seq_len" {
			return true
		}
	}
	return false
}

// batchAxis is where a present output (or an encoder's hidden states,
// which the beams expand) holds its sequences: 1 in GPT-2's [2, batch,
// heads, length, head size], 0 in a [batch, heads, length, head size]
// one; -1 for an output that is neither.
func batchAxis(o *ir.Value) int {
	if o == nil || !o.Shape.Ranked {
		return -1
	}
	l := strings.ToLower(o.Name)
	if strings.Contains(l, "encoder_hidden_states") {
		return 0
	}
	if !strings.Contains(l, "present") {
		return -1
	}
	switch o.Shape.Rank() {
	case 5:
		return 1
	case 4:
		return 0
	}
	return -1
}

// searchBuilder adds values and nodes to a search-step graph.
type searchBuilder struct {
	g   *ir.Graph
	err error
	n   int
}

func (b *searchBuilder) value(name string) *ir.Value {
	v, err := b.g.NewValue(b.g.UniqueName(name))
	if err != nil && b.err == nil {
		b.err = err
	}
	if v == nil {
		v = &ir.Value{Name: name}
	}
	return v
}

// input is a graph input of dtype dt and the given dims.
func (b *searchBuilder) input(name string, dt ir.DType, dims ...int64) *ir.Value {
	v := b.value(name)
	v.Declared = &ir.TypeInfo{DType: dt, Shape: ir.KnownShape(dims...)}
	b.g.AddInput(v)
	return v
}

// inputLike is a graph input shaped as o (a present at the run's shape).
func (b *searchBuilder) inputLike(o *ir.Value) *ir.Value {
	v := b.value(o.Name)
	v.Declared = &ir.TypeInfo{DType: o.DType, Shape: o.Shape.Clone()}
	b.g.AddInput(v)
	return v
}

func (b *searchBuilder) ints(name string, vals ...int64) *ir.Value {
	v := b.value(name)
	t := ir.IntTensor([]int64{int64(len(vals))}, vals)
	b.g.AddInitializer(v, t)
	return v
}

// node adds op over ins with nout outputs and returns the first.
func (b *searchBuilder) node(op string, ins []*ir.Value, nout int, attrs ...*ir.Attribute) *ir.Value {
	b.n++
	outs := make([]*ir.Value, nout)
	for i := range outs {
		outs[i] = b.value(fmt.Sprintf("%s_%d_out%d", strings.ToLower(op), b.n, i))
	}
	nd := &ir.Node{Name: fmt.Sprintf("%s/%s_%d", b.g.Name, op, b.n), OpType: op, Inputs: ins, Outputs: outs, Attrs: attrs}
	if err := b.g.AddNode(nd); err != nil && b.err == nil {
		b.err = err
	}
	return outs[0]
}

// topK is the values of the top k along the last axis.
func (b *searchBuilder) topK(x *ir.Value, k int64) *ir.Value {
	return b.node("TopK", []*ir.Value{x, b.ints("k", k)}, 2)
}
