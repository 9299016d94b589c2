package ir_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// inferErr infers b's graph and returns the error text ("" for none).
func inferErr(b *irtest.Builder) string {
	if _, err := ir.InferShapes(b.M, ir.InferOptions{}); err != nil {
		return err.Error()
	}
	return ""
}

func TestOpsetImportRange(t *testing.T) {
	for _, tc := range []struct {
		domain  string
		version int64
		want    string // "" accepts
	}{
		{"", 0, "ai.onnx opset 0; opset versions start at 1"},
		{"", -3, "ai.onnx opset -3"},
		{"ai.onnx", 99, "ai.onnx opset 99, newer than the newest opset known here (27)"},
		{"", ir.LatestOpset + 1, "newer than the newest opset known here"},
		{"", ir.LatestOpset, ""},
		{"", 1, ""},
		{"", 17, ""},
		{"com.example", 99, ""}, // a custom domain versions its own ops
	} {
		b := irtest.New(t, 17)
		b.M.Opsets = []ir.OpsetImport{{Domain: tc.domain, Version: tc.version}}
		b.Output(b.Op("Relu", nil, b.Input("x", ir.Float32, 2, 3)))
		got := inferErr(b)
		switch {
		case tc.want == "" && got != "":
			t.Errorf("%q opset %d: refused: %s", tc.domain, tc.version, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("%q opset %d: got %q, want it to contain %q", tc.domain, tc.version, got, tc.want)
		}
	}
}

func TestArithmeticRefusesNonNumeric(t *testing.T) {
	type build func(b *irtest.Builder, dt ir.DType) *ir.Value
	two := func(op string) build {
		return func(b *irtest.Builder, dt ir.DType) *ir.Value {
			return b.Op(op, nil, b.Input("a", dt, 4, 4), b.Input("b", dt, 4, 4))
		}
	}
	cases := map[string]build{
		"MatMul": two("MatMul"),
		"Gemm":   two("Gemm"),
		"Add":    two("Add"),
		"Sub":    two("Sub"),
		"Mul":    two("Mul"),
		"Div":    two("Div"),
		"Pow":    two("Pow"),
		"Sum":    two("Sum"),
		"Max":    two("Max"),
		"Conv": func(b *irtest.Builder, dt ir.DType) *ir.Value {
			return b.Op("Conv", nil, b.Input("x", dt, 1, 3, 8, 8), b.Input("w", dt, 4, 3, 3, 3))
		},
		"ConvTranspose": func(b *irtest.Builder, dt ir.DType) *ir.Value {
			return b.Op("ConvTranspose", nil, b.Input("x", dt, 1, 3, 8, 8), b.Input("w", dt, 3, 4, 3, 3))
		},
	}
	for op, mk := range cases {
		for _, dt := range []ir.DType{ir.String, ir.Bool} {
			b := irtest.New(t, 17)
			b.Output(mk(b, dt))
			want := "is a " + dt.String() + " tensor; " + op + " takes numbers"
			if got := inferErr(b); !strings.Contains(got, want) {
				t.Errorf("%s on %s: got %q, want it to contain %q", op, dt, got, want)
			}
		}
		for _, dt := range []ir.DType{ir.Float32, ir.Float16, ir.Int64} {
			if op == "Conv" || op == "ConvTranspose" {
				if dt == ir.Int64 {
					continue
				}
			}
			b := irtest.New(t, 17)
			b.Output(mk(b, dt))
			if got := inferErr(b); got != "" {
				t.Errorf("%s on %s refused: %s", op, dt, got)
			}
		}
	}
}

// A mixed operand list names the first non-numeric input, by slot.
func TestNumericCheckNamesTheInput(t *testing.T) {
	b := irtest.New(t, 17)
	b.Output(b.Op("MatMul", nil, b.Input("a", ir.Float32, 4, 4), b.Input("labels", ir.String, 4, 4)))
	got := inferErr(b)
	if want := `MatMul node "MatMul_1": input 1 "labels" is a string tensor`; !strings.Contains(got, want) {
		t.Errorf("got %q, want it to contain %q", got, want)
	}
}

func TestQuoteNameBounded(t *testing.T) {
	if got := ir.QuoteName("conv1"); got != `"conv1"` {
		t.Errorf("short name: got %s", got)
	}
	long := strings.Repeat("é", 50_000) // 100,000 bytes of 2-byte runes
	got := ir.QuoteName(long)
	if len(got) > 250 || !strings.Contains(got, "…") || !strings.HasSuffix(got, "(100000 bytes)") {
		t.Errorf("long name quoted as %d bytes: %.300s", len(got), got)
	}
	if strings.ContainsRune(got, '\uFFFD') || strings.Contains(got, `\x`) {
		t.Errorf("long name cut inside a rune: %.300s", got)
	}
}

// An operand error quotes a 100 kB node name and op type cut short.
func TestOpErrorCutsModelStrings(t *testing.T) {
	b := irtest.New(t, 17)
	x := b.Input("x", ir.Float32, 2, 3)
	n := b.Node("Relu", []*ir.Value{x, x, x}, 1)
	n.Name = strings.Repeat("N", 100_000)
	b.Output(n.Out(0))
	got := inferErr(b)
	if got == "" || len(got) > 400 || !strings.Contains(got, "(100000 bytes)") {
		t.Errorf("arity error with a 100 kB node name: %d bytes: %.500s", len(got), got)
	}
	e := &ir.OpError{Op: strings.Repeat("O", 100_000), Node: "n", Err: errors.New("has 3 inputs")}
	if s := e.Error(); len(s) > 300 || !strings.Contains(s, "…") {
		t.Errorf("100 kB op type: %d bytes: %.400s", len(s), s)
	}
}
