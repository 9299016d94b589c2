package render

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
)

// maxNoteLines is how many distinct node notes the text report prints
// before "… N more": the notes of most time, which are the ones a reader
// acts on (a GEMM at a library's slow fallback, a branch or trip count
// the total rests on).
const maxNoteLines = 6

// noteGroup is one distinct note and the costed nodes that carry it.
type noteGroup struct {
	text  string
	first string // the first node carrying it, in graph order
	nodes int
	timeS float64
}

// nodeNoteGroups gathers the notes of the nodes that cost time, one group
// per distinct text, most time first (ties by text, so the order is
// deterministic). A node of no time (a folded constant, a view) says why
// it has none in its note; those stay in --format json.
func nodeNoteGroups(r *report.Report) []noteGroup {
	var groups []noteGroup
	at := map[string]int{}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if n.Note == "" || !(n.TimeS > 0) {
			continue
		}
		j, ok := at[n.Note]
		if !ok {
			j = len(groups)
			at[n.Note] = j
			groups = append(groups, noteGroup{text: n.Note, first: n.Name})
		}
		groups[j].nodes++
		groups[j].timeS += n.TimeS
	}
	slices.SortStableFunc(groups, func(a, b noteGroup) int {
		if c := cmp.Compare(b.timeS, a.timeS); c != 0 {
			return c
		}
		return strings.Compare(a.text, b.text)
	})
	return groups
}

// writeNodeNotes prints, under the totals, what the costed nodes' notes
// say: each distinct note once with the nodes that carry it and their
// share of the time, so an approximation or a slow path a JSON reader
// sees per node is not hidden from a text reader.
func writeNodeNotes(w io.Writer, r *report.Report) {
	writeNoteGroups(w, r, "\nnode notes (most time first; --format json has each node's):\n",
		func(share, who, text string) string {
			return fmt.Sprintf("  %5s  %s: %s\n", share, Clean(who), Clean(text))
		},
		"  ")
}

// writeNodeNotesMarkdown is writeNodeNotes as a Markdown list, for the
// reports pasted into pull requests.
func writeNodeNotesMarkdown(w io.Writer, r *report.Report) {
	writeNoteGroups(w, r, "\n**Node notes** (most time first):\n\n",
		func(share, who, text string) string {
			return fmt.Sprintf("- %s · %s: %s\n", share, MarkdownEscape(who), MarkdownEscape(text))
		},
		"- ")
}

// writeNoteGroups writes header, the note groups' lines (noteLines,
// formatted by line) and, after morePrefix, MoreNotes with the count left
// out; nothing when no costed node has a note.
func writeNoteGroups(w io.Writer, r *report.Report, header string, line func(share, who, text string) string, morePrefix string) {
	lines, rest := noteLines(r, line)
	if len(lines) == 0 {
		return
	}
	fmt.Fprint(w, header)
	for _, l := range lines {
		fmt.Fprint(w, l)
	}
	if rest > 0 {
		fmt.Fprintf(w, "%s%s\n", morePrefix, MoreNotes(rest))
	}
}

// MoreNotes is the line that closes a list of note groups cut at
// maxNoteLines: how many it left out. Every writer of the list (text,
// Markdown, the HTML report, the browser app) says it this way.
func MoreNotes(n int) string { return fmt.Sprintf("… %d more notes", n) }

// noteLines formats the first maxNoteLines note groups by line (their
// share of the time, who carries them, the note) and counts the groups
// left out.
func noteLines(r *report.Report, line func(share, who, text string) string) (lines []string, more int) {
	groups := nodeNoteGroups(r)
	shown := groups[:min(len(groups), maxNoteLines)]
	for _, g := range shown {
		lines = append(lines, line(share(g.timeS, r.Totals.TimeS), g.who(), g.text))
	}
	return lines, len(groups) - len(shown)
}

// who names the nodes carrying a note: the node, or how many and the
// first.
func (g noteGroup) who() string {
	if g.nodes > 1 {
		return fmt.Sprintf("%d nodes (%s, …)", g.nodes, g.first)
	}
	return g.first
}

// NodeNoteLines is what writeNodeNotes prints, one plain line per note
// group ("75.5% · /MatMul: …", model strings cleaned), and how many
// groups past maxNoteLines it leaves out: for pages that lay them out
// themselves (the HTML report).
func NodeNoteLines(r *report.Report) (lines []string, more int) {
	return noteLines(r, func(share, who, text string) string {
		return Clean(fmt.Sprintf("%s · %s: %s", share, who, text))
	})
}
