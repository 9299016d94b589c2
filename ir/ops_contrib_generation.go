package ir

import (
	"fmt"
	"strings"
)

// ONNX Runtime's generation ops (com.microsoft BeamSearch, GreedySearch,
// Sampling and WhisperBeamSearch; docs/ContribOperators.md and
// contrib_ops/cpu/transformers of onnxruntime): what its
// convert_generation.py writes around a GPT-2, T5 or Whisper export, the
// whole generation loop in one node whose decoder (and encoder) are graph
// attributes. The outputs come from the node's inputs (max_length and
// num_beams are tensors, known when constant or bound by --dim). Each
// subgraph is inferred at its declared input types, its symbols kept; the
// cost rule infers it again at each step's shapes (ReinferSubgraph,
// GenerationStep).

// Generation model types (the model_type attribute).
const (
	GenDecoderOnly    = 0 // GPT-2 style: the decoder runs the prompt first
	GenEncoderDecoder = 1 // T5 style: the encoder subgraph runs once
	GenWhisper        = 2 // Whisper: as T5, audio features in
)

func init() {
	ms := "com.microsoft"
	Register(
		// BeamSearch(input_ids, max_length, min_length?, num_beams,
		// num_return_sequences, length_penalty?, repetition_penalty?,
		// vocab_mask?, prefix_vocab_mask?, attention_mask?,
		// decoder_input_ids?, logits_processor?) -> sequences,
		// sequences_scores?, scores?
		&OpSchema{Domain: ms, Name: "BeamSearch", Since: 1, MinIn: 5, MaxIn: 12, MinOut: 1, MaxOut: 3,
			Infer: inferGeneration(genBeam),
			Doc:   "ONNX Runtime contrib op: beam search over a decoder subgraph; sequences [batch, num_return_sequences, max_length]"},
		&OpSchema{Domain: ms, Name: "WhisperBeamSearch", Since: 1, MinIn: 5, MaxIn: 15, MinOut: 1, MaxOut: 5,
			Infer: inferGeneration(genWhisperBeam),
			Doc:   "ONNX Runtime contrib op: Whisper's beam search (encoder and decoder subgraphs)"},
		// GreedySearch(input_ids, max_length, min_length?,
		// repetition_penalty?, vocab_mask?, prefix_vocab_mask?,
		// attention_mask?) -> sequences
		&OpSchema{Domain: ms, Name: "GreedySearch", Since: 1, MinIn: 2, MaxIn: 7, MinOut: 1, MaxOut: 1,
			Infer: inferGeneration(genGreedy),
			Doc:   "ONNX Runtime contrib op: greedy decoding over a decoder subgraph; sequences [batch, max_length]"},
		// Sampling(... as GreedySearch, presence_mask?, seed?) ->
		// sequences, filtered_logits?
		&OpSchema{Domain: ms, Name: "Sampling", Since: 1, MinIn: 2, MaxIn: 9, MinOut: 1, MaxOut: 2,
			Infer: inferGeneration(genSampling),
			Doc:   "ONNX Runtime contrib op: top-p sampling over a decoder subgraph; sequences [batch, max_length]"},
	)
}

// genKind tells the four ops apart.
type genKind uint8

const (
	genBeam genKind = iota
	genWhisperBeam
	genGreedy
	genSampling
)

// GenerationParams are what a generation node's inputs and attributes say
// about the run: each value 0 where not known.
type GenerationParams struct {
	ModelType int64
	// Batch is input_ids' batch dim (Whisper: the features'). PromptLen
	// is the tokens the decoder starts from: the prompt (input_ids'
	// sequence dim) of a decoder-only model, else decoder_input_ids'
	// length or 1 (the start token). EncoderLen is an encoder-decoder's
	// input length (input_ids' sequence dim; unknown for Whisper, whose
	// encoder's output gives it).
	Batch, PromptLen, EncoderLen Dim
	// MaxLength is the max_length input's value; Beams num_beams' (1 for
	// greedy search and sampling); Returned num_return_sequences'.
	MaxLength, Beams, Returned int64
	// Vocab is the vocab_size attribute or the decoder logits' last dim.
	Vocab int64
	// Sampling marks the Sampling op (a full sort of the logits a step).
	Sampling bool
}

