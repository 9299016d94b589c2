// Package console is what the command line knows about its stderr:
// whether progress may be drawn there, whether color is allowed, which
// diagnostics --quiet drops, and how an error fits on one line.
package console

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Console is what the process knows about its stderr: whether it is an
// interactive terminal (progress may be drawn), whether color is allowed,
// and whether --quiet asked for errors only.
type Console struct {
	raw   io.Writer // the real stderr: errors always go here
	Quiet bool
	tty   bool // raw is a character device, and not in CI
	color bool // tty and NO_COLOR unset and TERM not dumb
	// Diag is the stderr given to commands (see DiagWriter).
	Diag *DiagWriter
}

// New inspects stderr and the environment. Progress is for people
// at a terminal: a pipe, a file or a CI log (CI set, as every CI service
// does) gets none. Color follows https://no-color.org: any non-empty
// NO_COLOR turns it off.
func New(stderr io.Writer) *Console {
	term := false
	if f, ok := stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			term = true
		}
	}
	return consoleFor(stderr, term, os.Getenv)
}

// consoleFor decides from whether stderr is a terminal and the
// environment (a parameter, so tests can vary both).
func consoleFor(stderr io.Writer, term bool, getenv func(string) string) *Console {
	c := &Console{raw: stderr}
	c.tty = term && getenv("CI") == "" && getenv("TERM") != "dumb"
	c.color = c.tty && getenv("NO_COLOR") == ""
	c.Diag = &DiagWriter{c: c}
	return c
}

// DiagWriter is the stderr commands write diagnostics to. Under --quiet
// it drops the lines that are diagnostics ("onnxcost: warning: …",
// "onnxcost: note: …" and other "onnxcost: " lines); lines a user asked
// for (--dump-after dumps) pass. On a color terminal it colors the word
// "warning". Errors bypass it: the command line prints them on the raw
// stderr.
type DiagWriter struct {
	c   *Console
	buf []byte
}

func (d *DiagWriter) Write(p []byte) (int, error) {
	d.buf = append(d.buf, p...)
	for {
		i := bytes.IndexByte(d.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(d.buf[:i+1])
		d.buf = d.buf[i+1:]
		if err := d.emit(line); err != nil {
			return len(p), err
		}
	}
}

// Flush writes a last line that had no newline.
func (d *DiagWriter) Flush() error {
	if len(d.buf) == 0 {
		return nil
	}
	line := string(d.buf)
	d.buf = nil
	return d.emit(line)
}

func (d *DiagWriter) emit(line string) error {
	if d.c.Quiet && strings.HasPrefix(line, "onnxcost: ") {
		return nil
	}
	// A warning may quote model strings too: bound it as errors are.
	// Other lines (a --dump-after dump) are output the user asked for.
	if strings.HasPrefix(line, "onnxcost: ") && len(line) > MaxLine+len("onnxcost: \n") {
		line = Cut(strings.TrimSuffix(line, "\n"), MaxLine+len("onnxcost: ")) + "\n"
	}
	if d.c.color && strings.HasPrefix(line, "onnxcost: warning: ") {
		line = "onnxcost: \x1b[33mwarning\x1b[0m: " + strings.TrimPrefix(line, "onnxcost: warning: ")
	}
	return writeAboveProgress(d.c.raw, line)
}

// Progress draws one status line on a terminal's stderr while long work
// runs: a phase name, a bar when the amount of work is known, and the
// elapsed time. It appears only after progressDelay, so quick runs print
// nothing, and it erases itself when done. Everywhere else it is a no-op.
type Progress struct {
	mu    sync.Mutex
	c     *Console
	label string
	phase string
	total int
	done  int
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
}

// progressDelay is how long work runs before progress shows.
const progressDelay = 400 * time.Millisecond

// active is the progress line on screen (at most one), so that a
// diagnostic printed meanwhile can erase it first.
var active struct {
	sync.Mutex
	p *Progress
}

// Start starts a progress line; total 0 means unknown (a phase line
// without a bar). Stop must be called.
func (c *Console) Start(label string, total int) *Progress {
	p := &Progress{c: c, label: label, total: total, start: time.Now()}
	if !c.tty || c.Quiet {
		return p
	}
	active.Lock()
	if active.p != nil {
		// One line at a time: work nested in a shown line (a model of
		// `check`) reports through the outer one.
		active.Unlock()
		return p
	}
	p.stop = make(chan struct{})
	active.p = p
	active.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				if time.Since(p.start) >= progressDelay {
					p.draw()
				}
			}
		}
	}()
	return p
}

