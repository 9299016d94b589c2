package models

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// Param is one integer knob of a zoo entry.
type Param struct {
	Name    string
	Default int64
	Doc     string
}

// Entry is one model of the zoo, addressable by name from the CLI.
type Entry struct {
	Name   string
	Doc    string
	Params []Param // in display order, with their defaults
	// Build makes the model; params override the defaults by name. An
	// unknown name or an out-of-range value is an error, never a panic.
	Build func(params map[string]int64) (*ir.Model, error)
}

// maxParam bounds every parameter value: far above any real model, and
// small enough that products of a few of them cannot overflow int64 before
// the shape limits reject them.
const maxParam = 1 << 40

// maxLayers bounds layer counts (GPT-3 has 96, LLaMA-70B 80) far above
// real models, high enough for the 100k-node scale benchmarks (a LLaMA
// block is 78 nodes: llama-tiny with layers=1436 has 112,041).
const maxLayers = 10000

// entry wires a build function over resolved parameters into an Entry.
func entry(name, doc string, params []Param, build func(p map[string]int64) (*ir.Model, error)) Entry {
	return Entry{Name: name, Doc: doc, Params: params, Build: func(given map[string]int64) (*ir.Model, error) {
		p, err := resolve(name, params, given)
		if err != nil {
			return nil, err
		}
		return build(p)
	}}
}

// resolve merges given over the defaults, rejecting unknown names and
// values outside [-1, 2^40] (layers: [1, maxLayers]).
func resolve(model string, params []Param, given map[string]int64) (map[string]int64, error) {
	p := make(map[string]int64, len(params))
	for _, q := range params {
		p[q.Name] = q.Default
	}
	for _, k := range slices.Sorted(maps.Keys(given)) {
		v := given[k]
		if _, ok := p[k]; !ok {
			known := make([]string, len(params))
			for i, q := range params {
				known[i] = q.Name
			}
			return nil, fmt.Errorf("%s has no parameter %q (known: %s)", model, k, strings.Join(known, ", "))
		}
		if v < Symbolic || v > maxParam {
			return nil, fmt.Errorf("%s: parameter %s=%d out of range", model, k, v)
		}
		if (k == "layers" || k == "nodes") && v < 1 {
			return nil, fmt.Errorf("%s: parameter %s must be >= 1", model, k)
		}
		if k == "layers" && v > maxLayers {
			return nil, fmt.Errorf("%s: parameter layers=%d exceeds %d", model, v, maxLayers)
		}
		p[k] = v
	}
	return p, nil
}

var (
	pBatch1 = Param{"batch", 1, "batch size (-1 = symbolic \"batch\")"}
	pImage  = Param{"image", 224, "input height and width"}
	pClass  = Param{"classes", 1000, "classifier outputs"}
)

func imageParams(extra ...Param) []Param {
	return append([]Param{pBatch1, pImage, pClass}, extra...)
}

func imageConfig(p map[string]int64) ImageConfig {
	return ImageConfig{Batch: p["batch"], Image: p["image"], Classes: p["classes"]}
}

func seqParams(seq, batch int64) []Param {
	return []Param{
		{"seq", seq, "sequence length (-1 = symbolic \"seq\")"},
		{"batch", batch, "batch size (-1 = symbolic \"batch\")"},
	}
}

