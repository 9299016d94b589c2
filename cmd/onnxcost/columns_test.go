package main

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// TestColumnsMatchTabwriter: the column writer must give tabwriter's bytes
// for any mix of line shapes (cells per line vary, as input, node and
// output lines of `shapes` do, and as nested subgraph lines do), with
// multi-byte runes and special bytes (which go through tabwriter itself).
func TestColumnsMatchTabwriter(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"", "a", "bb", "relu_1", "héllo", "→x", "with\ttab", "x\xffy", "some longer cell text", "bad\x80\xc3", "\ufffd…"}
	for trial := 0; trial < 500; trial++ {
		var lines [][]string
		var want bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
		for l := rng.Intn(12); l >= 0; l-- {
			cells := make([]string, rng.Intn(6)) // no cells: an empty line
			for k := range cells {
				cells[k] = words[rng.Intn(len(words))]
				if trial%2 == 0 && (strings.Contains(cells[k], "\t") || strings.Contains(cells[k], "\xff")) {
					cells[k] = "plain"
				}
			}
			lines = append(lines, cells)
			tw.Write([]byte(strings.Join(cells, "\t") + "\n"))
		}
		tw.Flush()
		var got bytes.Buffer
		err := writeColumns(&got, func(add func(cells ...string)) {
			for _, l := range lines {
				add(l...)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("trial %d:\ngot\n%q\nwant\n%q", trial, got.String(), want.String())
		}
	}
}

// TestShapesJSONStreamed: the streamed shapes JSON is byte for byte what
// encoding the whole report gives, with nodes, nested subgraph nodes,
// escapes, and with no nodes.
func TestShapesJSONStreamed(t *testing.T) {
	r := &shapesJSON{Header: report.Header{SchemaVersion: 1, ToolVersion: "v<1>"}, Model: "m\n\"x\".onnx", Opsets: map[string]int64{"ai.onnx": 17},
		Bindings: map[string]int64{}, Warnings: []string{"w & <b>"}, UnknownOps: []string{}, Unbound: []string{}}
	for _, nodes := range [][]shapesNodeJSON{nil, {}, {
		{Name: "a\t<b>", OpType: "Relu", Inputs: []report.TensorInfo{{Name: "x", DType: "float32", Shape: report.Shape{ir.D(1), ir.S("n")}}}, Outputs: []report.TensorInfo{}},
		{Name: "c", OpType: "If", Domain: "d", Graph: "c.then_branch", Inputs: []report.TensorInfo{}, Outputs: []report.TensorInfo{{Name: "y", DType: "float32"}}},
		{Name: "é\u2028\x01\xff\\", OpType: "Add", Inputs: []report.TensorInfo{
			{Name: "<&>", DType: "float16", Shape: report.Shape{}},
			{Name: "s", DType: "int64", Shape: report.Shape{ir.S("a<b&c>"), ir.S("n\"q"), ir.S("ü"), ir.D(0)}},
		}, Outputs: nil},
	}} {
		r.Nodes = nodes
		var want, got bytes.Buffer
		if err := writeJSON(&want, r); err != nil {
			t.Fatal(err)
		}
		if err := writeShapesJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%d nodes:\ngot\n%s\nwant\n%s", len(nodes), got.String(), want.String())
		}
	}
}

// TestRowCut: cutting a cell in place gives what cutting its string by
// runes gives (head, ellipsis, a third of the width as tail), for ASCII
// and multi-byte text around the limit.
func TestRowCut(t *testing.T) {
	ref := func(s string, n int) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		tail := n / 3
		return string(r[:n-tail-1]) + "…" + string(r[len(r)-tail:])
	}
	for _, s := range []string{"", "abc", "abcdefghij", "héllo→wörld_of_tensors", "ééééééééééé", "a→b→c→d→e→f→g", "x\xffyzzzzzzzzzz"} {
		for n := 1; n <= 12; n++ {
			var r row
			r.text = append(r.text, "pre:"...)
			r.text = append(r.text, s...)
			r.cut(4, n)
			r.text = append(r.text, ":post"...)
			if got, want := string(r.text), "pre:"+ref(s, n)+":post"; got != want {
				t.Errorf("cut(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

// TestCellStats: the one-pass count is utf8.RuneCount (an invalid byte is
// one rune) and the special bytes are those tabwriter.Write acts on, on
// random bytes mixing ASCII, multi-byte runes, their fragments and invalid
// bytes.
func TestCellStats(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	pieces := []string{"a", "Z", " ", "\t", "\n", "\v", "\f", "\r", "é", "…", "→", "😀", "\xff", "\xe2\x80", "\x80", "\xc3", "\xf0\x9f"}
	for trial := 0; trial < 2000; trial++ {
		var c []byte
		for k := rng.Intn(8); k > 0; k-- {
			c = append(c, pieces[rng.Intn(len(pieces))]...)
		}
		runes, special := cellStats(c)
		if want := utf8.RuneCount(c); runes != want {
			t.Errorf("cellStats(%q) runes = %d, want %d", c, runes, want)
		}
		want := false
		for _, b := range c {
			want = want || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == tabwriter.Escape
		}
		if special != want {
			t.Errorf("cellStats(%q) special = %v, want %v", c, special, want)
		}
	}
}
