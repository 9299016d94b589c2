package ir

import (
	"errors"
	"strings"
	"testing"
)

// An op used at an opset outside its schema's [Since, Until] is refused at
// its node, naming the op, the imported opset and the op's range. Each
// refused case is accepted by the op's shape rule alone (the accepted
// cases use the same inputs), so these fail if the range check goes.
func TestOpsetRangeRefused(t *testing.T) {
	mat := []fcIn{fcKnownIn("a", Float32, 2, 3), fcKnownIn("b", Float32, 3, 4)}
	img := []fcIn{fcKnownIn("x", Float32, 1, 1, 2, 2), {name: "scales", dt: Float32, shape: KnownShape(4), floats: []float64{1, 1, 2, 2}}}
	for _, c := range []struct {
		name  string
		opset int64
		op    string
		attrs []*Attribute
		ins   []fcIn
		want  string // "" when accepted
	}{
		{"Einsum before 12", 11, "Einsum", []*Attribute{fcAttrStr("equation", "ij,jk->ik")}, mat,
			"the model imports ai.onnx opset 11, but Einsum exists only in opset 12 and later"},
		{"Einsum at 12", 12, "Einsum", []*Attribute{fcAttrStr("equation", "ij,jk->ik")}, mat, ""},
		{"Upsample after 10", 11, "Upsample", nil, img, "but Upsample exists only in opsets 1 to 10"},
		{"Upsample at 9", 9, "Upsample", nil, img, ""},
		{"Gelu before 20", 17, "Gelu", nil, mat[:1], "Gelu exists only in opset 20 and later"},
	} {
		n, err := fcInfer(t, c.opset, c.op, c.attrs, c.ins, 1)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		var oe *OpError
		if !errors.As(err, &oe) {
			t.Errorf("%s: got %v, want an *OpError", c.name, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || !strings.Contains(msg, `"`+n.Name+`"`) {
			t.Errorf("%s: got %q, want the node %q and %q", c.name, msg, n.Name, c.want)
		}
	}
}

// A model that imports no version of a domain is not held to a range:
// the default domain is then inferred at DefaultOpset (below Swish's 24),
// and a custom domain has no version to compare.
func TestOpsetRangeWithoutImport(t *testing.T) {
	g := NewGraph("g")
	ins := fcAddInputs(t, g, []fcIn{fcKnownIn("x", Float32, 2, 3)})
	sw := fcNode(t, g, "Swish", nil, ins, 1)
	fg := fcNode(t, g, "FastGelu", nil, sw.Outputs, 1)
	fg.Domain = "com.microsoft"
	g.AddOutput(fg.Outputs[0])
	if _, err := InferShapes(&Model{Graph: g}, InferOptions{}); err != nil {
		t.Fatal(err)
	}
}