func gptEntry(name string, c GPTConfig) Entry {
	c.defaults()
	params := append([]Param{
		{"vocab", c.Vocab, "vocabulary size"},
		{"positions", c.Positions, "learned positions (n_positions)"},
		{"d_model", c.DModel, "model width"},
		{"heads", c.Heads, "attention heads"},
		{"layers", int64(c.Layers), "decoder blocks"},
		{"untied", 0, "1 = LM head with its own weight instead of the tied embedding"},
	}, seqParams(c.Seq, c.Batch)...)
	params = append(params, decodeParams(512)...)
	doc := fmt.Sprintf("GPT-2-style decoder (d %d, %d heads, %d layers, tied head, tanh GELU)", c.DModel, c.Heads, c.Layers)
	return decodeEntry(entry(name, doc, params, func(p map[string]int64) (*ir.Model, error) {
		return GPT(GPTConfig{Vocab: p["vocab"], Positions: p["positions"], DModel: p["d_model"], Heads: p["heads"],
			Layers: int(p["layers"]), Seq: p["seq"], Batch: p["batch"], Untied: p["untied"] != 0, Decode: p["decode"] != 0, Past: p["past"]})
	}))
}

// decodeParams are the decoders' KV-cache parameters.
func decodeParams(past int64) []Param {
	return []Param{
		{"decode", 0, "1 = one generation step with a key/value cache of past positions (seq = new tokens, 1 unless given)"},
		{"past", past, "with decode=1: cached positions (0 = an empty cache, the prompt's step; -1 = symbolic \"past_sequence_length\")"},
	}
}

// decodeEntry makes a decode step process one new token unless seq is
// given (the default seq is a prompt length).
func decodeEntry(e Entry) Entry {
	build := e.Build
	e.Build = func(given map[string]int64) (*ir.Model, error) {
		if given["decode"] != 0 {
			if _, ok := given["seq"]; !ok {
				g := make(map[string]int64, len(given)+1)
				for k, v := range given {
					g[k] = v
				}
				g["seq"] = 1
				given = g
			}
		}
		return build(given)
	}
	return e
}

func llamaEntry(name, size string, c LlamaConfig) Entry {
	c.defaults()
	params := append([]Param{
		{"vocab", c.Vocab, "vocabulary size"},
		{"d_model", c.DModel, "model width"},
		{"heads", c.Heads, "query heads"},
		{"kv_heads", c.KVHeads, "key/value heads (grouped-query attention)"},
		{"layers", int64(c.Layers), "decoder blocks"},
		{"ff", c.FF, "SwiGLU hidden width"},
	}, seqParams(c.Seq, c.Batch)...)
	params = append(params, decodeParams(1024)...)
	doc := fmt.Sprintf("LLaMA-2 %s-style decoder (RMSNorm, rotary, GQA %d/%d heads, SwiGLU)", size, c.KVHeads, c.Heads)
	return decodeEntry(entry(name, doc, params, func(p map[string]int64) (*ir.Model, error) {
		return Llama(LlamaConfig{Vocab: p["vocab"], DModel: p["d_model"], Heads: p["heads"], KVHeads: p["kv_heads"],
			Layers: int(p["layers"]), FF: p["ff"], Seq: p["seq"], Batch: p["batch"], Decode: p["decode"] != 0, Past: p["past"]})
	}))
}

