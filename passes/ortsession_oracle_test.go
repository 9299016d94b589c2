package passes

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestORTSessionAgainstOnnxruntime holds ORTSession's view to the shapes
// onnxruntime 1.23.2 itself reported for every value of the graph its
// level-basic optimizers left (testdata/ort_shapes, recorded by
// record.py): the graph its shape-dependent fusions read. 22 exports
// (dynamic batch, opsets 13 and 17, CNNs, BERT, GPT-style, HF GPT-2 and
// LLaMA, ViT, Swin, MaxViT, an LSTM and a GRU), 9,566 values, each with
// its rank and every dim: a number, the file's symbol, or unknown. Before
// the view followed ONNX's inference (a rank from a computed target's
// length, broadcasting, Slice, declared outputs) and ReshapeFusion, 4,011
// of them differed.
func TestORTSessionAgainstOnnxruntime(t *testing.T) {
	// Values where onnxruntime knows more than the view, from its other
	// level-basic rewrites: MaxViT's last stage divides by a grid of 1,
	// which it removes (and the Casts around it) before ReshapeFusion
	// reads the chain as a dim to copy; its transpose optimizer turns a
	// LLaMA Shape of a Transpose into a Gather of the Shape before it.
	known := map[string]int{"maxvit_t": 4, "llama_hf_small": 6}
	models := map[string]string{
		"bert_base": "testdata/models/bert_base.onnx", "densenet121": "testdata/models/densenet121.onnx",
		"gpt_small": "testdata/models/gpt_small.onnx", "gpt_small_op17": "testdata/models/gpt_small.onnx",
		"gru": "testdata/models/gru.onnx", "lstm_ptb_dyn": "testdata/models/lstm_ptb_dyn.onnx",
		"mobilenet_v2": "testdata/models/mobilenet_v2.onnx", "resnet50": "testdata/models/resnet50.onnx",
		"transformer_encoder": "testdata/models/transformer_encoder.onnx",
		"transformer_seq2seq": "testdata/models/transformer_seq2seq.onnx",
		"convnext_tiny":       "testdata/saved/convnext_tiny.onnx.gz", "efficientnet_b0": "testdata/saved/efficientnet_b0.onnx.gz",
		"googlenet": "testdata/saved/googlenet.onnx.gz", "gpt2_hf_small": "testdata/saved/gpt2_hf_small.onnx.gz",
		"gpt_small_newgelu": "testdata/saved/gpt_small_newgelu.onnx.gz", "inception_v3": "testdata/saved/inception_v3.onnx.gz",
		"llama_hf_small": "testdata/saved/llama_hf_small.onnx.gz", "mobilenet_v3_small": "testdata/saved/mobilenet_v3_small.onnx.gz",
		"shufflenet_v2_x1_0": "testdata/saved/shufflenet_v2_x1_0.onnx.gz", "swin_t": "testdata/saved/swin_t.onnx.gz",
		"vit_b_16": "testdata/saved/vit_b_16.onnx.gz", "maxvit_t": "calib/profile/testdata/fixtures/maxvit_t.onnx.gz",
	}
	total := 0
	for name, path := range models {
		t.Run(name, func(t *testing.T) {
			m, err := ir.Read(readMaybeGzip(t, filepath.Join("..", path)), ir.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if name == "gpt_small_op17" {
				setOpset(m, 17) // as record.py did: Reshape-14 infers a computed target's rank
			}
			if err := ORTSession(m, ir.InferOptions{Assume: 2}); err != nil {
				t.Fatal(err)
			}
			if m.Graph.Session == nil {
				t.Fatal("no session view")
			}
			byName := map[string]*ir.Value{}
			for _, n := range m.Graph.Nodes {
				for _, o := range n.Outputs {
					if o != nil {
						byName[o.Name] = o
					}
				}
			}
			symbols := inputSymbols(m.Graph)
			sc := bufio.NewScanner(bytes.NewReader(readMaybeGzip(t, filepath.Join("testdata", "ort_shapes", name+".txt.gz"))))
			compared, differ := 0, 0
			for sc.Scan() {
				vname, want, _ := strings.Cut(sc.Text(), " ")
				v := byName[vname]
				if v == nil {
					continue // a value onnxruntime made
				}
				compared++
				if got := ortShapeJSON(sessionShape(m.Graph, v), symbols); got != want {
					differ++
					if differ > known[name] {
						t.Errorf("%s (%s): onnxruntime knew %s, the view says %s", vname, v.Producer.OpType, want, got)
					}
				}
			}
			if differ != known[name] {
				t.Errorf("%d of %d values differ, want %d", differ, compared, known[name])
			}
			if compared < 10 {
				t.Errorf("only %d values compared", compared)
			}
			total += compared
		})
	}
	if total < 9500 {
		t.Errorf("%d values compared in all, want the 9,500 or more the files hold", total)
	}
}

// setOpset makes m import the default domain at version v.
func setOpset(m *ir.Model, v int64) {
	for i, o := range m.Opsets {
		if o.Domain == "" || o.Domain == "ai.onnx" {
			m.Opsets[i].Version = v
		}
	}
}

// readMaybeGzip reads path, gunzipped when it ends in .gz.
func readMaybeGzip(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, ".gz") {
		return b
	}
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// inputSymbols lists the symbols g's inputs and outputs declare: the ones
// onnxruntime carries by name.
func inputSymbols(g *ir.Graph) map[string]bool {
	syms := map[string]bool{}
	for _, vs := range [][]*ir.Value{g.Inputs, g.Outputs} {
		for _, v := range vs {
			if v == nil || v.Declared == nil {
				continue
			}
			for _, d := range v.Declared.Shape.Dims {
				if d.Sym != "" {
					syms[d.Sym] = true
				}
			}
		}
	}
	return syms
}

// ortShapeJSON writes s as onnxruntime-node's session metadata does: a
// JSON list of numbers, symbol names and "" for an unknown dim; "[]" for
// a scalar or an unknown rank alike.
func ortShapeJSON(s ir.Shape, symbols map[string]bool) string {
	if !s.Ranked {
		return "[]"
	}
	parts := make([]string, len(s.Dims))
	for i, d := range s.Dims {
		switch {
		case d.IsKnown():
			parts[i] = strconv.FormatInt(d.Value, 10)
		case symbols[d.Sym]:
			parts[i] = strconv.Quote(d.Sym)
		default:
			parts[i] = `""`
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}
