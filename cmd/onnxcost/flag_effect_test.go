package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPricingFlagsChangeEveryOutput: each command that prices a model
// takes the pricing flags report takes, and each of them changes what it
// writes. A flag a command accepts and then ignores is a silent wrong
// answer: `roofline --time` drew the default runtime's chart whatever
// --runtime, --train or --power-cap said, and `export` overlaid the fused
// plan under every runtime, until each was caught by hand.
func TestPricingFlagsChangeEveryOutput(t *testing.T) {
	dir := t.TempDir()
	// A command's output: stdout, or the file it writes (out names it).
	type command struct {
		name string
		args []string
		out  string
	}
	file := func(name string) string { return filepath.Join(dir, name) }
	commands := []command{
		{"report", []string{"report"}, ""},
		{"compare", []string{"compare"}, ""},
		{"graph", []string{"graph", "-o", file("g.dot")}, file("g.dot")},
		{"html", []string{"html", "-o", file("p.html")}, file("p.html")},
		{"roofline", []string{"roofline", "-o", file("r.svg")}, file("r.svg")},
		{"roofline --time", []string{"roofline", "--time", "--sweep", "batch=16,32", "-o", file("t.svg")}, file("t.svg")},
		{"export", []string{"export", "--netron", file("n.json")}, file("n.json")},
		{"energy", []string{"energy"}, ""},
		{"sweep", []string{"sweep"}, ""},
		{"gpus compare", []string{"gpus", "compare"}, ""},
	}
	// Each flag changes the estimate of ResNet-18 at batch 32 on an A100
	// (the cap binds there, and a second GPU halves each one's work), and
	// --warm the small LLaMA's at batch 1: its weights stay in L2 from
	// call to call (ResNet-18's convolutions read theirs cold either way).
	// A case's shared settings are priced without the flag too.
	flags := []struct{ flag, shared []string }{
		{[]string{"--runtime", "pytorch"}, nil},
		{[]string{"--dtype", "fp16"}, nil},
		{[]string{"--power-cap", "150"}, nil},
		{[]string{"--gpus", "2"}, nil},
		{[]string{"--warm"}, []string{"zoo:llama-tiny", "--batch", "1"}},
		{[]string{"--train"}, nil},
	}
	for _, c := range commands {
		// run prices model (ResNet-18 at batch 32 unless shared names a
		// model and a batch) with extra flags.
		run := func(shared []string, extra ...string) string {
			t.Helper()
			if len(shared) == 0 {
				shared = []string{"zoo:resnet18", "--batch", "32"}
			}
			args := append(append(append(append([]string{}, c.args...), shared[0], "--gpu", "A100", "-q"), extra...), shared[1:]...)
			if slices.Contains(c.args, "--sweep") {
				// The batch is swept.
				args = append(append(append([]string{}, c.args...), shared[0], "--gpu", "A100", "-q"), extra...)
			}
			if c.out != "" {
				os.Remove(c.out)
			}
			code, stdout, errs := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("%s %v: exit %d: %s", c.name, extra, code, errs)
			}
			if c.out == "" {
				return stdout
			}
			b, err := os.ReadFile(c.out)
			if err != nil {
				t.Fatalf("%s %v: %v", c.name, extra, err)
			}
			return string(b)
		}
		for _, fc := range flags {
			f := fc.flag
			out := run(fc.shared, f...)
			if out == run(fc.shared) {
				t.Errorf("%s %s: the same output as without it", c.name, strings.Join(f, " "))
			}
			// A text output names the power setting and a warm call in its
			// first line, as it names the runtime (energy's --power-cap is
			// its list of caps, each a row).
			first, _, _ := strings.Cut(out, "\n")
			if f[0] == "--power-cap" && c.out == "" && c.name != "energy" && !strings.Contains(first, "power cap 150 W") {
				t.Errorf("%s --power-cap 150: first line %q does not name the cap", c.name, first)
			}
			if f[0] == "--warm" && c.out == "" && !strings.Contains(first, "repeated calls (warm L2)") {
				t.Errorf("%s --warm: first line %q does not name the warm call", c.name, first)
			}
		}
	}
	// generate, on a decoder (its --power-cap binds at a larger model's
	// prompt: generate's own test).
	gen := func(extra ...string) string {
		t.Helper()
		code, out, errs := runCLI(t, append([]string{"generate", "zoo:llama-tiny", "--gpu", "A100", "--prompt", "64", "--output", "16", "-q"}, extra...)...)
		if code != 0 {
			t.Fatalf("generate %v: exit %d: %s", extra, code, errs)
		}
		return out
	}
	base := gen()
	for _, f := range [][]string{{"--runtime", "pytorch"}, {"--dtype", "fp16"}, {"--gpus", "2"}, {"--batch", "8"}, {"--sm-clock", "500"}} {
		if gen(f...) == base {
			t.Errorf("generate %s: the same output as without it", strings.Join(f, " "))
		}
	}
}
