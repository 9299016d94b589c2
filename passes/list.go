package passes

import (
	"fmt"
	"io"
	"strings"
)

// ChangedText lists the passes that changed the graph, in table order.
func (st *Stats) ChangedText() string {
	var parts []string
	for _, name := range Names() {
		if k := st.Changed[name]; k > 0 {
			parts = append(parts, name)
		}
	}
	if len(parts) == 0 {
		return "nothing to fuse"
	}
	return "changed by " + strings.Join(parts, ", ")
}

// WriteList writes the passes in run order, one a line: its name, what it
// does, and the passes it must run after (`optimize --list`).
func WriteList(w io.Writer) error {
	for _, p := range All() {
		after := ""
		if len(p.After) > 0 {
			after = " (after " + strings.Join(p.After, ", ") + ")"
		}
		if _, err := fmt.Fprintf(w, "%-18s %s%s\n", p.Name, p.Doc, after); err != nil {
			return err
		}
	}
	return nil
}