// Phase names the step now running.
func (p *Progress) Phase(s string) {
	p.mu.Lock()
	p.phase = s
	p.mu.Unlock()
}

// Add counts n units of the total as done.
func (p *Progress) Add(n int) {
	p.mu.Lock()
	p.done += n
	p.mu.Unlock()
}

// Stop ends the progress line and erases it.
func (p *Progress) Stop() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	p.stop = nil
	active.Lock()
	if active.p == p {
		active.p = nil
	}
	active.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.c.raw, "\r\x1b[K")
}

func (p *Progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.c.raw, "\r\x1b[K"+p.line())
}

// line is the status text: "onnxcost: model.onnx: estimating [#####.....] 12/40 3.2s".
func (p *Progress) line() string {
	var b strings.Builder
	b.WriteString("onnxcost: " + p.label)
	if p.phase != "" {
		b.WriteString(": " + p.phase)
	}
	if p.total > 0 {
		const width = 24
		filled := min(width, width*p.done/p.total)
		bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
		if p.c.color {
			bar = "\x1b[36m" + strings.Repeat("#", filled) + "\x1b[0m" + strings.Repeat(".", width-filled)
		}
		fmt.Fprintf(&b, " [%s] %d/%d", bar, p.done, p.total)
	}
	fmt.Fprintf(&b, " %.1fs", time.Since(p.start).Seconds())
	return b.String()
}

// writeAboveProgress writes a diagnostic line, first erasing the progress
// line if one is shown (the next tick redraws it below), under the
// progress line's lock so the two never interleave.
func writeAboveProgress(w io.Writer, line string) error {
	active.Lock()
	p := active.p
	active.Unlock()
	if p == nil {
		_, err := io.WriteString(w, line)
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := io.WriteString(w, "\r\x1b[K"+line)
	return err
}

// MaxLine bounds what OneLine returns, in bytes. An error may quote
// strings from the model (node names, op types, paths inside it), and a
// hostile file can make one 100 kB long; a terminal or CI log should get a
// line it can show, not the model. With the "onnxcost: " prefix the
// printed line stays under 1,000 bytes.
const MaxLine = 980

// OneLine keeps an error to one line, as the contract promises: its
// lines, trimmed and without blanks, joined by "; ". Cobra's unknown-
// command suggestion ("\n\nDid you mean this?\n\treport\n") becomes
// "did you mean report?". A line longer than MaxLine loses its middle
// (see Cut).
func OneLine(s string) string {
	return Cut(oneLine(s), MaxLine)
}

// Cut returns s when it fits in limit bytes, and otherwise its start
// and end joined by " … " (limit bytes at most, for a limit of 5 or
// more), cut at UTF-8 boundaries. Both ends are kept because an error
// names the file at its start and often says what to do at its end.
func Cut(s string, limit int) string {
	const mark = " … "
	if len(s) <= limit {
		return s
	}
	keep := max(limit-len(mark), 0)
	head, tail := keep*3/4, keep-keep*3/4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	from := len(s) - tail
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return s[:head] + mark + s[from:]
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", "\n")
	var parts, suggestions []string
	suggesting := false
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case line == "Did you mean this?":
			suggesting = true
		case suggesting:
			suggestions = append(suggestions, line)
		default:
			parts = append(parts, line)
		}
	}
	if len(suggestions) > 0 {
		parts = append(parts, "did you mean "+strings.Join(suggestions, " or ")+"?")
	}
	return strings.Join(parts, "; ")
}