// ReadGenerationParams reads n's parameters (n a generation op).
func ReadGenerationParams(n *Node) GenerationParams {
	p := GenerationParams{ModelType: n.AttrInt("model_type", GenDecoderOnly), Beams: 1, Returned: 1,
		Sampling: n.OpType == "Sampling", Batch: S("?"), PromptLen: S("?")}
	beam := n.OpType == "BeamSearch" || n.OpType == "WhisperBeamSearch"
	if n.OpType == "WhisperBeamSearch" {
		p.ModelType = GenWhisper
	}
	p.EncoderLen = S("?")
	if in := n.In(0); in != nil && in.Shape.Ranked && in.Shape.Rank() >= 2 {
		p.Batch = in.Shape.Dims[0]
		switch p.ModelType {
		case GenDecoderOnly:
			p.PromptLen = in.Shape.Dims[1]
		case GenEncoderDecoder:
			p.EncoderLen = in.Shape.Dims[1]
		}
	}
	if p.ModelType != GenDecoderOnly {
		p.PromptLen = D(1)
		if d := n.In(10); d != nil && d.Shape.Ranked && d.Shape.Rank() == 2 {
			p.PromptLen = d.Shape.Dims[1]
		}
	}
	p.MaxLength, _ = ConstScalarInt(n.In(1))
	if beam {
		p.Beams, _ = ConstScalarInt(n.In(3))
		p.Returned, _ = ConstScalarInt(n.In(4))
	}
	p.Vocab = n.AttrInt("vocab_size", 0)
	if p.Vocab <= 0 {
		p.Vocab = 0
		if dec := nodeGraphAttr(n, "decoder"); dec != nil && len(dec.Outputs) > 0 {
			if s := dec.Outputs[0].Shape; s.Ranked && s.Rank() == 3 && s.Dims[2].IsKnown() {
				p.Vocab = s.Dims[2].Value
			}
		}
	}
	return p
}

// knownOr is v as a dim when known (> 0), else a fresh symbol named hint.
func knownOr(c *InferCtx, v int64, hint string) Dim {
	if v > 0 {
		return D(v)
	}
	return c.Fresh(hint)
}

