package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestNodeNotesInText: the notes of costed nodes reach the text and
// Markdown reports, one line per distinct note, most time first, a note
// of many nodes once with their count; a node of no time (a folded
// constant) keeps its note to JSON, and past maxNoteLines the rest are
// counted.
func TestNodeNotesInText(t *testing.T) {
	r := sample()
	r.Nodes[0].Note = "alignment-1 fallback: padded it would take 1 µs"
	r.Nodes[1].Note = "Winograd F(2x2,3x3)"
	r.Nodes[2].Note = "Winograd F(2x2,3x3)"
	r.Nodes = append(r.Nodes, r.Nodes[1])
	r.Nodes[3].Name, r.Nodes[3].TimeS, r.Nodes[3].Note = "folded", 0, "constant: no run-time cost"

	var b bytes.Buffer
	if err := Text(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	first := strings.Index(out, `conv|1\u000a::error::x: alignment-1 fallback`)
	second := strings.Index(out, "2 nodes (relu, …): Winograd F(2x2,3x3)")
	if first < 0 || second < 0 || second < first {
		t.Errorf("text report lacks the notes, most time first:\n%s", out)
	}
	if strings.Contains(out, "constant: no run-time cost") {
		t.Errorf("a zero-time node's note reached the text report:\n%s", out)
	}

	b.Reset()
	if err := Markdown(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "- 33.3% · 2 nodes (relu, …): Winograd F(2x2,3x3)") {
		t.Errorf("Markdown report lacks the shared note:\n%s", b.String())
	}

	for i := range r.Nodes {
		r.Nodes[i].TimeS, r.Nodes[i].Note = 1e-6, fmt.Sprintf("note %d", i)
	}
	for i := range maxNoteLines {
		n := r.Nodes[0]
		n.Note = fmt.Sprintf("extra %d", i)
		r.Nodes = append(r.Nodes, n)
	}
	b.Reset()
	if err := Text(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("… %d more notes", len(r.Nodes)-maxNoteLines); !strings.Contains(b.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, b.String())
	}
}
