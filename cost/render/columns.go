package render

import (
	"encoding/binary"
	"io"
	"sort"
	"sync"
	"text/tabwriter"
	"unicode/utf8"
)

// WriteColumns lays out lines of tab-separated cells exactly as
// text/tabwriter does with minwidth 0, padding 2, padchar ' ' and no
// flags. gen produces the lines, calling add once per line (the last cell
// of a line is not in a column); see WriteRows.
func WriteColumns(w io.Writer, gen func(add func(cells ...string))) error {
	return WriteRows(w, 1, func(_ int, r *Row, emit func()) {
		gen(func(cells ...string) {
			r.Reset()
			for _, c := range cells {
				r.Text = append(r.Text, c...)
				r.EndCell()
			}
			emit()
		})
	})
}

// Row is one line of cells built in a reused buffer, so that a table of
// 100k lines allocates nothing per cell: a cell is the text appended to
// Text between two EndCell calls (cell k is Text[ends[k-1]:ends[k]], from 0
// for the first).
type Row struct {
	Text    []byte
	ends    []int
	scratch []byte // see Cut
}

// Reset empties r for its next line.
func (r *Row) Reset() { r.Text, r.ends = r.Text[:0], r.ends[:0] }

// EndCell closes the cell written since the previous one.
func (r *Row) EndCell() { r.ends = append(r.ends, len(r.Text)) }

// NumCells is the number of cells ended so far.
func (r *Row) NumCells() int { return len(r.ends) }

// Cell returns cell k's bytes.
func (r *Row) Cell(k int) []byte {
	lo := 0
	if k > 0 {
		lo = r.ends[k-1]
	}
	return r.Text[lo:r.ends[k]]
}

// Cut shortens the text written since byte from to n runes, keeping its
// head and tail around an ellipsis: a third of n for the tail, the rest
// less the ellipsis for the head.
func (r *Row) Cut(from, n int) {
	s := r.Text[from:]
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
		r.Text = append(append(r.Text[:from+n-tail-1], "…"...), r.scratch...)
		return
	}
	if !utf8.Valid(s) {
		// A cut string's invalid bytes come out as U+FFFD, as converting
		// it to runes and back does.
		rs := []rune(string(s))
		r.Text = append(r.Text[:from], string(rs[:n-tail-1])+"…"+string(rs[len(rs)-tail:])...)
		return
	}
	head := runeOffset(s, n-tail-1)
	r.scratch = append(r.scratch[:0], s[runeOffset(s, count-tail):]...)
	r.Text = append(append(r.Text[:from+head], "…"...), r.scratch...)
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
// every cell of a table is plain: scanning the cells byte by byte, the
// shapes table of a 112k-node graph took 0.10 s, this way 0.07 s
// (BenchmarkScaleStages/shapes-text, one goroutine).
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

// RowsGen emits the lines of chunk k of a table: it builds each line in r
// (resetting it first) and calls emit. It may be called for different
// chunks at once (see ForChunks), each with its own r.
type RowsGen func(k int, r *Row, emit func())

// WriteRows is WriteColumns on rows, produced in chunks. gen is called
// twice per chunk, first to find the width of every column block, then to
// format the lines padded to it, so that no more than a chunk's text is
// held at a time and nothing is kept per line or cell. tabwriter keeps
// every byte and cell of the output in growing buffers until its Flush: on
// a 112k-node graph that was half of `shapes` and 40 MB of its memory;
// keeping a rune count and a width per cell instead was still 15 MB
// (BenchmarkScaleStages/shapes-text B/op).
//
// A cell holding a byte that tabwriter treats specially (tab, newline,
// vertical tab, form feed, its 0xff escape) sends the whole text through
// tabwriter, so the output never differs from it.
func WriteRows(w io.Writer, chunks int, gen RowsGen) error {
	rows := sync.Pool{New: func() any { return new(Row) }}
	run := func(k int, line func(r *Row)) {
		r := rows.Get().(*Row)
		gen(k, r, func() { line(r) })
		rows.Put(r)
	}
	parts := make([]columnBlocks, chunks)
	ForChunks(chunks, func(k int) {
		// Measured in a local and stored once: parts[k] and parts[k+1]
		// share a cache line, and add writes to it on every line.
		var p columnBlocks
		run(k, p.add)
		parts[k] = p
	})
	var cols columnBlocks
	for k := range parts {
		cols.append(&parts[k])
	}
	if cols.special {
		tw := tabwriter.NewWriter(w, 0, 4, columnPadding, ' ', 0)
		var line []byte
		for k := range chunks {
			run(k, func(r *Row) {
				line = line[:0]
				for c := range r.ends {
					if c > 0 {
						line = append(line, '\t')
					}
					line = append(line, r.Cell(c)...)
				}
				tw.Write(append(line, '\n'))
			})
		}
		return tw.Flush()
	}
	return WriteChunks(w, chunks, NodesPerChunk*tableBytesPerNode, func(k int, b []byte) []byte {
		widths := cols.replay(parts[k].first)
		run(k, func(r *Row) {
			last := len(r.ends) - 1
			for c := range r.ends {
				cell := r.Cell(c)
				b = append(b, cell...)
				if c < last {
					n, _ := cellStats(cell)
					b = AppendSpaces(b, widths.width(c)-n)
				}
			}
			b = append(b, '\n')
			widths.next()
		})
		return b
	})
}

