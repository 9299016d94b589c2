package cost

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// analyzeGeneration costs testdata/models/generation/NAME.onnx (batch 2,
// an 8-token prompt unless bind says) on gpu, in a CUDA graph.
func analyzeGeneration(t *testing.T, name, gpu string, bind map[string]int64) (*report.Report, *ir.Model) {
	t.Helper()
	b := map[string]int64{"batch_size": 2, "sequence_length": 8}
	for k, v := range bind {
		b[k] = v
	}
	m := loadFixture(t, "generation/"+name, b)
	return analyzeModelOn(t, m.Graph, m, gpu, ""), m
}

// gptMACs is the fixture decoder's multiply-accumulates for seqs
// sequences of n new tokens over past cached ones: per token two layers
// of Q|K|V (16×48), output (16×16) and MLP (16×64, 64×16) projections and
// the LM head (16×32); per layer and head (2 of 8 wide) the scores and
// the weighted sum over the past and the new tokens up to each.
func gptMACs(seqs, n, past int64) float64 {
	const perToken = 2*(16*48+16*16+16*64+64*16) + 16*32
	var attn int64
	for i := int64(1); i <= n; i++ {
		attn += 2 * 2 * 2 * 8 * (past + n) // every query sees the whole cache here (no causal mask)
	}
	return float64(seqs * (n*perToken + attn))
}

// TestGenerationCounts: the MACs of a generation are the decoder's over
// the prompt at batch × beams sequences and over each further token with
// the cache one longer, written out; past five decode runs the runs are
// priced at points and summed on lines, exact for counts linear in the
// cache length.
func TestGenerationCounts(t *testing.T) {
	decodes := func(seqs, from, n int64) float64 {
		var s float64
		for i := int64(0); i < n; i++ {
			s += gptMACs(seqs, 1, from+i)
		}
		return s
	}
	cases := []struct {
		name string
		bind map[string]int64
		want float64
	}{
		{"gpt2_greedy", map[string]int64{"max_length": 14}, gptMACs(2, 8, 0) + decodes(2, 8, 5)},
		{"gpt2_sampling", map[string]int64{"max_length": 14}, gptMACs(2, 8, 0) + decodes(2, 8, 5)},
		{"gpt2_beam", map[string]int64{"max_length": 14, "num_beams": 3, "num_return_sequences": 2}, gptMACs(6, 8, 0) + decodes(6, 8, 5)},
		{"gpt2_greedy", map[string]int64{"max_length": 40}, gptMACs(2, 8, 0) + decodes(2, 8, 31)},
		{"gpt2_beam", map[string]int64{"max_length": 64, "num_beams": 4}, gptMACs(8, 8, 0) + decodes(8, 8, 55)},
	}
	for _, tc := range cases {
		r, _ := analyzeGeneration(t, tc.name, "A100", tc.bind)
		if len(r.UnsupportedOps) > 0 || r.Totals.Partial != nil {
			t.Fatalf("%s: unsupported %v, partial %v", tc.name, r.UnsupportedOps, r.Totals.Partial)
		}
		if got := r.Totals.MACs; math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("%s %v: %.0f MACs, want %.0f", tc.name, tc.bind, got, tc.want)
		}
	}
}

// t5MACs is the T5 fixture's multiply-accumulates: its encoder at the
// batch over enc tokens (embedding projection and the cross keys and
// values, 16×16 each) with the decoder's first step, then the decoder at
// batch × beams sequences over runs more tokens, the self cache one
// longer each run. A decoder step is the self Q, K, V, the cross Q (16×16
// each) and the LM head (16×32) per sequence, and per head (2 of 8
// wide) the scores and weighted sums over its self cache and the enc
// cross keys.
// Whisper's encoder first projects each of the enc frames' 4 mels to 16.
func t5MACs(batch, beams, enc, runs int64, whisper bool) float64 {
	step := func(seqs, self int64) int64 {
		return seqs * (4*16*16 + 16*32 + 2*2*8*(self+enc))
	}
	total := batch*enc*3*16*16 + step(batch, 1)
	if whisper {
		total += batch * enc * 4 * 16
	}
	for i := int64(0); i < runs; i++ {
		total += step(batch*beams, 2+i)
	}
	return float64(total)
}

