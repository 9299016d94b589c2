package viz

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// DefaultRenderTimeout bounds one run of Graphviz: a layout that takes
// longer is not going to be read, and a hung `dot` must not hang CI.
const DefaultRenderTimeout = 60 * time.Second

// ErrNoDot means Graphviz's `dot` is not on PATH.
var ErrNoDot = errors.New("graphviz 'dot' not found on PATH")

// Formats are the output formats Render accepts.
var Formats = []string{"svg", "png", "pdf"}

// LookDot returns the path of the system `dot`, or ErrNoDot.
func LookDot() (string, error) {
	p, err := exec.LookPath("dot")
	if err != nil {
		return "", ErrNoDot
	}
	return p, nil
}

// Render lays out DOT text with the system `dot` and returns the image in
// format (svg, png or pdf). A timeout of 0 means DefaultRenderTimeout.
// The DOT goes in on stdin, so model strings never reach a command line.
func Render(ctx context.Context, dotSrc, format string, timeout time.Duration) ([]byte, error) {
	ok := false
	for _, f := range Formats {
		ok = ok || f == format
	}
	if !ok {
		return nil, fmt.Errorf("render: format %q: want svg, png or pdf", format)
	}
	bin, err := LookDot()
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = DefaultRenderTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-T"+format)
	cmd.Stdin = strings.NewReader(dotSrc)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err = cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("render: dot did not finish in %v (try --top N or --collapse DEPTH)", timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("render: dot -T%s: %v: %s", format, err, firstLine(stderr.String()))
	}
	return out.Bytes(), nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
