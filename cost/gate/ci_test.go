package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/internal/outfile"
)

// TestAnnotationPathIsFromTheRepositoryRoot: GitHub attaches an
// annotation to a file named from the repository root, wherever the
// check ran (the action's working-directory).
func TestAnnotationPathIsFromTheRepositoryRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(root, "ci"))
	for _, c := range []struct{ file, root, want string }{
		{".onnxcost.yaml", root, "ci/.onnxcost.yaml"},
		{"budgets/b.yaml", root, "ci/budgets/b.yaml"},
		{"../b.yaml", root, "b.yaml"},
		{filepath.Join(root, "ci", "b.yaml"), root, "ci/b.yaml"},
		{".onnxcost.yaml", "", ".onnxcost.yaml"},                           // not under Actions
		{".onnxcost.yaml", filepath.Join(root, "other"), ".onnxcost.yaml"}, // outside the workspace
	} {
		if got := AnnotationPath(c.file, c.root); got != c.want {
			t.Errorf("AnnotationPath(%q, %q) = %q, want %q", c.file, c.root, got, c.want)
		}
	}
	res := &CheckResult{BudgetFile: ".onnxcost.yaml", Models: []ModelResult{{Name: "m", Results: []AssertResult{
		{Metric: "time", Status: "fail", Level: Error, Line: 4, Message: "too slow"}}}}}
	var ann bytes.Buffer
	WriteAnnotations(&ann, res, root)
	if !strings.HasPrefix(ann.String(), "::error file=ci/.onnxcost.yaml,line=4,") {
		t.Errorf("annotation %q, want it on ci/.onnxcost.yaml", ann.String())
	}
}

// TestErrorResultFiles: a check that could not run still writes every
// requested file, stating the error.
func TestErrorResultFiles(t *testing.T) {
	dir := t.TempDir()
	res := ErrorResult("b.yaml", "t", errors.New("models/gone.onnx: open: no such file\n::error::x"))
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := outfile.WriteAll(nil, CheckFiles(res, p("r.json"), p("r.md"), p("r.xml"))...); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(p(name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var j struct {
		Verdict, Error string
		Models         []any
	}
	if err := json.Unmarshal([]byte(read("r.json")), &j); err != nil || j.Verdict != "error" || !strings.Contains(j.Error, "gone.onnx") || j.Models == nil {
		t.Errorf("JSON %v %+v:\n%s", err, j, read("r.json"))
	}
	if md := read("r.md"); !strings.HasPrefix(md, CommentMarker) || !strings.Contains(md, "gone.onnx") || !strings.Contains(md, "error") {
		t.Errorf("Markdown:\n%s", md)
	}
	if x := read("r.xml"); !strings.Contains(x, `errors="1"`) || !strings.Contains(x, "<error ") || !strings.Contains(x, "gone.onnx") {
		t.Errorf("JUnit:\n%s", x)
	}
	var ann bytes.Buffer
	WriteAnnotations(&ann, res, "")
	if lines := strings.Split(strings.TrimSpace(ann.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "::error file=b.yaml,title=") {
		t.Errorf("annotations:\n%s", ann.String())
	}
}