// TestGenerationT5Counts: an encoder-decoder's beam search (T5's, and
// Whisper's over audio features) is its encoder once at the batch, then max_length − 2 decoder runs (the start token
// and the encoder's step came first) at batch × beams sequences, as
// onnxruntime 1.23.2 runs it (its profiles of t5_beam.onnx and
// whisper_beam.onnx: the encoder's nodes at batch 2, the decoder's at 6). 66,368 MACs at an encoder length
// of 10 and max_length 6, by hand.
func TestGenerationT5Counts(t *testing.T) {
	if got := t5MACs(2, 3, 10, 4, false); got != 66368 {
		t.Fatalf("t5MACs %g, want the hand count 66368", got)
	}
	for _, model := range []string{"t5_beam", "whisper_beam"} {
		for _, tc := range []struct{ enc, maxLen, beams int64 }{{10, 6, 3}, {8, 14, 3}, {8, 60, 4}} {
			r, _ := analyzeGeneration(t, model, "A100", map[string]int64{"sequence_length": tc.enc,
				"max_length": tc.maxLen, "num_beams": tc.beams, "num_return_sequences": 1})
			if len(r.UnsupportedOps) > 0 || r.Totals.Partial != nil {
				t.Fatalf("%s: unsupported %v, partial %v", model, r.UnsupportedOps, r.Totals.Partial)
			}
			want := t5MACs(2, tc.beams, tc.enc, tc.maxLen-2, model == "whisper_beam")
			if got := r.Totals.MACs; math.Abs(got-want) > 1e-9*want {
				t.Errorf("%s %+v: %.0f MACs, want %.0f", model, tc, got, want)
			}
		}
	}
}

// TestGenPointsOf: every decode run is priced when there are few; else
// the weights count every run once and a cost linear in the run sums
// exactly.
func TestGenPointsOf(t *testing.T) {
	for _, n := range []int64{1, 5, 6, 7, 31, 1000} {
		pts := genPointsOf(n)
		var w, lin float64
		for _, p := range pts {
			w += p.weight
			lin += p.weight * float64(3+2*p.index)
		}
		want := float64(n * (n + 2)) // Σ 3+2i over i < n
		if math.Abs(w-float64(n)) > 1e-9 || math.Abs(lin-want) > 1e-9*want {
			t.Errorf("n=%d: weights %g (want %d), linear sum %g (want %g)", n, w, n, lin, want)
		}
		if n <= genPoints+1 && int64(len(pts)) != n {
			t.Errorf("n=%d: %d points, want every run", n, len(pts))
		}
		if last := pts[len(pts)-1].index; last != n-1 {
			t.Errorf("n=%d: last point %d, want the last run", n, last)
		}
	}
}

// TestGenerationGrows: more tokens, beams or sequences never cost less
// time, energy or bytes, on GPUs of several generations.
func TestGenerationGrows(t *testing.T) {
	steps := []map[string]int64{
		{"max_length": 12, "num_beams": 1},
		{"max_length": 24, "num_beams": 1},
		{"max_length": 24, "num_beams": 2},
		{"max_length": 24, "num_beams": 4, "batch_size": 4},
		{"max_length": 200, "num_beams": 4, "batch_size": 4},
	}
	for _, gpu := range []string{"T4", "A100", "H100"} {
		var prev *report.Report
		for _, b := range steps {
			r, _ := analyzeGeneration(t, "gpt2_beam", gpu, b)
			if prev != nil {
				p, c := prev.Totals, r.Totals
				if c.TimeS < p.TimeS || c.EnergyJ < p.EnergyJ || c.Bytes() < p.Bytes() {
					t.Errorf("%s %v: time %.4g s energy %.4g J bytes %.4g, less than the step before's %.4g s %.4g J %.4g",
						gpu, b, c.TimeS, c.EnergyJ, c.Bytes(), p.TimeS, p.EnergyJ, p.Bytes())
				}
			}
			prev = r
		}
	}
}

// TestGenerationSearchKernels: at the same sequences (batch 4 of one
// beam, batch 2 of two), beam search adds, each run, the log-softmax, the
// beam scores' add and a gather of each layer's present in the beams'
// order (its top 2·beams is one kernel as greedy's top 1 is); one beam is
// greedy search.
func TestGenerationSearchKernels(t *testing.T) {
	one, _ := analyzeGeneration(t, "gpt2_beam", "A100", map[string]int64{"batch_size": 4, "max_length": 9, "num_beams": 1})
	two, _ := analyzeGeneration(t, "gpt2_beam", "A100", map[string]int64{"max_length": 9, "num_beams": 2})
	greedy, _ := analyzeGeneration(t, "gpt2_greedy", "A100", map[string]int64{"batch_size": 4, "max_length": 9})
	if g, b := greedy.Totals.Launches, one.Totals.Launches; g != b {
		t.Errorf("one beam: %g launches, greedy search %g", b, g)
	}
	if d := two.Totals.Launches - one.Totals.Launches; d != 4 {
		t.Errorf("two beams launch %g kernels more than one, want 4", d)
	}
	// Each copy reads and writes a present: [2, 4 sequences, 2 heads, 8
	// cached, 8] floats a layer, two layers.
	const copies = 2 * 2 * (2 * 4 * 2 * 8 * 8) * 4.0
	if got := two.Totals.Bytes() - one.Totals.Bytes(); got < copies {
		t.Errorf("two beams move %.0f bytes more than one, want at least the presents' copies %.0f", got, copies)
	}
}

