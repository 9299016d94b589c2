package passes

import "testing"

// The table's ordering constraints are data, checked here: every name in
// After is a pass that comes earlier; names are unique; every pass is
// documented and runnable.
func TestTableOrder(t *testing.T) {
	pos := map[string]int{}
	for i, p := range table {
		if _, dup := pos[p.Name]; dup {
			t.Errorf("pass %q listed twice", p.Name)
		}
		pos[p.Name] = i
		if p.Doc == "" || p.Run == nil {
			t.Errorf("pass %q has no Doc or Run", p.Name)
		}
	}
	for i, p := range table {
		for _, a := range p.After {
			j, ok := pos[a]
			if !ok {
				t.Errorf("pass %q: After names unknown pass %q", p.Name, a)
			} else if j >= i {
				t.Errorf("pass %q must come after %q", p.Name, a)
			}
		}
	}
}

func TestSelectedUnknownPass(t *testing.T) {
	if _, err := Selected(Options{Disable: []string{"no-such-pass"}}); err == nil {
		t.Error("unknown pass accepted")
	}
}
