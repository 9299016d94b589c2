package render

import (
	"io"
	"strings"
	"unicode/utf8"
)

// table lays out rows in columns: text columns left-aligned, numbers
// right-aligned (text/tabwriter can only do one or the other for all).
type table struct {
	right []bool // per column: right-align
	rows  [][]string
}

func newTable(header []string, right ...bool) *table {
	t := &table{right: right}
	t.rows = append(t.rows, header)
	return t
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) error {
	widths := make([]int, len(t.right))
	for _, r := range t.rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		line := strings.Builder{}
		for i, c := range r {
			if i >= len(widths) {
				break
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			if t.right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
