package main

import (
	"bufio"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// writeColumns lays out lines of tab-separated cells exactly as
// text/tabwriter does with minwidth 0, padding 2, padchar ' ' and no
// flags. gen produces the lines, calling add once per line (the last cell
// of a line is not in a column); it is called twice, first to measure the
// cells, then to write them, so that no more than one line's text is held
// at a time. tabwriter keeps every byte and cell of the output in growing
// buffers until its Flush: on a 112k-node graph that was half of `shapes`
// and 40 MB of its memory.
//
// A cell holding a byte that tabwriter treats specially (tab, newline,
// vertical tab, form feed, its 0xff escape) sends the whole text through
// tabwriter, so the output never differs from it.
func writeColumns(w io.Writer, gen func(add func(cells ...string))) error {
	var (
		ncells  []int32 // cells per line
		runes   []int32 // rune count of every cell, line after line
		special bool
	)
	gen(func(cells ...string) {
		ncells = append(ncells, int32(len(cells)))
		for _, s := range cells {
			runes = append(runes, int32(utf8.RuneCountInString(s)))
			if strings.ContainsAny(s, "\t\n\v\f\xff") {
				special = true
			}
		}
	})
	if special {
		tw := tabwriter.NewWriter(w, 0, 4, columnPadding, ' ', 0)
		gen(func(cells ...string) {
			io.WriteString(tw, strings.Join(cells, "\t")+"\n")
		})
		return tw.Flush()
	}
	l := &layout{ncells: ncells, runes: runes, start: make([]int32, len(ncells)), width: make([]int32, len(runes))}
	off := int32(0)
	for i, n := range ncells {
		l.start[i] = off
		off += n
	}
	l.format(nil, 0, len(ncells))
	bw := bufio.NewWriterSize(w, 1<<16)
	k := 0 // cell index
	gen(func(cells ...string) {
		for _, cell := range cells {
			bw.WriteString(cell)
			for pad := l.width[k] - l.runes[k]; pad > 0; pad-- {
				bw.WriteByte(' ')
			}
			k++
		}
		bw.WriteByte('\n')
	})
	return bw.Flush()
}

// columnPadding is the space tabwriter puts after the widest cell.
const columnPadding = 2

// layout computes the width every cell is padded to (0: not padded).
type layout struct {
	ncells, runes []int32
	start         []int32 // index in runes of each line's first cell
	width         []int32
}

// format is tabwriter's format: lines [line0, line1) in column
// len(widths), where a run of lines that have a cell in that column is a
// block whose width is its widest cell plus padding.
func (l *layout) format(widths []int32, line0, line1 int) {
	column := int32(len(widths))
	for this := line0; this < line1; this++ {
		if column >= l.ncells[this]-1 {
			continue
		}
		l.setLines(widths, line0, this)
		line0 = this
		width := int32(0)
		for ; this < line1; this++ {
			if column >= l.ncells[this]-1 {
				break
			}
			if cw := l.runes[l.start[this]+column] + columnPadding; cw > width {
				width = cw
			}
		}
		l.format(append(widths, width), line0, this)
		line0 = this
	}
	l.setLines(widths, line0, line1)
}

// setLines gives each cell of lines [line0, line1) that has a column its
// column's width (tabwriter's writeLines).
func (l *layout) setLines(widths []int32, line0, line1 int) {
	for i := line0; i < line1; i++ {
		for j := int32(0); j < l.ncells[i] && int(j) < len(widths); j++ {
			l.width[l.start[i]+j] = widths[j]
		}
	}
}
