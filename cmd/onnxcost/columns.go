package main

import (
	"bufio"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// columns lays out lines of tab-separated cells exactly as
// text/tabwriter does with minwidth 0, padding 2, padchar ' ' and no
// flags, for cells that hold none of the bytes tabwriter treats specially.
// tabwriter keeps every byte and cell of the output in small growing
// buffers before its single Flush; on a 112k-node graph that was half of
// `shapes`. Here each cell is a string, the widths are computed once and
// the text is written through one buffered writer.
type columns struct {
	lines   [][]string // cells; the last one of a line is not in a column
	special bool       // some cell needs tabwriter's own handling
}

// add appends a line of cells (the last cell ends the line).
func (c *columns) add(cells ...string) {
	for _, s := range cells {
		if strings.ContainsAny(s, "\t\n\v\f\xff") {
			c.special = true
		}
	}
	c.lines = append(c.lines, cells)
}

// columnPadding is the space tabwriter puts after the widest cell.
const columnPadding = 2

// write renders the lines; a line with a special byte in a cell sends the
// whole text through tabwriter, so the output never differs from it.
func (c *columns) write(w io.Writer) error {
	if c.special {
		tw := tabwriter.NewWriter(w, 0, 4, columnPadding, ' ', 0)
		for _, l := range c.lines {
			io.WriteString(tw, strings.Join(l, "\t")+"\n")
		}
		return tw.Flush()
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	widths := make([]int, 0, 8)
	c.format(bw, &widths, 0, len(c.lines))
	return bw.Flush()
}

// format is tabwriter's format: lines [line0, line1) in column
// len(widths), where a run of lines that have a cell in that column is a
// block whose width is its widest cell plus padding.
func (c *columns) format(w *bufio.Writer, widths *[]int, line0, line1 int) {
	column := len(*widths)
	for this := line0; this < line1; this++ {
		if column >= len(c.lines[this])-1 {
			continue
		}
		c.writeLines(w, *widths, line0, this)
		line0 = this
		width := 0
		for ; this < line1; this++ {
			line := c.lines[this]
			if column >= len(line)-1 {
				break
			}
			if cw := utf8.RuneCountInString(line[column]) + columnPadding; cw > width {
				width = cw
			}
		}
		*widths = append(*widths, width)
		c.format(w, widths, line0, this)
		*widths = (*widths)[:len(*widths)-1]
		line0 = this
	}
	c.writeLines(w, *widths, line0, line1)
}

// writeLines writes lines [line0, line1), padding each cell that has a
// column width to it.
func (c *columns) writeLines(w *bufio.Writer, widths []int, line0, line1 int) {
	for _, line := range c.lines[line0:line1] {
		for j, cell := range line {
			w.WriteString(cell)
			if j < len(widths) {
				for pad := widths[j] - utf8.RuneCountInString(cell); pad > 0; pad-- {
					w.WriteByte(' ')
				}
			}
		}
		w.WriteByte('\n')
	}
}
