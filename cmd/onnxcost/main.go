// Command onnxcost estimates what an ONNX model costs on a GPU — MACs,
// FLOPs, bytes moved, kernel launches and time under a time-based roofline —
// from the .onnx file alone, before and after fusion.
package main

import (
	"errors"
	"fmt"
	"github.com/onnxcost/onnxcost/internal/buildinfo"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/onnxcost/onnxcost/internal/completion"
	"github.com/onnxcost/onnxcost/internal/console"
	"github.com/onnxcost/onnxcost/internal/gctune"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/spf13/cobra"
)

// version is the tool version; release builds set it with -ldflags.
var version = "0.1.0-dev"

// con is the process's stderr. newRootCmd sets it up once per run;
// commands reach it through this variable because the estimate helpers
// they share take no command.
var con = console.New(io.Discard)

func main() {
	gctune.Tune()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitError carries the process exit code with the message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr is a bad invocation or unreadable input: exit 2.
func usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// failErr is a budget or --fail-on check that failed: exit 1.
func failErr(format string, args ...any) error {
	return &exitError{code: 1, err: fmt.Errorf(format, args...)}
}

// printWarnings writes each warning to stderr on its own line; the data
// stays on stdout.
func printWarnings(stderr io.Writer, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(stderr, "onnxcost: warning: %s\n", w)
	}
}

// run is main without the process: testable, it returns the exit code.
// Any panic is turned into an internal-error message and exit code 3, so
// no input ever prints a Go trace; tests treat code 3 as a bug.
func run(args []string, stdout, stderr io.Writer) (code int) {
	// A model file truncated while its mapping is still in use (names
	// point into it) faults here; reported as bad input, not SIGBUS.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if path, ok := ir.FaultedFile(r); ok {
				fmt.Fprintf(stderr, "onnxcost: %s: %v\n", path, ir.ErrFileChanged)
				code = 2
				return
			}
			fmt.Fprintf(stderr, "onnxcost: internal error (please report): %v\n", r)
			code = 3
		}
	}()
	root := newRootCmd(stdout, stderr, args...)
	root.SetArgs(args)
	err := root.Execute()
	_ = con.Diag.Flush()
	if err == nil {
		return 0
	}
	msg := strings.TrimSpace(err.Error())
	if msg != "" {
		fmt.Fprintf(stderr, "onnxcost: %s\n", console.OneLine(msg))
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 2 // cobra's own errors are usage errors
}

// newRootCmd builds the command tree. Given the arguments it will run,
// it builds only the subcommand they name, when they name one: building
// all of them (their flags, defaults, help) took 1.2 ms of a 36 ms
// DenseNet-121 report. Help, completion and a mistyped name get all.
func newRootCmd(stdout, stderr io.Writer, args ...string) *cobra.Command {
	root := &cobra.Command{
		Use: "onnxcost", Example: "  onnxcost report zoo:resnet50 --gpu T4\n  onnxcost compare testdata/models/resnet50.onnx --gpu T4\n  onnxcost gpus",
		Short: "Estimate what an ONNX model costs on a GPU, before and after fusion",
		Long: `onnxcost reads an ONNX model, infers every tensor's shape, applies fusion
passes and estimates per node, on a chosen GPU: MACs, FLOPs, bytes moved,
kernel launches and time under a time-based roofline.`,
		Version:       versionText(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	con = console.New(stderr)
	root.PersistentFlags().BoolVarP(&con.Quiet, "quiet", "q", false, "print errors only: no warnings, notes or progress")
	diag := con.Diag
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%s: %s (see '%s --help')", c.Name(), plainFlagError(err), c.CommandPath())
	})
	only := namedSubcommand(args)
	for _, s := range subcommands {
		if only == "" || s.name == only {
			root.AddCommand(s.build(stdout, diag))
		}
	}
	completion.Register(root)
	return root
}

// subcommand is a command of the root: its name, and how to build it.
type subcommand struct {
	name  string
	build func(stdout, stderr io.Writer) *cobra.Command
}

// subcommands are registered by the files that define them, so adding a
// command touches one file.
var subcommands []subcommand

// register adds the subcommand build makes, whose Name() is name (a test
// holds them to each other).
func register(name string, build func(stdout, stderr io.Writer) *cobra.Command) {
	subcommands = append(subcommands, subcommand{name, build})
}

// namedSubcommand is the registered subcommand args run, or "" when they
// run none (the root's flags before it take no values).
func namedSubcommand(args []string) string {
	for _, a := range args {
		if a == "--" {
			return ""
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		for _, s := range subcommands {
			if s.name == a {
				return a
			}
		}
		return ""
	}
	return ""
}

// versionText is --version's text after "onnxcost version ": the tool
// version, then what the Go toolchain stamped into the binary (the
// module's version and the VCS revision it was built from), so that a
// dev build still says which commit it is.
func versionText() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	return version + buildinfo.Suffix(info)
}

// strconvFailure matches the strconv error pflag appends to a flag value
// it could not parse ("strconv.ParseInt: parsing "1,8": invalid syntax").
var strconvFailure = regexp.MustCompile(`strconv\.Parse(Int|Uint|Float|Bool): parsing "(?:[^"\\]|\\.)*": (invalid syntax|value out of range)$`)

// plainFlagError is a flag parsing error in the user's words: pflag's
// `invalid argument "1,8" for "--batch" flag: strconv.ParseInt: parsing
// "1,8": invalid syntax` ends "…flag: not an integer" instead.
func plainFlagError(err error) string {
	msg := err.Error()
	m := strconvFailure.FindStringSubmatchIndex(msg)
	if m == nil {
		return msg
	}
	kind, why := msg[m[2]:m[3]], msg[m[4]:m[5]]
	var plain string
	switch {
	case why == "value out of range":
		plain = "out of range"
	case kind == "Float":
		plain = "not a number"
	case kind == "Bool":
		plain = "not true or false"
	default:
		plain = "not an integer"
	}
	return msg[:m[0]] + plain
}