// TestGenerationUnknownLength: an unbound max_length prices the first run
// and says so; the subgraph is left at its declared types, and a second
// analysis gives the same report.
func TestGenerationUnknownLength(t *testing.T) {
	r, m := analyzeGeneration(t, "gpt2_beam", "A100", nil)
	nc := nodeNamed(t, r, "BeamSearch")
	if !strings.Contains(nc.Note, "max_length unknown") {
		t.Errorf("note %q does not say max_length is unknown", nc.Note)
	}
	warned := 0
	for _, w := range r.Warnings {
		if strings.Contains(w, "--dim max_length=N") || strings.Contains(w, "--dim num_beams=N") {
			warned++
		}
	}
	if warned != 2 {
		t.Errorf("warnings %q: want max_length's and num_beams'", r.Warnings)
	}
	if want := gptMACs(2, 8, 0); math.Abs(r.Totals.MACs-want) > 1e-9*want {
		t.Errorf("%.0f MACs, want the prompt run's %.0f", r.Totals.MACs, want)
	}
	dec := attrGraph(m.Graph.Nodes[0], "decoder")
	if s := dec.Outputs[1].Shape.String(); !strings.Contains(s, "past_seq_len") {
		t.Errorf("decoder left at %s, want its declared symbols", s)
	}
	if again := analyzeModelOn(t, m.Graph, m, "A100", ""); again.Totals.TimeS != r.Totals.TimeS || again.Totals.MACs != r.Totals.MACs {
		t.Errorf("second analysis %g s %g MACs, first %g s %g", again.Totals.TimeS, again.Totals.MACs, r.Totals.TimeS, r.Totals.MACs)
	}
}

// TestGenerationSharedBuffer: a decoder that takes past_sequence_length
// shares its past and present buffers and follows the beams through
// cache_indirection, so beam search copies no cache between runs: two
// layers' gathers fewer a run than the same decoder without it.
func TestGenerationSharedBuffer(t *testing.T) {
	bind := map[string]int64{"max_length": 12, "num_beams": 2}
	plain, _ := analyzeGeneration(t, "gpt2_beam", "A100", bind)
	m := loadFixture(t, "generation/gpt2_beam", map[string]int64{"batch_size": 2, "sequence_length": 8, "max_length": 12, "num_beams": 2})
	dec := attrGraph(m.Graph.Nodes[0], "decoder")
	v, err := dec.NewValue("past_sequence_length")
	if err != nil {
		t.Fatal(err)
	}
	v.Declared = &ir.TypeInfo{DType: ir.Int32, Shape: ir.KnownShape(1)}
	dec.AddInput(v)
	shared := analyzeModelOn(t, m.Graph, m, "A100", "")
	const runs, layers = 12 - 8, 2
	if d := plain.Totals.Launches - shared.Totals.Launches; d != runs*layers {
		t.Errorf("shared buffer: %g launches fewer, want %d (a gather a layer a run)", d, runs*layers)
	}
}

// TestGenerationInitDecoder: with an init_decoder (convert_generation.py
// writes one for the prompt when the decoder is the one-token, shared
// buffer form) the first run is the init_decoder's and the rest the
// decoder's: here the decoder plus one Relu over its logits, which the
// total holds once; both subgraphs are left at their declared types.
func TestGenerationInitDecoder(t *testing.T) {
	bind := map[string]int64{"batch_size": 2, "sequence_length": 8, "max_length": 14}
	plain, _ := analyzeGeneration(t, "gpt2_greedy", "A100", bind)
	m := loadFixture(t, "generation/gpt2_greedy", bind)
	other, err := ir.ReadFile(filepath.Join(fixtureDir(), "generation", "gpt2_greedy.onnx"), ir.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	init := attrGraph(other.Graph.Nodes[0], "decoder")
	extra, err := init.NewValue("extra")
	if err != nil {
		t.Fatal(err)
	}
	if err := init.AddNode(&ir.Node{Name: "extra_relu", OpType: "Relu", Inputs: []*ir.Value{init.Outputs[0]}, Outputs: []*ir.Value{extra}}); err != nil {
		t.Fatal(err)
	}
	n := m.Graph.Nodes[0]
	n.Attrs = append(n.Attrs, ir.GraphAttr("init_decoder", init))
	if _, err := ir.InferShapes(m, ir.InferOptions{Bindings: bind}); err != nil {
		t.Fatal(err)
	}
	r := analyzeModelOn(t, m.Graph, m, "A100", "")
	if r.Totals.MACs != plain.Totals.MACs || r.Totals.Launches != plain.Totals.Launches+1 {
		t.Errorf("with init_decoder: %g MACs %g launches, without %g %g (want one launch more)", r.Totals.MACs, r.Totals.Launches, plain.Totals.MACs, plain.Totals.Launches)
	}
	if s := init.Outputs[1].Shape.String(); !strings.Contains(s, "past_seq_len") {
		t.Errorf("init_decoder left at %s, want its declared symbols", s)
	}
}
