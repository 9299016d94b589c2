package session

import (
	"fmt"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
)

// TestTextNodeNotes: the page gets the text report's node-note lines
// (render.NodeNoteLines), one per line, with the count of those left out;
// a report whose costed nodes have no note gets no key at all.
func TestTextNodeNotes(t *testing.T) {
	r := &report.Report{Totals: report.Totals{TimeS: 3e-6}}
	for i := range 8 {
		r.Nodes = append(r.Nodes, report.NodeCost{Name: fmt.Sprintf("n%d", i), TimeS: 3e-6 / 8, Note: fmt.Sprintf("note %d", i)})
	}
	r.Nodes = append(r.Nodes, report.NodeCost{Name: "folded", Note: "constant: no run-time cost"})
	lines, more := render.NodeNoteLines(r)
	if more != 2 || len(lines) != 6 {
		t.Fatalf("NodeNoteLines: %d lines, %d more; want 6 and 2", len(lines), more)
	}
	got := strings.Split(Text(r)["node_notes"], "\n")
	want := append(lines, "… 2 more notes")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("node_notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range r.Nodes {
		r.Nodes[i].Note = ""
	}
	if v, ok := Text(r)["node_notes"]; ok {
		t.Errorf("no notes, yet node_notes = %q", v)
	}
}
