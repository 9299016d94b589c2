package render

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
	"text/tabwriter"
	"unicode/utf8"
)

// TestColumnsMatchTabwriter: the column writer must give tabwriter's bytes
// for any mix of line shapes (cells per line vary, as input, node and
// output lines of `shapes` do, and as nested subgraph lines do), with
// multi-byte runes and special bytes (which go through tabwriter itself).
func TestColumnsMatchTabwriter(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"", "a", "bb", "relu_1", "héllo", "→x", "with\ttab", "x\xffy", "some longer cell text", "bad\x80\xc3", "\ufffd…"}
	for trial := 0; trial < 500; trial++ {
		var lines [][]string
		var want bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
		for l := rng.Intn(12); l >= 0; l-- {
			cells := make([]string, rng.Intn(6)) // no cells: an empty line
			for k := range cells {
				cells[k] = words[rng.Intn(len(words))]
				if trial%2 == 0 && (strings.Contains(cells[k], "\t") || strings.Contains(cells[k], "\xff")) {
					cells[k] = "plain"
				}
			}
			lines = append(lines, cells)
			tw.Write([]byte(strings.Join(cells, "\t") + "\n"))
		}
		tw.Flush()
		var got bytes.Buffer
		err := WriteColumns(&got, func(add func(cells ...string)) {
			for _, l := range lines {
				add(l...)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("trial %d:\ngot\n%q\nwant\n%q", trial, got.String(), want.String())
		}
	}
}

// TestRowCut: cutting a cell in place gives what cutting its string by
// runes gives (head, ellipsis, a third of the width as tail), for ASCII
// and multi-byte text around the limit.
func TestRowCut(t *testing.T) {
	ref := func(s string, n int) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		tail := n / 3
		return string(r[:n-tail-1]) + "…" + string(r[len(r)-tail:])
	}
	for _, s := range []string{"", "abc", "abcdefghij", "héllo→wörld_of_tensors", "ééééééééééé", "a→b→c→d→e→f→g", "x\xffyzzzzzzzzzz"} {
		for n := 1; n <= 12; n++ {
			var r Row
			r.Text = append(r.Text, "pre:"...)
			r.Text = append(r.Text, s...)
			r.Cut(4, n)
			r.Text = append(r.Text, ":post"...)
			if got, want := string(r.Text), "pre:"+ref(s, n)+":post"; got != want {
				t.Errorf("cut(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

// TestCellStats: the one-pass count is utf8.RuneCount (an invalid byte is
// one rune) and the special bytes are those tabwriter.Write acts on, on
// random bytes mixing ASCII, multi-byte runes, their fragments and invalid
// bytes.
func TestCellStats(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	pieces := []string{"a", "Z", " ", "\t", "\n", "\v", "\f", "\r", "é", "…", "→", "😀", "\xff", "\xe2\x80", "\x80", "\xc3", "\xf0\x9f"}
	for trial := 0; trial < 2000; trial++ {
		var c []byte
		for k := rng.Intn(8); k > 0; k-- {
			c = append(c, pieces[rng.Intn(len(pieces))]...)
		}
		runes, special := cellStats(c)
		if want := utf8.RuneCount(c); runes != want {
			t.Errorf("cellStats(%q) runes = %d, want %d", c, runes, want)
		}
		want := false
		for _, b := range c {
			want = want || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == tabwriter.Escape
		}
		if special != want {
			t.Errorf("cellStats(%q) special = %v, want %v", c, special, want)
		}
	}
}

// TestPlainPrefix: the word-at-a-time scan stops where a byte-by-byte one
// does, for every position and kind of stopping byte in strings longer
// than a word.
func TestPlainPrefix(t *testing.T) {
	ref := func(s []byte) int {
		for i, b := range s {
			if b < 0x20 || b >= utf8.RuneSelf {
				return i
			}
		}
		return len(s)
	}
	base := []byte("abcdefghijklmnopqrstuvwxyz_0123456789 ~!")
	for n := 0; n <= len(base); n++ {
		for at := 0; at <= n; at++ {
			for _, stop := range []byte{0x00, '\t', 0x1f, 0x7f, 0x80, 0xc3, 0xff} {
				s := append([]byte(nil), base[:n]...)
				if at < n {
					s[at] = stop
				}
				if got, want := plainPrefix(s), ref(s); got != want {
					t.Fatalf("plainPrefix(%q) = %d, want %d", s, got, want)
				}
			}
		}
	}
}

// tabwriterRows is the reference for WriteRows: every chunk's lines, in
// order, through tabwriter itself.
func tabwriterRows(chunks int, gen RowsGen) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, columnPadding, ' ', 0)
	var r Row
	for k := 0; k < chunks; k++ {
		gen(k, &r, func() {
			var cells []string
			for c := range r.ends {
				cells = append(cells, string(r.Cell(c)))
			}
			tw.Write([]byte(strings.Join(cells, "\t") + "\n"))
		})
	}
	tw.Flush()
	return b.String()
}

// TestColumnsChunked: lines split into chunks anywhere (empty chunks, a
// column block running over several chunks) are laid out as tabwriter
// lays out all of them at once, whether chunks are measured and formatted
// on one goroutine or several.
func TestColumnsChunked(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	words := []string{"", "a", "bb", "relu_1", "héllo", "→x", "some longer cell text", "x\xffy"}
	for trial := 0; trial < 300; trial++ {
		chunks := make([][][]string, 1+rng.Intn(8))
		for k := range chunks {
			for l := rng.Intn(5); l > 0; l-- {
				cells := make([]string, rng.Intn(5))
				for c := range cells {
					cells[c] = words[rng.Intn(len(words)-trial%2)] // odd trials: no escape byte
				}
				chunks[k] = append(chunks[k], cells)
			}
		}
		gen := func(k int, r *Row, emit func()) {
			for _, cells := range chunks[k] {
				r.Reset()
				for _, c := range cells {
					r.Text = append(r.Text, c...)
					r.EndCell()
				}
				emit()
			}
		}
		var got bytes.Buffer
		if err := WriteRows(&got, len(chunks), gen); err != nil {
			t.Fatal(err)
		}
		if want := tabwriterRows(len(chunks), gen); got.String() != want {
			t.Fatalf("trial %d, chunks %q:\ngot\n%q\nwant\n%q", trial, chunks, got.String(), want)
		}
	}
}