func inferGeneration(kind genKind) func(*InferCtx) error {
	return func(c *InferCtx) error {
		n := c.Node
		p := ReadGenerationParams(n)
		dec := nodeGraphAttr(n, "decoder")
		if dec == nil {
			return c.Errorf("needs the decoder graph attribute")
		}
		switch p.ModelType {
		case GenDecoderOnly, GenEncoderDecoder, GenWhisper:
		default:
			return c.Errorf("model_type %d, want 0 (GPT-2), 1 (encoder-decoder) or 2 (Whisper)", p.ModelType)
		}
		if p.ModelType != GenDecoderOnly && nodeGraphAttr(n, "encoder") == nil {
			return c.Errorf("model_type %d needs the encoder graph attribute", p.ModelType)
		}
		if in := c.InShape(0); in.Ranked && (in.Rank() < 2 || (p.ModelType != GenWhisper && in.Rank() != 2)) {
			return c.Errorf("input_ids has rank %d, want 2 [batch, sequence]", in.Rank())
		}
		if p.MaxLength < 0 || (p.MaxLength > 0 && p.PromptLen.IsKnown() && p.MaxLength <= p.PromptLen.Value) {
			return c.Errorf("max_length %d is not more than the prompt's %s tokens", p.MaxLength, p.PromptLen)
		}
		if p.Beams < 0 || p.Returned < 0 || (p.Beams > 0 && p.Returned > p.Beams) {
			return c.Errorf("num_return_sequences %d with num_beams %d, want 1 to num_beams", p.Returned, p.Beams)
		}
		for _, name := range []string{"encoder", "init_decoder", "decoder"} {
			if g := nodeGraphAttr(n, name); g != nil {
				if err := declareSubgraphInputs(c, g, name); err != nil {
					return err
				}
				if err := c.InferSubgraph(g); err != nil {
					return err
				}
			}
		}
		maxLen := knownOr(c, p.MaxLength, "max_length")
		float := Float32
		if o := dec.Outputs; len(o) > 0 && o[0].DType != Undefined {
			float = o[0].DType
		}
		if kind == genGreedy || kind == genSampling {
			if err := c.SetOut(0, Int32, Shape{Ranked: true, Dims: []Dim{p.Batch, maxLen}}); err != nil {
				return err
			}
			if kind == genSampling && c.Out(1) != nil {
				return c.SetOut(1, float, Shape{Ranked: true, Dims: []Dim{p.Batch, knownOr(c, p.Vocab, "vocab")}})
			}
			return nil
		}
		ret, beams := knownOr(c, p.Returned, "num_return_sequences"), knownOr(c, p.Beams, "num_beams")
		outs := []struct {
			dt   DType
			dims []Dim
		}{
			{Int32, []Dim{p.Batch, ret, maxLen}},
			{float, []Dim{p.Batch, ret}},
			{float, []Dim{generatedDim(c, p), p.Batch, beams, knownOr(c, p.Vocab, "vocab")}},
			// Whisper's cross_qk and non_speech_probs.
			{float, []Dim{p.Batch, ret, c.Fresh("cross_qk_heads"), maxLen, c.Fresh("frames")}},
			{float, []Dim{p.Batch}},
		}
		for i, o := range outs {
			if c.Out(i) == nil {
				continue
			}
			if err := c.SetOut(i, o.dt, Shape{Ranked: true, Dims: o.dims}); err != nil {
				return err
			}
		}
		return nil
	}
}

// generatedDim is the number of generated tokens, max_length less the
// prompt (scores' leading dim).
func generatedDim(c *InferCtx, p GenerationParams) Dim {
	if p.MaxLength > 0 && p.PromptLen.IsKnown() {
		return D(p.MaxLength - p.PromptLen.Value)
	}
	return c.Fresh("generated")
}

// declareSubgraphInputs gives a generation subgraph's inputs their
// declared types: the op feeds them from its own state, not from the
// node's inputs, so the declarations are all there is to go on.
func declareSubgraphInputs(c *InferCtx, g *Graph, attr string) error {
	resetSubgraph(g)
	for _, in := range g.Inputs {
		if in.Declared == nil {
			return c.Errorf("%s subgraph input %s declares no type", attr, QuoteName(in.Name))
		}
		setValueType(in, valueType{Kind: in.Declared.Kind, DType: in.Declared.DType, Shape: in.Declared.Shape})
	}
	return nil
}

// ReinferSubgraph infers g, a subgraph of m, again with input i of the
// shape shapes[i] (its declared shape where shapes is shorter or the
// shape is unranked), dtypes as declared: a generation op's decoder at one
// step's batch and lengths. Inference warnings are dropped (the load-time
// pass over the declared types gave them).
func ReinferSubgraph(m *Model, g *Graph, shapes []Shape) error {
	e := &inferer{m: m, opt: InferOptions{Limits: &DefaultLimits}, res: &InferResult{Bound: map[string]int64{}},
		unknown: map[string]bool{}}
	resetSubgraph(g)
	for i, in := range g.Inputs {
		if in.Declared == nil {
			return fmt.Errorf("subgraph %s input %s declares no type", QuoteName(g.Name), QuoteName(in.Name))
		}
		t := valueType{Kind: in.Declared.Kind, DType: in.Declared.DType, Shape: in.Declared.Shape}
		if i < len(shapes) && shapes[i].Ranked {
			t.Shape = shapes[i]
		}
		setValueType(in, t)
	}
	return e.graph(g, graphDepth(g))
}

