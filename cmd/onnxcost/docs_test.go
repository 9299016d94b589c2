package main

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Every `onnxcost ...` line of a fenced shell block (```sh, ```shell,
// ```bash, ```console) in README.md and docs/*.md is a command this file
// runs through the CLI in-process, so the pages never show a flag that no
// longer exists or a number the tool no longer prints. Conventions the
// pages follow:
//
//   - `onnxcost ARGS` or `go run ./cmd/onnxcost ARGS`, optionally after
//     "$ ", continued with a trailing backslash; a trailing `# comment`
//     is prose, and `> FILE` at the end writes stdout to FILE.
//   - `#> TEXT` lines right after a command are output it must print:
//     TEXT must appear in its stdout, whitespace runs compared as one
//     space. Numbers shown anywhere else come with the command that
//     prints them, so this is where they are checked.
//   - `mkdir -p DIR` lines are carried out; other lines (go test, scripts)
//     are not onnxcost commands and are left alone.
//
// Each page runs in its own temporary folder, in page order, so a page may
// write a file and read it back (budget init, then check). The folder has
// testdata/ (the repository's fixtures), calib/ (its measured profiles),
// docs/figures/models/ and a copy of
// the ResNet-50 fixture at models/resnet50.onnx, where the CI pages keep a
// model; docs/figures/ itself is a fresh folder, so the commands that draw
// the committed figures do not overwrite them.

// untestable names the subcommands no test can run to completion, and why.
// Keep it to commands that never return.
var untestable = map[string]string{
	"serve": "serves until stopped; its page is tested by serve_test.go and serve_browser_test.go",
}

// docCommand is one command line of a page.
type docCommand struct {
	file    string // relative to the repository root
	line    int
	section string   // the "## " heading it sits under
	args    []string // after the program name
	stdout  string   // "> FILE", relative to the page's folder; "" for none
	want    []string // "#> " lines
}

func (c docCommand) String() string {
	return fmt.Sprintf("%s:%d: onnxcost %s", c.file, c.line, strings.Join(c.args, " "))
}

var (
	docCmdLine  = regexp.MustCompile(`^(?:\$\s+)?(?:go run \./cmd/onnxcost|onnxcost)\s+(.*)$`)
	docMkdir    = regexp.MustCompile(`^(?:\$\s+)?mkdir -p (\S+)`)
	docShellTag = map[string]bool{"sh": true, "shell": true, "bash": true, "console": true}
)

// docPages lists README.md and docs/*.md, relative to the repository root.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range pages {
		rel, _ := filepath.Rel(repoRoot, p)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// docStep is a command or a mkdir, in page order.
type docStep struct {
	cmd   *docCommand
	mkdir string
}

// parseDocPage returns the page's steps.
func parseDocPage(t *testing.T, page string) []docStep {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, page))
	if err != nil {
		t.Fatal(err)
	}
	var steps []docStep
	var last *docCommand
	inShell, inFence, section := false, false, ""
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trim := strings.TrimSpace(l)
		if strings.HasPrefix(trim, "```") {
			if inFence {
				inFence, inShell, last = false, false, nil
			} else {
				inFence = true
				inShell = docShellTag[strings.TrimSpace(strings.TrimPrefix(trim, "```"))]
			}
			continue
		}
		if !inFence {
			if strings.HasPrefix(l, "## ") {
				section = strings.TrimPrefix(l, "## ")
			}
			continue
		}
		if !inShell {
			continue
		}
		if want, ok := strings.CutPrefix(trim, "#>"); ok {
			if last == nil {
				t.Errorf("%s:%d: a #> line follows no command", page, i+1)
				continue
			}
			last.want = append(last.want, strings.TrimSpace(want))
			continue
		}
		if m := docMkdir.FindStringSubmatch(trim); m != nil {
			steps = append(steps, docStep{mkdir: m[1]})
			last = nil
			continue
		}
		m := docCmdLine.FindStringSubmatch(trim)
		if m == nil {
			if trim != "" && !strings.HasPrefix(trim, "#") {
				last = nil
			}
			continue
		}
		start := i
		text := m[1]
		for strings.HasSuffix(text, `\`) && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(lines[i])
		}
		words := shellWords(t, text)
		c := &docCommand{file: page, line: start + 1, section: section}
		if n := len(words); n >= 2 && words[n-2] == ">" {
			c.stdout, words = words[n-1], words[:n-2]
		}
		c.args = words
		if len(c.args) == 0 {
			t.Errorf("%s:%d: empty onnxcost command", page, start+1)
			continue
		}
		steps = append(steps, docStep{cmd: c})
		last = c
	}
	return steps
}

// docCommands returns every command of every page.
func docCommands(t *testing.T) []docCommand {
	var out []docCommand
	for _, p := range docPages(t) {
		for _, s := range parseDocPage(t, p) {
			if s.cmd != nil {
				out = append(out, *s.cmd)
			}
		}
	}
	return out
}

// shellWords splits a command line the way a POSIX shell would for the
// quoting the pages use (single and double quotes, no expansions); an
// unquoted # after a space starts a comment.
func shellWords(t *testing.T, s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				t.Fatalf("unbalanced quote in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '#' && !inWord:
			i = len(s)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// docWorkdir makes a page's folder (see the comment at the top) and
// changes into it.
func docWorkdir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	// The measured profiles the calibrate examples read.
	if err := os.Symlink(filepath.Join(root, "calib"), filepath.Join(dir, "calib")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "docs", "figures"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "docs", "figures", "models"), filepath.Join(dir, "docs", "figures", "models")); err != nil {
		t.Fatal(err)
	}
	copyFile(t, fixture(t, "resnet50.onnx"), filepath.Join(dir, "models", "resnet50.onnx"))
	t.Chdir(dir)
	// The pages' commands name their GPU, and a check run under a CI
	// runner must not write to that runner's job summary.
	for _, k := range []string{"ONNXCOST_GPU", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"} {
		t.Setenv(k, "")
	}
	return dir
}

var docSpaces = regexp.MustCompile(`\s+`)

// runDocCommand runs one command in the current folder and checks its
// exit code and shown output.
func runDocCommand(t *testing.T, c docCommand) {
	t.Helper()
	code, out, errs := runCLI(t, c.args...)
	if code != 0 {
		t.Errorf("%s: exit %d: %s", c, code, errs)
		return
	}
	if c.stdout != "" {
		if err := os.WriteFile(c.stdout, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flat := docSpaces.ReplaceAllString(out, " ")
	for _, w := range c.want {
		if !strings.Contains(flat, docSpaces.ReplaceAllString(w, " ")) {
			t.Errorf("%s: the page shows %q, the command prints:\n%s", c, w, out)
		}
	}
}

// TestDocsCommands runs every command of every page.
func TestDocsCommands(t *testing.T) {
	pages := docPages(t)
	if !slices.Contains(pages, "docs/commands.md") {
		t.Fatalf("docs/commands.md is missing; pages: %v", pages)
	}
	total := 0
	for _, page := range pages {
		t.Run(strings.TrimSuffix(filepath.Base(page), ".md"), func(t *testing.T) {
			steps := parseDocPage(t, page)
			docWorkdir(t)
			for _, s := range steps {
				if s.mkdir != "" {
					if err := os.MkdirAll(s.mkdir, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				c := *s.cmd
				total++
				if why, ok := untestable[c.args[0]]; ok {
					t.Logf("%s: not run: %s", c, why)
					continue
				}
				runDocCommand(t, c)
			}
		})
	}
	if total < 30 {
		t.Errorf("found %d onnxcost commands in the pages, want at least 30 (is the parser still finding them?)", total)
	}
}

// TestDocsParser pins the conventions the pages rely on.
func TestDocsParser(t *testing.T) {
	got := shellWords(t, `sweep 'zoo:llama-7b?decode=1&past=1024' --gpu "H100" --batch 1,8   # a comment`)
	want := []string{"sweep", "zoo:llama-7b?decode=1&past=1024", "--gpu", "H100", "--batch", "1,8"}
	if !slices.Equal(got, want) {
		t.Errorf("shellWords: got %q, want %q", got, want)
	}
	// An exemption no page needs is a hole for the next command to fall
	// through: each entry of untestable must be shown somewhere.
	shown := map[string]bool{}
	for _, c := range docCommands(t) {
		shown[c.args[0]] = true
	}
	for sub := range untestable {
		if !shown[sub] {
			t.Errorf("untestable lists %q, which no page shows; drop it", sub)
		}
	}
}