// Zoo returns every entry, in a fixed order.
func Zoo() []Entry {
	z := []Entry{
		entry("alexnet", "torchvision AlexNet", imageParams(), func(p map[string]int64) (*ir.Model, error) {
			return AlexNet(imageConfig(p))
		}),
	}
	for _, depth := range []int{11, 13, 16, 19} {
		depth := depth
		z = append(z, entry(fmt.Sprintf("vgg%d", depth), fmt.Sprintf("torchvision VGG-%d (bn=1 for vgg%d_bn)", depth, depth),
			imageParams(Param{"bn", 0, "1 = BatchNormalization after every conv"}),
			func(p map[string]int64) (*ir.Model, error) {
				return VGG(VGGConfig{ImageConfig: imageConfig(p), Depth: depth, BatchNorm: p["bn"] != 0})
			}))
	}
	for _, depth := range []int{18, 34, 50, 101, 152} {
		depth := depth
		block := "Bottleneck"
		if depth < 50 {
			block = "BasicBlock"
		}
		z = append(z, entry(fmt.Sprintf("resnet%d", depth), fmt.Sprintf("torchvision ResNet-%d (%s, BN after every conv)", depth, block),
			imageParams(Param{"fold_bn", 0, "1 = BN folded into conv biases, as torch.onnx exports"}),
			func(p map[string]int64) (*ir.Model, error) {
				return ResNet(ResNetConfig{ImageConfig: imageConfig(p), Depth: depth, FoldBN: p["fold_bn"] != 0})
			}))
	}
	var lc LSTMConfig
	lc.defaults()
	z = append(z, entry("lstm-ptb", "word-level LSTM language model, PTB large config (seq-first)",
		append([]Param{
			{"vocab", lc.Vocab, "vocabulary size"},
			{"embed", lc.Embed, "embedding width"},
			{"hidden", lc.Hidden, "LSTM hidden size"},
			{"layers", int64(lc.Layers), "stacked LSTM layers"},
		}, seqParams(lc.Seq, lc.Batch)...),
		func(p map[string]int64) (*ir.Model, error) {
			return LSTM(LSTMConfig{Vocab: p["vocab"], Embed: p["embed"], Hidden: p["hidden"], Layers: int(p["layers"]), Seq: p["seq"], Batch: p["batch"]})
		}))
	var tc TransformerConfig
	tc.defaults()
	z = append(z, entry("transformer", "nn.TransformerEncoder (post-LN, ReLU FF, additive mask, batch-first)",
		append([]Param{
			{"d_model", tc.DModel, "model width"},
			{"heads", tc.Heads, "attention heads"},
			{"layers", int64(tc.Layers), "encoder layers"},
			{"ff", tc.FF, "feed-forward width"},
			{"mask", 1, "0 = no attention mask input"},
		}, seqParams(tc.Seq, tc.Batch)...),
		func(p map[string]int64) (*ir.Model, error) {
			return TransformerEncoder(TransformerConfig{DModel: p["d_model"], Heads: p["heads"], Layers: int(p["layers"]),
				FF: p["ff"], Seq: p["seq"], Batch: p["batch"], NoMask: p["mask"] == 0})
		}))
	z = append(z,
		gptEntry("gpt2-small", GPT2Small), gptEntry("gpt2-medium", GPT2Medium),
		gptEntry("gpt2-large", GPT2Large), gptEntry("gpt2-xl", GPT2XL),
		llamaEntry("llama-tiny", "tiny", LlamaTiny), llamaEntry("llama-7b", "7B", Llama7B),
		llamaEntry("llama-13b", "13B", Llama13B), llamaEntry("llama-70b", "70B", Llama70B),
		entry("synthetic", "deep DAG of Conv+BN+Relu+Add and MatMul+Add+GELU blocks, for benchmarks",
			[]Param{{"nodes", 10000, "approximate node count"}},
			func(p map[string]int64) (*ir.Model, error) {
				if p["nodes"] > MaxSyntheticNodes {
					return nil, fmt.Errorf("synthetic: nodes must be at most %d", MaxSyntheticNodes)
				}
				return Synthetic(int(p["nodes"]))
			}),
	)
	return z
}

// Lookup finds an entry by name (case-insensitive).
func Lookup(name string) (Entry, bool) {
	for _, e := range Zoo() {
		if strings.EqualFold(e.Name, name) {
			return e, true
		}
	}
	return Entry{}, false
}

// Names lists the entry names in order.
func Names() []string {
	z := Zoo()
	out := make([]string, len(z))
	for i, e := range z {
		out[i] = e.Name
	}
	return out
}

// SetDataFile points every weight of m at the external data file name
// (relative to the model's folder), keeping their offsets: `zoo -o
// OUT.onnx` names it OUT.onnx.data, as the fixtures' exporter would.
func SetDataFile(m *ir.Model, name string) {
	for _, v := range m.Graph.Initializers {
		if t := v.Const; t != nil && t.Loc.Missing {
			t.Loc.File = name
		}
	}
}
