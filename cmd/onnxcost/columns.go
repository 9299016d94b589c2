package main

import (
	"bufio"
	"encoding/binary"
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
	ascii := plainPrefix(s) == len(s) || asciiOnly(s)
	count := len(s)
	if !ascii {
		count = utf8.RuneCount(s)
	}
	if count <= n {
		return
	}
	tail := n / 3
	if ascii {
		// All ASCII (the usual case): rune offsets are byte offsets.
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

// plainPrefix is the length of the longest prefix of s whose bytes are
// ASCII and not control characters: each is one rune, and none is a byte
// tabwriter treats specially. It tests 8 bytes at a time, since nearly
// every cell of a table is plain: byte by byte, scanning the cells was a
// third of `shapes` text output on a 112k-node graph, this way NN.
func plainPrefix(s []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		// A byte >= 0x80 sets its high bit in w; a byte < 0x20 sets the
		// high bit of (w - 0x20 per byte) &^ w in it or a lower byte (the
		// borrow of a byte that is less than 0x20 can only set the high
		// bits of bytes above it), so the test is exact for a whole word.
		if (w|(w-0x20*ones)&^w)&highs != 0 {
			break
		}
	}
	for ; i < len(s) && s[i] >= 0x20 && s[i] < utf8.RuneSelf; i++ {
	}
	return i
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

// cellStats returns the rune count of cell c (utf8.RuneCount's: an
// invalid byte is one rune) and whether it holds a byte tabwriter treats
// specially. One pass over the bytes: RuneCount plus ContainsAny per cell
// were a third of `shapes` text output on a 112k-node graph, and were
// still half of it for the cells holding the ellipsis of a cut (most
// cells of an LLM's table, whose names are long).
func cellStats(c []byte) (runes int, special bool) {
	i := plainPrefix(c)
	for runes = i; i < len(c); runes++ {
		b := c[i]
		if b < utf8.RuneSelf {
			if b == '\t' || b == '\n' || b == '\v' || b == '\f' {
				special = true
			}
			i++
			continue
		}
		if b == 0xff {
			special = true
		}
		_, size := utf8.DecodeRune(c[i:])
		i += size
	}
	return runes, special
}

// writeRows is writeColumns on rows. gen is called twice, first to find
// the width of every column block, then to write the lines padded to it,
// so that no more than one line's text is held at a time and nothing is
// kept per line or cell. tabwriter keeps every byte and cell of the output
// in growing buffers until its Flush: on a 112k-node graph that was half
// of `shapes` and 40 MB of its memory; keeping a rune count and a width
// per cell instead was still 15 MB (BenchmarkScaleStages/shapes-text B/op).
//
// A cell holding a byte that tabwriter treats specially (tab, newline,
// vertical tab, form feed, its 0xff escape) sends the whole text through
// tabwriter, so the output never differs from it.
func writeRows(w io.Writer, gen func(emit func(*row))) error {
	var (
		cols    columnBlocks
		special bool
	)
	gen(func(r *row) {
		if cols.add(r) {
			special = true
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
	cols.closeAll()
	bw := bufio.NewWriterSize(w, 1<<16)
	gen(func(r *row) {
		last := len(r.ends) - 1
		for c := range r.ends {
			cell := r.cell(c)
			bw.Write(cell)
			if c < last {
				n, _ := cellStats(cell)
				writeSpaces(bw, cols.width(c)-n)
			}
		}
		bw.WriteByte('\n')
		cols.next()
	})
	return bw.Flush()
}

// spaces is a run of padding written in one piece.
const spaces = "                                                                "

// writeSpaces writes n spaces (none if n <= 0).
func writeSpaces(bw *bufio.Writer, n int) {
	for n > 0 {
		k := min(n, len(spaces))
		bw.WriteString(spaces[:k])
		n -= k
	}
}

// columnPadding is the space tabwriter puts after the widest cell.
const columnPadding = 2

// columnBlocks holds tabwriter's column widths. Every cell of a line but
// its last is in a column; a column block is a maximal run of consecutive
// lines with a cell in that column, and each of its cells is padded to the
// block's widest cell plus padding. (tabwriter finds the blocks of column
// c+1 inside those of column c, but a line with a cell in column c+1 has
// one in column c, so the runs are the same.) add measures the lines one
// after another; after closeAll, width and next replay them in order.
type columnBlocks struct {
	line   int           // lines added, or replayed so far
	open   []columnBlock // the block each column is in at the current line: from line `end`, widest cell so far
	blocks [][]columnBlock
	cursor []int // per column, the block of the current line in replay
}

// columnBlock is a column block: its width, and the line it ends before
// (while open: the line it starts at).
type columnBlock struct{ end, width int }

// add measures line r, and reports whether it has a byte tabwriter
// treats specially.
func (b *columnBlocks) add(r *row) (special bool) {
	columns := max(len(r.ends)-1, 0)
	b.closeFrom(columns)
	for c := range r.ends {
		n, sp := cellStats(r.cell(c))
		special = special || sp
		if c >= columns {
			continue
		}
		if c == len(b.open) {
			b.open = append(b.open, columnBlock{end: b.line})
		}
		b.open[c].width = max(b.open[c].width, n+columnPadding)
	}
	b.line++
	return special
}

// closeFrom ends the open blocks of columns c and after at the current line.
func (b *columnBlocks) closeFrom(c int) {
	for len(b.blocks) < len(b.open) {
		b.blocks = append(b.blocks, nil)
	}
	for k := c; k < len(b.open); k++ {
		b.blocks[k] = append(b.blocks[k], columnBlock{end: b.line, width: b.open[k].width})
	}
	if c < len(b.open) {
		b.open = b.open[:c]
	}
}

// closeAll ends every block after the last line and rewinds for replay.
func (b *columnBlocks) closeAll() {
	b.closeFrom(0)
	b.line = 0
	b.cursor = make([]int, len(b.blocks))
}

// width is the width of column c at the current line of the replay.
func (b *columnBlocks) width(c int) int {
	bl := b.blocks[c]
	k := b.cursor[c]
	for bl[k].end <= b.line {
		k++
	}
	b.cursor[c] = k
	return bl[k].width
}

// next moves the replay to the following line.
func (b *columnBlocks) next() { b.line++ }
