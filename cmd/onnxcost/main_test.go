package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the module root, from this package's folder.
const repoRoot = "../.."

// fixture returns the path of a committed model fixture.
func fixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "models", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("fixture %s missing: %v", name, err)
	}
	return p
}

// runCLI runs the command in-process and returns exit code, stdout, stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	if code == 3 {
		t.Fatalf("onnxcost %s: internal error (a panic): %s", strings.Join(args, " "), errb.String())
	}
	return code, out.String(), errb.String()
}

// runJSON runs the command, which must succeed, decodes its stdout (JSON)
// into v, and returns that stdout for a second reading.
func runJSON(t *testing.T, v any, args ...string) string {
	t.Helper()
	code, out, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("onnxcost %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("onnxcost %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRegisteredNames: each subcommand is registered under the name its
// command has, without aliases, since a run builds only the one its
// arguments name; and a run builds that one alone.
func TestRegisteredNames(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range subcommands {
		c := s.build(io.Discard, io.Discard)
		if c.Name() != s.name || len(c.Aliases) > 0 || seen[s.name] {
			t.Errorf("registered as %q: builds %q with aliases %q (registered before: %v)", s.name, c.Name(), c.Aliases, seen[s.name])
		}
		seen[s.name] = true
	}
	for args, want := range map[string]int{"-q report m.onnx": 1, "report --help": 1, "help report": len(subcommands), "": len(subcommands), "-- report": len(subcommands), "reprot": len(subcommands), "--version": len(subcommands)} {
		if got := len(newRootCmd(io.Discard, io.Discard, strings.Fields(args)...).Commands()); got != want {
			t.Errorf("%q builds %d subcommands, want %d", args, got, want)
		}
	}
}

// TestFlagValueErrors: a flag value that does not parse is named in the
// user's words on one line, exit 2, nothing on stdout; Go's strconv
// wording ("strconv.ParseInt: parsing …: invalid syntax") is not shown.
func TestFlagValueErrors(t *testing.T) {
	for _, c := range []struct{ flag, value, want string }{
		{"--batch", "1,8", "not an integer"},
		{"--batch", "99999999999999999999", "out of range"},
		{"--power-cap", "abc", "not a number"},
		{"--warm=maybe", "", "not true or false"},
	} {
		args := []string{"report", "zoo:resnet18", "--gpu", "T4", c.flag}
		if c.value != "" {
			args = append(args, c.value)
		}
		code, out, errs := runCLI(t, args...)
		line := strings.TrimSpace(errs)
		if code != 2 || out != "" || strings.Contains(line, "\n") || strings.Contains(line, "strconv") ||
			!strings.Contains(line, "flag: "+c.want+" (see 'onnxcost report --help')") {
			t.Errorf("%s %s: exit %d, stdout %q, stderr %q", c.flag, c.value, code, out, errs)
		}
	}
}

// TestGPUListWhereOneIsPriced: a command that prices one GPU, given a
// list or all, says which commands take a list; sweep refuses all inside
// a list. One line, exit 2, nothing on stdout.
func TestGPUListWhereOneIsPriced(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "zoo:resnet18", "--gpu", "T4,A10"}, `"T4,A10" names several GPUs, and this command prices one; 'onnxcost gpus compare' and 'onnxcost sweep' take a list`},
		{[]string{"energy", "zoo:resnet18", "--gpu", "all"}, `"all" names several GPUs`},
		{[]string{"sweep", "zoo:resnet18", "--gpu", "all,T4", "--batch", "1"}, `all stands alone, not in a list ("all,T4")`},
	} {
		code, out, errs := runCLI(t, c.args...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, errs)
		}
	}
}
