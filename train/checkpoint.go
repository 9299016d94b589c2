package train

import (
	"fmt"
	"math"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// checkpointing is activation recomputation (Options.Checkpoint):
// the nodes are cut into segments; the forward keeps only the tensors that
// cross a segment boundary, and a recomputed segment re-runs its forward
// just before its backward, so the tensors its backward reads live only
// from then to that backward (memory.go).
//
//   - "sqrt" (Chen et al., "Training deep nets with sublinear memory
//     cost", 2016): segments of ⌈√n⌉ nodes in topological order; every
//     segment but the last (which PyTorch's checkpoint_sequential runs
//     normally) is recomputed.
//   - "blocks": one segment per repeated block, as wrapping each block in
//     torch.utils.checkpoint does (Hugging Face's gradient checkpointing
//     wraps every transformer layer, the last one too). The blocks are
//     found from the exporter's module scopes (blockScopes); nodes outside
//     every block (stem, head) run normally.
type checkpointing struct {
	// seg is each node's segment, -1 for a node that is not recomputed.
	seg []int
	// end is each segment's last node.
	end []int
	// how says how the segments were found (for the report's notes).
	how string
}

// CheckpointModes lists the --checkpoint values.
func CheckpointModes() []string { return []string{"none", "blocks", "sqrt"} }

func newCheckpointing(mode string, nodes []*ir.Node) (checkpointing, error) {
	n := len(nodes)
	ck := checkpointing{seg: make([]int, n)}
	for i := range ck.seg {
		ck.seg[i] = -1
	}
	switch mode {
	case "", "none":
		return ck, nil
	case "sqrt":
		if n < 4 {
			ck.how = fmt.Sprintf("sqrt: %d nodes, too few to cut; nothing recomputed", n)
			return ck, nil
		}
		size := int(math.Ceil(math.Sqrt(float64(n))))
		last := (n - 1) / size
		for i := range nodes {
			if s := i / size; s < last {
				ck.seg[i] = s
			}
		}
		for s := 0; s < last; s++ {
			ck.end = append(ck.end, min((s+1)*size-1, n-1))
		}
		ck.how = fmt.Sprintf("activation checkpointing (sqrt): segments of %d nodes; all but the last re-run their forward in backward", size)
		return ck, nil
	case "blocks":
		scopes, depth := blockScopes(nodes)
		prev := ""
		for i, s := range scopes {
			if s == "" {
				prev = ""
				continue
			}
			if s != prev {
				ck.end = append(ck.end, i)
			}
			ck.seg[i] = len(ck.end) - 1
			ck.end[len(ck.end)-1] = i
			prev = s
		}
		if len(ck.end) == 0 {
			ck.how = "activation checkpointing (blocks): no repeated block found (no exporter module scope such as /layer1/layer1.0/ or /h.3/ with two or more nodes); nothing recomputed"
			return ck, nil
		}
		ck.how = fmt.Sprintf("activation checkpointing (blocks): %d blocks found from the exporter's module scopes at depth %d (numbered modules such as layer1.0, h.3 of two or more nodes); each re-runs its forward in backward, stem and head do not", len(ck.end), depth)
		return ck, nil
	}
	return ck, fmt.Errorf("analyze: unknown checkpoint mode %q (want %s)", mode, strings.Join(CheckpointModes(), ", "))
}

// recomputed reports whether node i's segment is re-run in backward.
func (c checkpointing) recomputed(i int) bool { return i < len(c.seg) && c.seg[i] >= 0 }

// sameSegment reports whether nodes i and j are in one recomputed segment.
func (c checkpointing) sameSegment(i, j int) bool {
	return c.recomputed(i) && c.recomputed(j) && c.seg[i] == c.seg[j]
}

// segEnd is the last node of i's segment (i must be recomputed).
func (c checkpointing) segEnd(i int) int { return c.end[c.seg[i]] }

// numberedModule reports whether a scope component names one child of a
// PyTorch ModuleList or Sequential as torch.onnx writes it: "layer1.0",
// "h.11", "blocks.3", "encoder.layer.7" — what `^[A-Za-z_][\w.]*\.\d+$`
// matches (a compiled regexp cost 0.1 ms of every start).
func numberedModule(s string) bool {
	dot := strings.LastIndexByte(s, '.')
	if dot < 1 || dot == len(s)-1 || !(s[0] == '_' || 'a' <= s[0]|0x20 && s[0]|0x20 <= 'z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		digit := '0' <= c && c <= '9'
		if i > dot {
			if !digit {
				return false
			}
		} else if !(digit || c == '.' || c == '_' || 'a' <= c|0x20 && c|0x20 <= 'z') {
			return false
		}
	}
	return true
}

// blockScopes gives each node the scope of the repeated block it belongs
// to ("" for none) and the scope depth used. Exporters record the module
// path (ir.Node.ModulePath: "/layer1/layer1.0/conv1"); a block is a numbered
// module (numberedModule) at the shallowest depth where such modules hold
// two or more nodes each: at depth 2 for ResNet (/layer1/layer1.0), 1 for
// GPT-2 (/h.0). VGG's and AlexNet's numbered modules (/features/features.0)
// are single layers, so a plain chain has no block. Nodes of one block
// must be consecutive in topological order; a block scope met again
// after another one is a new segment.
func blockScopes(nodes []*ir.Node) ([]string, int) {
	const maxDepth = 4
	for d := 1; d <= maxDepth; d++ {
		scopes := make([]string, len(nodes))
		count := map[string]int{}
		for i, n := range nodes {
			path := n.ModulePath()
			if path == "" {
				continue
			}
			parts := strings.Split(strings.Trim(path, "/"), "/")
			if len(parts) < d || !numberedModule(parts[d-1]) {
				continue
			}
			scopes[i] = "/" + strings.Join(parts[:d], "/")
			count[scopes[i]]++
		}
		blocks := 0
		for s, c := range count {
			if c >= 2 {
				blocks++
			} else {
				delete(count, s)
			}
		}
		if blocks < 2 {
			continue
		}
		for i, s := range scopes {
			if count[s] == 0 {
				scopes[i] = ""
			}
		}
		return scopes, d
	}
	return make([]string, len(nodes)), 0
}
