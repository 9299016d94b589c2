package main

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// actionFile is the composite action at the repository root.
type actionFile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Branding    struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Required    bool    `yaml:"required"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	Name             string            `yaml:"name"`
	ID               string            `yaml:"id"`
	If               string            `yaml:"if"`
	Uses             string            `yaml:"uses"`
	Run              string            `yaml:"run"`
	Shell            string            `yaml:"shell"`
	Env              map[string]string `yaml:"env"`
	With             map[string]string `yaml:"with"`
	WorkingDirectory string            `yaml:"working-directory"`
}

var actionExpr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

func loadAction(t *testing.T) *actionFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return &a
}

// TestActionIsValidComposite checks action.yml against the rules GitHub
// applies to a composite action: name, description, runs.using
// composite, every step either uses an action or runs a script with a
// shell, step ids unique, and every expression naming a declared input or
// an existing step's output.
func TestActionIsValidComposite(t *testing.T) {
	a := loadAction(t)
	if a.Name == "" || a.Description == "" {
		t.Error("action.yml needs name and description")
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q, want composite", a.Runs.Using)
	}
	ids := map[string]bool{}
	for i, s := range a.Runs.Steps {
		switch {
		case s.Uses != "" && s.Run != "":
			t.Errorf("step %d (%s) has both uses and run", i, s.Name)
		case s.Uses == "" && s.Run == "":
			t.Errorf("step %d (%s) has neither uses nor run", i, s.Name)
		case s.Run != "" && s.Shell == "":
			t.Errorf("step %d (%s): a composite run step needs shell", i, s.Name)
		case s.Uses != "" && !regexp.MustCompile(`^[\w.-]+/[\w.-]+@\S+$`).MatchString(s.Uses):
			t.Errorf("step %d: uses %q is not owner/repo@ref", i, s.Uses)
		}
		if s.ID != "" {
			if ids[s.ID] {
				t.Errorf("duplicate step id %q", s.ID)
			}
			ids[s.ID] = true
		}
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %d (%s) splices an expression into its script; pass it through env", i, s.Name)
		}
	}
	check := func(where, text string) {
		for _, m := range actionExpr.FindAllStringSubmatch(text, -1) {
			e := m[1]
			switch {
			case strings.HasPrefix(e, "inputs."):
				if _, ok := a.Inputs[strings.TrimPrefix(e, "inputs.")]; !ok {
					t.Errorf("%s: %s names no declared input", where, m[0])
				}
			case strings.HasPrefix(e, "steps."):
				id, _, _ := strings.Cut(strings.TrimPrefix(e, "steps."), ".")
				if !ids[id] {
					t.Errorf("%s: %s names no step", where, m[0])
				}
			case e == "github.action_path", e == "github.action_ref", e == "github.action_repository":
			default:
				t.Errorf("%s: unexpected expression %s", where, m[0])
			}
		}
	}
	for name, o := range a.Outputs {
		if o.Value == "" || o.Description == "" {
			t.Errorf("output %s needs value and description", name)
		}
		check("output "+name, o.Value)
	}
	for i, s := range a.Runs.Steps {
		for k, v := range s.Env {
			check(fmt.Sprintf("step %d env %s", i, k), v)
		}
		for k, v := range s.With {
			check(fmt.Sprintf("step %d with %s", i, k), v)
		}
		check(fmt.Sprintf("step %d working-directory", i), s.WorkingDirectory)
		check(fmt.Sprintf("step %d if", i), s.If)
	}
	if _, ok := a.Outputs["verdict"]; !ok {
		t.Error("no verdict output")
	}
}

// runAction runs the action's script steps the way the runner does: each
// in bash from its working directory, with GITHUB_OUTPUT, GITHUB_PATH,
// GITHUB_STEP_SUMMARY, GITHUB_ACTION_PATH, RUNNER_TEMP and GITHUB_ACTIONS
// set, expressions in env and working-directory replaced by the inputs
// (or their defaults), and lines appended to GITHUB_PATH put on PATH for
// later steps. `uses:` steps are skipped: setup-go's job is done by the go
// on this PATH. It returns the action's outputs, the check step's exit
// code and its combined output.
func runAction(t *testing.T, a *actionFile, workspace string, inputs map[string]string) (map[string]string, int, string) {
	t.Helper()
	tmp := t.TempDir()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, k := range []string{"GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_ENV"} {
		files[k] = filepath.Join(tmp, strings.ToLower(k))
		if err := os.WriteFile(files[k], nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	input := func(name string) string {
		if v, ok := inputs[name]; ok {
			return v
		}
		if d := a.Inputs[name].Default; d != nil {
			return *d
		}
		return ""
	}
	stepOut := map[string]map[string]string{}
	subst := func(s string) string {
		return actionExpr.ReplaceAllStringFunc(s, func(m string) string {
			e := actionExpr.FindStringSubmatch(m)[1]
			switch {
			case strings.HasPrefix(e, "inputs."):
				return input(strings.TrimPrefix(e, "inputs."))
			case e == "github.action_path":
				return root
			case e == "github.action_ref":
				return "v1/test"
			case e == "github.action_repository":
				return "onnxcost/onnxcost"
			case strings.HasPrefix(e, "steps."):
				parts := strings.SplitN(strings.TrimPrefix(e, "steps."), ".", 3)
				return stepOut[parts[0]][parts[2]]
			}
			t.Fatalf("unhandled expression %s", m)
			return ""
		})
	}
	path := os.Getenv("PATH")
	var lastCode int
	var log strings.Builder
	for _, s := range a.Runs.Steps {
		if s.Run == "" {
			continue
		}
		if s.Shell != "bash" {
			t.Fatalf("step %s: shell %q; this test runs bash", s.Name, s.Shell)
		}
		_ = os.WriteFile(files["GITHUB_OUTPUT"], nil, 0o644)
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", s.Run)
		cmd.Dir = workspace
		if wd := subst(s.WorkingDirectory); wd != "" {
			cmd.Dir = filepath.Join(workspace, wd)
		}
		env := append(os.Environ(), "PATH="+path, "GITHUB_ACTIONS=true", "CI=true", "GITHUB_WORKSPACE="+workspace,
			"GITHUB_ACTION_PATH="+root, "RUNNER_TEMP="+tmp, "ONNXCOST_GPU=")
		for k, f := range files {
			env = append(env, k+"="+f)
		}
		for k, v := range s.Env {
			env = append(env, k+"="+subst(v))
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		log.Write(out)
		lastCode = 0
		if ee, ok := err.(*exec.ExitError); ok {
			lastCode = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("step %s: %v", s.Name, err)
		}
		outs := readKeyValues(t, files["GITHUB_OUTPUT"])
		if s.ID != "" {
			stepOut[s.ID] = outs
		}
		if lastCode != 0 && s.ID != "check" {
			t.Fatalf("step %q failed (exit %d):\n%s", s.Name, lastCode, out)
		}
		// GITHUB_PATH lines are prepended to PATH for the next steps.
		for _, p := range strings.Split(strings.TrimSpace(mustRead(t, files["GITHUB_PATH"])), "\n") {
			if p != "" && !strings.HasPrefix(path, p+string(os.PathListSeparator)) {
				path = p + string(os.PathListSeparator) + path
			}
		}
	}
	result := map[string]string{}
	for name, o := range a.Outputs {
		result[name] = subst(o.Value)
	}
	result["$summary"] = mustRead(t, files["GITHUB_STEP_SUMMARY"])
	return result, lastCode, log.String()
}

func readKeyValues(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(mustRead(t, path)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			out[k] = v
		}
	}
	return out
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestActionRunsCheck runs the action on a workspace whose budget passes,
// then fails, then cannot be read, and checks the verdict output, the
// written Markdown, JUnit and job summary, and the step's exit code.
func TestActionRunsCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds onnxcost with go install")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	a := loadAction(t)
	ws := t.TempDir()
	copyFile(t, fixture(t, "alexnet.onnx"), filepath.Join(ws, "ci", "models", "alexnet.onnx"))
	// The budget names no GPU: the action's gpu input supplies it.
	budget := func(limit string) {
		b := "version: 1\nmodels:\n  - path: models/alexnet.onnx\n    batch: 1\n    budgets:\n      time: {max: \"" + limit + "\"}\n"
		if err := os.WriteFile(filepath.Join(ws, "ci", ".onnxcost.yaml"), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	budget("1 s")
	in := map[string]string{"config": "ci/.onnxcost.yaml", "gpu": "T4", "markdown-file": "out/cost.md"}
	if err := os.MkdirAll(filepath.Join(ws, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, code, log := runAction(t, a, ws, in)
	if code != 0 || out["verdict"] != "pass" || out["errors"] != "0" {
		t.Fatalf("passing budget: exit %d, outputs %v\n%s", code, out, log)
	}
	if md := mustRead(t, out["markdown-file"]); !strings.Contains(md, "<!-- onnxcost-report -->") || !strings.Contains(out["$summary"], "<!-- onnxcost-report -->") {
		t.Errorf("comment or job summary missing:\n%s\n---\n%s", md, out["$summary"])
	}
	if out["markdown-file"] != filepath.Join(ws, "out", "cost.md") {
		t.Errorf("markdown-file output %q", out["markdown-file"])
	}

	budget("1 µs")
	out, code, log = runAction(t, a, ws, in)
	if code != 1 || out["verdict"] != "fail" || out["errors"] != "1" {
		t.Fatalf("exceeded budget: exit %d, outputs %v\n%s", code, out, log)
	}
	if !strings.Contains(log, "::error file=ci/.onnxcost.yaml,line=") {
		t.Errorf("no annotation on the budget line:\n%s", log)
	}
	var junit struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal([]byte(mustRead(t, out["junit-file"])), &junit); err != nil || junit.Failures != 1 {
		t.Errorf("JUnit: %v, %d failures", err, junit.Failures)
	}
	in["fail-on-budget"] = "false"
	out, code, _ = runAction(t, a, ws, in)
	if code != 0 || out["verdict"] != "fail" {
		t.Errorf("fail-on-budget false: exit %d, verdict %q", code, out["verdict"])
	}

	// Run from the budget's folder: the annotation still names the budget
	// file from the repository root, where GitHub looks for it.
	wd := map[string]string{"working-directory": "ci", "gpu": "T4", "fail-on-budget": "false"}
	out, code, log = runAction(t, a, ws, wd)
	if code != 0 || out["verdict"] != "fail" || !strings.Contains(log, "::error file=ci/.onnxcost.yaml,line=") {
		t.Errorf("working-directory ci: exit %d, verdict %q, want the annotation on ci/.onnxcost.yaml:\n%s", code, out["verdict"], log)
	}

	// A missing model: exit 2, and every output file states the error, so
	// that a comment step given markdown-file finds it.
	if err := os.WriteFile(filepath.Join(ws, "ci", ".onnxcost.yaml"), []byte("version: 1\nmodels:\n  - path: models/gone.onnx\n    budgets:\n      time: {max: 1 s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, log = runAction(t, a, ws, in)
	if code != 2 || out["verdict"] != "error" {
		t.Fatalf("missing model: exit %d, verdict %q\n%s", code, out["verdict"], log)
	}
	if md := mustRead(t, out["markdown-file"]); !strings.Contains(md, "<!-- onnxcost-report -->") || !strings.Contains(md, "gone.onnx") {
		t.Errorf("missing model: comment does not state the error:\n%s", md)
	}
	var errJUnit struct {
		Errors int `xml:"errors,attr"`
		Suites []struct {
			Cases []struct {
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(mustRead(t, out["junit-file"])), &errJUnit); err != nil || errJUnit.Errors != 1 ||
		len(errJUnit.Suites) != 1 || len(errJUnit.Suites[0].Cases) != 1 || errJUnit.Suites[0].Cases[0].Error == nil ||
		!strings.Contains(errJUnit.Suites[0].Cases[0].Error.Message, "gone.onnx") {
		t.Errorf("missing model: JUnit %v %+v:\n%s", err, errJUnit, mustRead(t, out["junit-file"]))
	}
	var res struct{ Verdict, Error string }
	if err := json.Unmarshal([]byte(mustRead(t, out["json-file"])), &res); err != nil || res.Verdict != "error" || !strings.Contains(res.Error, "gone.onnx") {
		t.Errorf("missing model: JSON %v %+v", err, res)
	}
	if !strings.Contains(log, "::error file=ci/.onnxcost.yaml,title=") || !strings.Contains(out["$summary"], "gone.onnx") {
		t.Errorf("missing model: no annotation or job summary:\n%s\n---\n%s", log, out["$summary"])
	}

	in["config"] = "ci/missing.yaml"
	out, code, _ = runAction(t, a, ws, in)
	if code != 2 || out["verdict"] != "error" {
		t.Errorf("missing budget file: exit %d, verdict %q", code, out["verdict"])
	}
	if md := mustRead(t, out["markdown-file"]); !strings.Contains(md, "missing.yaml") {
		t.Errorf("missing budget file: comment does not state the error:\n%s", md)
	}
}

// TestActionPrebuilt runs the action's install script against a fake
// release (curl replaced by a copy from a folder): a release tag installs
// the archived binary once its checksum matches, a wrong checksum is never
// installed (and is an error under prebuilt: true), and a ref that is not
// a release tag asks for a build.
func TestActionPrebuilt(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, tool := range []string{"tar", "awk", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("no " + tool)
		}
	}
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "action_install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	release, fakeBin := t.TempDir(), t.TempDir()
	// A stand-in binary, archived as the release workflow archives it.
	stage := t.TempDir()
	if err := os.WriteFile(filepath.Join(stage, "onnxcost"), []byte("#!/bin/sh\necho onnxcost v9.9.9 prebuilt\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const asset = "onnxcost_linux_amd64.tar.gz"
	if out, err := exec.Command("tar", "-czf", filepath.Join(release, asset), "-C", stage, "onnxcost").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	sum, err := exec.Command("sha256sum", filepath.Join(release, asset)).Output()
	if err != nil {
		t.Fatal(err)
	}
	good := strings.Fields(string(sum))[0] + "  " + asset + "\n"
	// curl -o FILE URL: copy the URL's last element from the release folder.
	curl := "#!/bin/sh\nout=''; url=''\nwhile [ $# -gt 0 ]; do case \"$1\" in -o) out=$2; shift;; http*) url=$1;; esac; shift; done\ncp \"" + release + "/$(basename \"$url\")\" \"$out\"\n"
	if err := os.WriteFile(filepath.Join(fakeBin, "curl"), []byte(curl), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(ref, mode, sums string) (installed string, code int, log string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(release, "SHA256SUMS"), []byte(sums), 0o644); err != nil {
			t.Fatal(err)
		}
		tmp := t.TempDir()
		ghOut := filepath.Join(tmp, "output")
		cmd := exec.Command("bash", script, "prebuilt")
		cmd.Env = append(os.Environ(), "PATH="+fakeBin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "RUNNER_TEMP="+tmp, "GITHUB_OUTPUT="+ghOut,
			"ACTION_REF="+ref, "ACTION_REPOSITORY=onnxcost/onnxcost", "INPUT_PREBUILT="+mode)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(ghOut); err == nil {
			installed = strings.TrimPrefix(strings.TrimSpace(string(b)), "installed=")
		}
		if installed == "true" {
			v, err := exec.Command(filepath.Join(tmp, "onnxcost-action-bin", "onnxcost")).Output()
			if err != nil || !strings.Contains(string(v), "v9.9.9 prebuilt") {
				t.Errorf("installed binary runs %q, %v", v, err)
			}
		}
		return installed, code, string(out)
	}
	if got, code, log := run("v9.9.9", "auto", good); got != "true" || code != 0 {
		t.Errorf("release tag: installed=%q exit %d\n%s", got, code, log)
	}
	bad := strings.Repeat("0", 64) + "  " + asset + "\n"
	if got, code, log := run("v9.9.9", "auto", bad); got != "false" || code != 0 || !strings.Contains(log, "checksum") {
		t.Errorf("bad checksum under auto: installed=%q exit %d (want false, 0: build instead)\n%s", got, code, log)
	}
	if got, code, log := run("v9.9.9", "true", bad); got == "true" || code == 0 {
		t.Errorf("bad checksum under prebuilt true: installed=%q exit %d, want a failure\n%s", got, code, log)
	}
	if got, code, log := run("main", "auto", good); got != "false" || code != 0 {
		t.Errorf("branch ref: installed=%q exit %d (want a build)\n%s", got, code, log)
	}
	if got, _, _ := run("v9.9.9", "false", good); got != "false" {
		t.Errorf("prebuilt false installed %q", got)
	}
}