// spaces is a run of padding appended in one piece.
const spaces = "                                                                "

// AppendSpaces appends n spaces (none if n <= 0).
func AppendSpaces(b []byte, n int) []byte {
	for n > 0 {
		k := min(n, len(spaces))
		b = append(b, spaces[:k]...)
		n -= k
	}
	return b
}

// columnPadding is the space tabwriter puts after the widest cell.
const columnPadding = 2

// columnBlocks holds tabwriter's column widths for a run of lines. Every
// cell of a line but its last is in a column; a column block is a maximal
// run of consecutive lines with a cell in that column, and each of its
// cells is padded to the block's widest cell plus padding. (tabwriter
// finds the blocks of column c+1 inside those of column c, but a line with
// a cell in column c+1 has one in column c, so the runs are the same.)
type columnBlocks struct {
	first   int             // the line number of the run's first line; set by append
	lines   int             // lines in the run
	blocks  [][]columnBlock // per column, its blocks in line order
	special bool            // whether a cell holds a byte tabwriter treats specially
}

// columnBlock is a column block: lines [start, end) and its width.
type columnBlock struct{ start, end, width int }

// add measures line r, the run's next line.
func (b *columnBlocks) add(r *Row) {
	columns := len(r.ends) - 1
	for c := range r.ends {
		n, special := cellStats(r.Cell(c))
		b.special = b.special || special
		if c < columns {
			b.widen(c, columnBlock{start: b.lines, end: b.lines + 1, width: n + columnPadding})
		}
	}
	b.lines++
}

// widen adds block x of column c, which starts at or after the line its
// last block ends: it joins that block if it starts right there.
func (b *columnBlocks) widen(c int, x columnBlock) {
	for len(b.blocks) <= c {
		b.blocks = append(b.blocks, nil)
	}
	bl := b.blocks[c]
	if k := len(bl) - 1; k >= 0 && bl[k].end == x.start {
		bl[k].end, bl[k].width = x.end, max(bl[k].width, x.width)
		return
	}
	b.blocks[c] = append(bl, x)
}

// append adds the lines measured in p after b's, and sets p.first to the
// line number of p's first line in b.
func (b *columnBlocks) append(p *columnBlocks) {
	p.first = b.lines
	for c, bl := range p.blocks {
		for _, x := range bl {
			b.widen(c, columnBlock{start: x.start + b.lines, end: x.end + b.lines, width: x.width})
		}
	}
	b.lines += p.lines
	b.special = b.special || p.special
}

// replay returns the widths of b's lines from line on, a line at a time.
func (b *columnBlocks) replay(line int) *columnWidths {
	cw := &columnWidths{blocks: b.blocks, cursor: make([]int, len(b.blocks)), line: line}
	for c, bl := range b.blocks {
		cw.cursor[c] = sort.Search(len(bl), func(k int) bool { return bl[k].end > line })
	}
	return cw
}

// columnWidths replays the widths of columnBlocks line after line.
type columnWidths struct {
	blocks [][]columnBlock
	cursor []int // per column, its block at or after the current line
	line   int
}

// width is the width of column c at the current line, which has a cell in
// column c.
func (cw *columnWidths) width(c int) int {
	bl := cw.blocks[c]
	k := cw.cursor[c]
	for bl[k].end <= cw.line {
		k++
	}
	cw.cursor[c] = k
	return bl[k].width
}

// next moves to the following line.
func (cw *columnWidths) next() { cw.line++ }
