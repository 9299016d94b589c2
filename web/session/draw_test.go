package session

import (
	"strings"
	"testing"
)

// TestDrawOpensGroups: draw takes the page's view of the graph (open
// groups, a node to reveal, a focus), names every box it draws, and
// refuses a focus that is not a regular expression with a message.
func TestDrawOpensGroups(t *testing.T) {
	s := open(t, "bert_base.onnx")
	st := Settings{GPU: "T4", Plan: "unfused"}
	v, err := s.Draw(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Roofline.Points) == 0 {
		t.Errorf("draw without a graph view has no roofline points")
	}
	if len(v.Groups) == 0 || v.Expanded == nil {
		t.Fatalf("draw named %d boxes, expanded %v", len(v.Groups), v.Expanded)
	}
	var group string
	for _, g := range v.Groups {
		if !strings.Contains(v.DOT, `id="`+g.ID+`"`) {
			t.Errorf("group %s is not in the DOT", g.ID)
		}
		if g.Key != "" && group == "" {
			group = g.Key
		}
	}
	if strings.Contains(v.DOT, "set --") {
		t.Errorf("the page's legend names CLI flags")
	}
	if group == "" {
		t.Fatalf("BERT-base draws no group at %d boxes", len(v.Groups))
	}
	st.Graph = &GraphView{Expand: []string{group}}
	w, err := s.Draw(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Groups) <= len(v.Groups) || len(w.Expanded) != 1 {
		t.Errorf("opening %s: %d boxes (was %d), expanded %v", group, len(w.Groups), len(v.Groups), w.Expanded)
	}
	r, _ := s.Estimate(Settings{GPU: "T4", Plan: "unfused"})
	last := ""
	for i := range r.Nodes {
		if r.Nodes[i].TimeS > 0 && strings.Count(r.Nodes[i].Name, "/") > 3 {
			last = r.Nodes[i].Name
		}
	}
	st.Graph = &GraphView{Reveal: last}
	if w, err = s.Draw(st); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range w.Groups {
		found = found || (g.Kind == "node" && g.Name == last)
	}
	if !found {
		t.Errorf("reveal %s: not drawn alone", last)
	}
	st.Graph = &GraphView{Focus: "("}
	if _, err := s.Draw(st); err == nil || !strings.Contains(err.Error(), "focus") {
		t.Errorf("a bad focus: %v", err)
	}
	if c := AllChoices(); len(c.Plans) < 5 {
		t.Errorf("choices offer plans %v", c.Plans)
	}
}
