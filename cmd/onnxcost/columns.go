package main

import (
	"bufio"
	"bytes"
	"io"
	"text/tabwriter"
	"unicode/utf8"
)

// writeColumns lays out lines of tab-separated cells exactly as
// text/tabwriter does with minwidth 0, padding 2, padchar ' ' and no
// flags. gen produces the lines, calling add once per line (the last cell
// of a line is not in a column); see writeRows.
func writeColumns(w io.Writer, gen func(add func(cells ...string))) error {
	var r row
	return writeRows(w, func(emit func(*row)) {
		gen(func(cells ...string) {
			r.reset()
			for _, c := range cells {
				r.text = append(r.text, c...)
				r.endCell()
			}
			emit(&r)
		})
	})
}

// row is one line of cells built in a reused buffer, so that a table of
// 100k lines allocates nothing per cell: cell k is
// text[ends[k-1]:ends[k]] (from 0 for the first).
type row struct {
	text    []byte
	ends    []int
	scratch []byte // see cut
}

func (r *row) reset() { r.text, r.ends = r.text[:0], r.ends[:0] }

// endCell closes the cell written since the previous one.
func (r *row) endCell() { r.ends = append(r.ends, len(r.text)) }

// cell returns cell k's bytes.
func (r *row) cell(k int) []byte {
	lo := 0
	if k > 0 {
		lo = r.ends[k-1]
	}
	return r.text[lo:r.ends[k]]
}

// cut shortens the text written since byte from to n runes, keeping its
// head and tail around an ellipsis: a third of n for the tail, the rest
// less the ellipsis for the head.
func (r *row) cut(from, n int) {
	s := r.text[from:]
	count := utf8.RuneCount(s)
	if count <= n {
		return
	}
	tail := n / 3
	if count == len(s) && asciiOnly(s) {
		// All ASCII (the usual case): rune offsets are byte offsets. (An
		// invalid byte also counts as one rune, hence the check.)
		r.scratch = append(r.scratch[:0], s[count-tail:]...)
		r.text = append(append(r.text[:from+n-tail-1], "…"...), r.scratch...)
		return
	}
	if !utf8.Valid(s) {
		// A cut string's invalid bytes come out as U+FFFD, as converting
		// it to runes and back does.
		rs := []rune(string(s))
		r.text = append(r.text[:from], string(rs[:n-tail-1])+"…"+string(rs[len(rs)-tail:])...)
		return
	}
	head := runeOffset(s, n-tail-1)
	r.scratch = append(r.scratch[:0], s[runeOffset(s, count-tail):]...)
	r.text = append(append(r.text[:from+head], "…"...), r.scratch...)
}

// asciiOnly reports whether every byte of s is ASCII.
func asciiOnly(s []byte) bool {
	for _, b := range s {
		if b >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// runeOffset is the byte offset of rune k of s.
func runeOffset(s []byte, k int) int {
	off := 0
	for ; k > 0; k-- {
		_, size := utf8.DecodeRune(s[off:])
		off += size
	}
	return off
}

// cellStats returns the rune count of cell c and whether it holds a byte
// tabwriter treats specially. One pass over bytes for ASCII cells (nearly
// all of them): RuneCount plus ContainsAny per cell were a third of
// `shapes` text output on a 112k-node graph.
func cellStats(c []byte) (runes int, special bool) {
	for _, b := range c {
		switch {
		case b >= utf8.RuneSelf:
			return utf8.RuneCount(c), bytes.ContainsAny(c, "\t\n\v\f\xff")
		case b == '\t' || b == '\n' || b == '\v' || b == '\f':
			special = true
		}
	}
	return len(c), special
}

// writeRows is writeColumns on rows. gen is called twice, first to measure
// the cells, then to write them, so that no more than one line's text is
// held at a time. tabwriter keeps every byte and cell of the output in
// growing buffers until its Flush: on a 112k-node graph that was half of
// `shapes` and 40 MB of its memory.
//
// A cell holding a byte that tabwriter treats specially (tab, newline,
// vertical tab, form feed, its 0xff escape) sends the whole text through
// tabwriter, so the output never differs from it.
func writeRows(w io.Writer, gen func(emit func(*row))) error {
	var (
		ncells  []int32 // cells per line
		runes   []int32 // rune count of every cell, line after line
		special bool
	)
	gen(func(r *row) {
		ncells = append(ncells, int32(len(r.ends)))
		for k := range r.ends {
			n, sp := cellStats(r.cell(k))
			runes = append(runes, int32(n))
			special = special || sp
		}
	})
	if special {
		tw := tabwriter.NewWriter(w, 0, 4, columnPadding, ' ', 0)
		var line []byte
		gen(func(r *row) {
			line = line[:0]
			for k := range r.ends {
				if k > 0 {
					line = append(line, '\t')
				}
				line = append(line, r.cell(k)...)
			}
			tw.Write(append(line, '\n'))
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
	gen(func(r *row) {
		for c := range r.ends {
			bw.Write(r.cell(c))
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