// TestReadmeTestCommand: CI runs "the test command from README.md"; the
// two must stay the same.
func TestReadmeTestCommand(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "\n## Tests\n")
	if i < 0 {
		t.Fatal("README.md has no Tests section")
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)\n```").FindStringSubmatch(string(readme)[i:])
	if block == nil {
		t.Fatal("README.md's Tests section has no sh block")
	}
	cmd := strings.TrimSpace(block[1])
	if !strings.Contains(string(ci), "# The test command from README.md:\n"+cmd+"\n") {
		t.Errorf("README.md's test command %q is not the one .ci/run runs after \"# The test command from README.md:\"", cmd)
	}
}

// TestDocsLinks: every relative link of README.md and docs/*.md names a
// file or folder that exists.
func TestDocsLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range docPages(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			p := filepath.Join(repoRoot, filepath.Dir(page), target)
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: link to %s: %v", page, m[1], err)
			}
		}
	}
}

// ciCommands returns, in order, every `onnxcost ...` command line in
// docs/ci.md (shell blocks and the run:/script: lines of the CI
// workflows).
func ciCommands(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmdLine := regexp.MustCompile(`^\s*(?:-\s+)?(?:run:\s+)?(onnxcost\s.*)$`)
	var cmds [][]string
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		if m := cmdLine.FindStringSubmatch(sc.Text()); m != nil {
			w := shellWords(t, m[1])[1:]
			if n := len(w); n >= 2 && w[n-2] == ">" {
				w = w[:n-2]
			}
			cmds = append(cmds, w)
		}
	}
	return cmds
}

// TestDocsCIWorkflow runs docs/ci.md's commands as a pipeline would: the
// budget and baseline on "main", then the workflow's check on an unchanged
// model (exit 0) and on a pull request that adds a ResNet block (exit 1,
// pointing at the time budget's line, with annotations and a summary).
func TestDocsCIWorkflow(t *testing.T) {
	cmds := ciCommands(t)
	// onnxcost never creates folders; the page's step 2 makes ci/ itself.
	page, err := os.ReadFile(filepath.Join(repoRoot, "docs", "ci.md"))
	if err != nil || !strings.Contains(string(page), "mkdir -p ci") {
		t.Fatal("docs/ci.md must create ci/ before writing ci/baseline.json")
	}
	if len(cmds) < 4 {
		t.Fatalf("found %d onnxcost commands in docs/ci.md, want at least 4: %v", len(cmds), cmds)
	}
	grown := fixture(t, "resnet50_plus_block.onnx")
	dir := docWorkdir(t)
	// diff's example compares against a saved report named base.json.
	code, out, errs := runCLI(t, "report", "models/resnet50.onnx", "--gpu", "T4", "--batch", "1", "--format", "json")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if err := os.WriteFile("base.json", []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("ci", 0o755); err != nil {
		t.Fatal(err)
	}
	var workflowCheck []string
	for _, args := range cmds {
		code, _, errs := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("onnxcost %s: exit %d on an unchanged model: %s", strings.Join(args, " "), code, errs)
		}
		if args[0] == "check" && strings.Contains(strings.Join(args, " "), "--base-report") {
			workflowCheck = args
		}
	}
	if workflowCheck == nil {
		t.Fatal("docs/ci.md's workflows run no 'onnxcost check --base-report'")
	}
	budget, err := os.ReadFile(".onnxcost.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The team tightens the generated 5% time increase to 3% (the page:
	// "edit it freely"): the added bottleneck block costs +5.3% FLOPs but,
	// with its 3×3 convolution on the fused Winograd kernel, +4.9% time at
	// batch 1 on T4, inside the generated 5%.
	tight := strings.Replace(string(budget), `max_increase: "5%"`, `max_increase: "3%"`, 1)
	if tight == string(budget) {
		t.Fatalf("budget init wrote no 5%% max_increase:\n%s", budget)
	}
	budget = []byte(tight)
	if err := os.WriteFile(".onnxcost.yaml", budget, 0o644); err != nil {
		t.Fatal(err)
	}
	timeLine := 0
	for i, l := range strings.Split(string(budget), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "time:") {
			timeLine = i + 1
		}
	}
	// The pull request: a bigger model under the same path.
	copyFile(t, grown, filepath.Join(dir, "models", "resnet50.onnx"))
	summary := filepath.Join(dir, "summary.md")
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	code, out, errs = runCLI(t, workflowCheck...)
	if code != 1 {
		t.Fatalf("check on the grown model: exit %d, want 1\n%s%s", code, out, errs)
	}
	wantAnn := "::error file=.onnxcost.yaml,line=" + strconv.Itoa(timeLine) + ","
	if !strings.Contains(out, wantAnn) {
		t.Errorf("no annotation on the time budget line %d:\n%s", timeLine, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "::error") && !strings.Contains(l, "time") {
			t.Errorf("annotation for something other than the failed time budget: %s", l)
		}
	}
	if s, err := os.ReadFile(summary); err != nil || !strings.Contains(string(s), "<!-- onnxcost-report -->") || !strings.Contains(string(s), "❌") {
		t.Errorf("step summary missing or without a failure: %v\n%s", err, s)
	}
	md, err := os.ReadFile("onnxcost.md")
	if err != nil || !strings.Contains(string(md), "| model | metric | base | head | Δ | budget | |") || !strings.Contains(string(md), "<details>") {
		t.Errorf("PR comment lacks the table or the details: %v\n%s", err, md)
	}
	junit, err := os.ReadFile("onnxcost.xml")
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(junit, &parsed); err != nil || parsed.Failures != 1 {
		t.Errorf("JUnit: err %v, failures %d, want 1\n%s", err, parsed.Failures, junit)
	}
}

// TestDocsWorkflowsMatchAction: the workflows docs/ci.md shows parse as
// YAML, give the action only inputs action.yml declares, and read only
// outputs it sets.
func TestDocsWorkflowsMatchAction(t *testing.T) {
	a := loadAction(t)
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(data), -1)
	if len(blocks) < 2 {
		t.Fatalf("docs/ci.md shows %d YAML blocks, want the GitHub and GitLab workflows", len(blocks))
	}
	usesAction := false
	for _, b := range blocks {
		var wf struct {
			Jobs map[string]struct {
				Steps []actionStep `yaml:"steps"`
			} `yaml:"jobs"`
		}
		var any map[string]any
		if err := yaml.Unmarshal([]byte(b[1]), &any); err != nil {
			t.Errorf("docs/ci.md: a YAML block does not parse: %v\n%s", err, b[1])
			continue
		}
		if err := yaml.Unmarshal([]byte(b[1]), &wf); err != nil {
			continue // not a GitHub workflow (GitLab's jobs are top-level)
		}
		ids := map[string]bool{}
		for _, job := range wf.Jobs {
			for _, s := range job.Steps {
				if !strings.HasPrefix(s.Uses, "onnxcost/onnxcost@") {
					continue
				}
				usesAction = true
				ids[s.ID] = true
				for k := range s.With {
					if _, ok := a.Inputs[k]; !ok {
						t.Errorf("docs/ci.md passes input %q, which action.yml does not declare", k)
					}
				}
			}
		}
		for _, m := range regexp.MustCompile(`steps\.([\w-]+)\.outputs\.([\w-]+)`).FindAllStringSubmatch(b[1], -1) {
			if !ids[m[1]] {
				continue
			}
			if _, ok := a.Outputs[m[2]]; !ok {
				t.Errorf("docs/ci.md reads output %q, which action.yml does not set", m[2])
			}
		}
	}
	if !usesAction {
		t.Error("docs/ci.md's GitHub workflow does not use the onnxcost action")
	}
}
