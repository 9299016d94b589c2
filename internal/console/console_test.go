package console

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestConsoleDecisions: progress and color only on a terminal, never in
// CI or on a dumb terminal; NO_COLOR keeps progress but drops color.
func TestConsoleDecisions(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		name        string
		term        bool
		env         func(string) string
		tty, colour bool
	}{
		{"pipe", false, env(), false, false},
		{"terminal", true, env("TERM", "xterm"), true, true},
		{"NO_COLOR", true, env("NO_COLOR", "1"), true, false},
		{"CI", true, env("CI", "true"), false, false},
		{"dumb", true, env("TERM", "dumb"), false, false},
	} {
		k := consoleFor(&bytes.Buffer{}, c.term, c.env)
		if k.tty != c.tty || k.color != c.colour {
			t.Errorf("%s: tty %v color %v, want %v %v", c.name, k.tty, k.color, c.tty, c.colour)
		}
	}
	// A regular file is not a terminal.
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if k := New(f); k.tty || k.color {
		t.Error("a file counts as a terminal")
	}
}

// TestProgressOnTerminal draws a progress line on a (simulated) color
// terminal, erases it at the end, and colors warnings; with NO_COLOR the
// same output has no color codes; off a terminal nothing is drawn.
func TestProgressOnTerminal(t *testing.T) {
	for _, noColor := range []string{"", "1"} {
		var buf bytes.Buffer
		con := consoleFor(&buf, true, func(k string) string {
			if k == "NO_COLOR" {
				return noColor
			}
			return ""
		})
		p := con.Start("check", 4)
		p.Phase("resnet50")
		p.Add(2)
		time.Sleep(progressDelay + 250*time.Millisecond)
		con.Diag.Write([]byte("onnxcost: warning: something\n"))
		p.Stop()
		out := buf.String()
		if !strings.Contains(out, "onnxcost: check: resnet50 [") || !strings.Contains(out, "] 2/4 ") {
			t.Errorf("NO_COLOR=%q: no progress line in %q", noColor, out)
		}
		if !strings.HasSuffix(out, "\r\x1b[K") {
			t.Errorf("NO_COLOR=%q: progress not erased at the end: %q", noColor, out)
		}
		colored := strings.Contains(out, "\x1b[33m") || strings.Contains(out, "\x1b[36m")
		if colored != (noColor == "") {
			t.Errorf("NO_COLOR=%q: color codes present %v: %q", noColor, colored, out)
		}
	}
	var buf bytes.Buffer
	con := consoleFor(&buf, false, func(string) string { return "" })
	p := con.Start("x", 0)
	time.Sleep(progressDelay + 150*time.Millisecond)
	p.Stop()
	con.Diag.Write([]byte("onnxcost: warning: w\n"))
	if buf.String() != "onnxcost: warning: w\n" {
		t.Errorf("off a terminal: %q", buf.String())
	}
}

// TestLinesBounded: an error line and a diagnostic line quoting a 100 kB
// model string come out under 1,000 bytes, both ends kept, valid UTF-8;
// a --dump-after dump (no "onnxcost: " prefix) passes whole.
func TestLinesBounded(t *testing.T) {
	long := "m.onnx: node \"" + strings.Repeat("ü", 50_000) + "\": bad (re-export it)"
	got := OneLine(long)
	if len(got)+len("onnxcost: \n") > 1000 || !strings.HasPrefix(got, "m.onnx: node") ||
		!strings.HasSuffix(got, "(re-export it)") || !strings.Contains(got, " … ") || !utf8.ValidString(got) {
		t.Errorf("OneLine: %d bytes: %.100q", len(got), got)
	}
	for _, n := range []int{0, 5, 6, 7, 100} {
		if c := Cut(long, n); len(c) > max(n, len(" … ")) || !utf8.ValidString(c) {
			t.Errorf("Cut(%d): %d bytes %q", n, len(c), c)
		}
	}
	var buf bytes.Buffer
	c := consoleFor(&buf, false, func(string) string { return "" })
	dump := strings.Repeat("d", 5000) + "\n"
	if _, err := io.WriteString(c.Diag, "onnxcost: warning: "+long+"\n"+dump); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	if len(lines) != 3 || len(lines[0]) > 1000 || !strings.HasSuffix(lines[0], "(re-export it)\n") || lines[1] != dump {
		t.Errorf("diagnostics: %d lines, first %d bytes", len(lines)-1, len(lines[0]))
	}
}
