package render

import (
	"bufio"
	"bytes"
	"io"
	"unicode/utf8"
)

// table lays out rows in columns: text columns left-aligned, numbers
// right-aligned (text/tabwriter can only do one or the other for all).
//
// Cells are kept back to back in one byte slice, each ending where ends
// says, and a row is a run of cells; formatters append to text directly
// (the append* functions of format.go). A string per cell and a slice per
// row were 420k allocations and 12 MB for the text report of a 112k-node
// LLaMA-shaped graph (28.7k rows after fusion); this layout takes 104
// allocations and 4 MB.
type table struct {
	right []bool  // per column: right-align
	text  []byte  // every cell's text, back to back
	ends  []int32 // ends[k] is the end of cell k in text
	rows  []int32 // rows[r] is one past the index in ends of row r's last cell
}

// cellBytes is about what a cell of the node table averages (96 bytes a
// row of 10 on the 112k-node graph): the text's first size.
const cellBytes = 10

// newTable starts a table with its header row; rows is a hint of how
// many rows will follow.
func newTable(rows int, header []string, right ...bool) *table {
	t := &table{right: right}
	cells := len(header) * (rows + 1)
	t.text = make([]byte, 0, cellBytes*cells)
	t.ends = make([]int32, 0, cells)
	t.rows = make([]int32, 0, rows+1)
	t.add(header...)
	return t
}

// add appends a row of finished cells.
func (t *table) add(cells ...string) {
	for _, c := range cells {
		t.text = append(t.text, c...)
		t.endCell()
	}
	t.endRow()
}

// endCell ends the cell appended to t.text since the last one ended.
func (t *table) endCell() { t.ends = append(t.ends, int32(len(t.text))) }

// endRow ends the row of cells ended since the last row.
func (t *table) endRow() { t.rows = append(t.rows, int32(len(t.ends))) }

// cells calls f with every cell of row r and its column.
func (t *table) cells(r int, f func(col int, cell []byte)) {
	first := int32(0)
	if r > 0 {
		first = t.rows[r-1]
	}
	for k := first; k < t.rows[r]; k++ {
		start := int32(0)
		if k > 0 {
			start = t.ends[k-1]
		}
		f(int(k-first), t.text[start:t.ends[k]])
	}
}

// write pads every cell to its column's width and trims each line's
// trailing spaces. Lines are built in one reused buffer and streamed:
// building the whole table in one string, with a padding string per cell,
// allocated 45 MB for a 112k-node report.
func (t *table) write(w io.Writer) error {
	widths := make([]int, len(t.right))
	for r := range t.rows {
		t.cells(r, func(i int, c []byte) {
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCount(c))
			}
		})
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	pad := func(n int) {
		for ; n > 0; n-- {
			line = append(line, ' ')
		}
	}
	for r := range t.rows {
		line = line[:0]
		t.cells(r, func(i int, c []byte) {
			if i >= len(widths) {
				return // more cells than columns: not shown
			}
			if i > 0 {
				line = append(line, "  "...)
			}
			n := widths[i] - utf8.RuneCount(c)
			if t.right[i] {
				pad(n)
				line = append(line, c...)
			} else {
				line = append(line, c...)
				pad(n)
			}
		})
		line = append(bytes.TrimRight(line, " "), '\n')
		bw.Write(line)
	}
	return bw.Flush()
}
