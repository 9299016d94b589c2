package main

import (
	"fmt"
	"io"
	"os"
)

// progress shows "label k/n" on one rewritten line of a terminal, and
// nothing at all when the writer is a pipe, a file or a CI log, so that
// captured stderr holds only diagnostics.
type progress struct {
	w     io.Writer
	label string
	n     int
	shown bool
}

// newProgress returns a progress line on w if w is a terminal, else a
// progress that prints nothing.
func newProgress(w io.Writer, label string, n int) *progress {
	p := &progress{label: label, n: n}
	if isTerminal(w) {
		p.w = w
	}
	return p
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// step shows that k of n are done.
func (p *progress) step(k int) {
	if p == nil || p.w == nil {
		return
	}
	fmt.Fprintf(p.w, "\r%s %d/%d", p.label, k, p.n)
	p.shown = true
}

// done clears the line.
func (p *progress) done() {
	if p == nil || p.w == nil || !p.shown {
		return
	}
	fmt.Fprint(p.w, "\r\033[K")
}