// GenerationStep is one run of a generation subgraph: Batch sequences
// (batch × beams) of New tokens over Past cached positions, the encoder's
// output EncoderLen long.
type GenerationStep struct {
	Batch, New, Past, EncoderLen int64
}

// InputShapes are the shapes of g's inputs at step s, by the role each
// input's name gives it in the decoders convert_generation.py writes
// (input_ids, position_ids, attention_mask, past_* or past_key_self_*,
// past_key_cross_*, encoder_hidden_states, encoder_attention_mask,
// cache_indirection): the batch dim, the length dim of each role, and
// every other use of the same symbol, set. A dim no role reaches stays as
// declared (known, or a symbol the step leaves unbound).
func (s GenerationStep) InputShapes(g *Graph) []Shape {
	syms := map[string]int64{}
	shapes := make([]Shape, len(g.Inputs))
	for i, in := range g.Inputs {
		if in.Declared == nil || !in.Declared.Shape.Ranked {
			continue
		}
		dims := append([]Dim(nil), in.Declared.Shape.Dims...)
		batchAt, lenAt, length := s.roleOf(in.Name, len(dims))
		for j := range dims {
			want := int64(-1)
			switch j {
			case batchAt:
				want = s.Batch
			case lenAt:
				want = length
			}
			if want < 0 {
				continue
			}
			if sym := dims[j].Sym; sym != "" {
				if _, ok := syms[sym]; !ok {
					syms[sym] = want
				}
			}
			if !dims[j].IsKnown() {
				dims[j] = D(want)
			}
		}
		shapes[i] = Shape{Ranked: true, Dims: dims}
	}
	// A symbol a role bound anywhere binds it everywhere (a hidden size
	// or head count declared as a symbol stays as declared).
	for i := range shapes {
		if !shapes[i].Ranked {
			continue
		}
		for j, d := range shapes[i].Dims {
			if v, ok := syms[d.Sym]; ok && d.Sym != "" {
				shapes[i].Dims[j] = D(v)
			}
		}
	}
	return shapes
}

// roleOf is where an input of rank rank named name has its batch dim and
// its length dim, and the length there (-1: none, or an encoder length
// the step does not know).
func (s GenerationStep) roleOf(name string, rank int) (batchAt, lenAt int, length int64) {
	enc := s.EncoderLen
	if enc <= 0 {
		enc = -1
	}
	l := strings.ToLower(name)
	switch {
	case strings.Contains(l, "seq_len"), strings.Contains(l, "sequence_length"), strings.Contains(l, "num_beams"):
		// past_sequence_length, T5's past_seq_len, num_beams: one-element
		// values, not shapes.
		return -1, -1, -1
	case strings.Contains(l, "cross") && (strings.Contains(l, "past") || strings.Contains(l, "cache")):
		// [batch, heads, encoder length, head size]
		return 0, rank - 2, enc
	case strings.Contains(l, "past") || strings.HasPrefix(l, "cache.") || strings.Contains(l, "key_values"):
		if rank == 5 { // GPT-2's [2, batch, heads, past, head size]
			return 1, 3, s.Past
		}
		return 0, rank - 2, s.Past
	case strings.Contains(l, "encoder_hidden_states"), strings.Contains(l, "encoder_attention_mask"),
		strings.Contains(l, "encoder_input_ids"):
		return 0, 1, enc
	case strings.Contains(l, "cache_indirection"):
		return 0, -1, -1
	case strings.Contains(l, "attention_mask"):
		return 0, 1, s.Past + s.New
	case strings.Contains(l, "input_ids"), strings.Contains(l, "position_ids"):
		return 0, 1, s.New
	case strings.Contains(l, "input_features"):
		return 0, -1, -1
	}
	return -1, -1, -1
}
