package gate

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/onnxcost/onnxcost/internal/outfile"
)

// CheckFiles are the files `onnxcost check` writes besides stdout, for
// the paths requested (an empty path writes nothing): the result as JSON,
// the Markdown PR comment and JUnit XML. A check that could not run
// (ErrorResult) writes them too, stating the error.
func CheckFiles(res *CheckResult, jsonPath, markdownPath, junitPath string) []outfile.File {
	return []outfile.File{
		{Path: jsonPath, Write: func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(res)
		}},
		{Path: markdownPath, Write: func(w io.Writer) error { WriteCheckMarkdown(w, res); return nil }},
		{Path: junitPath, Write: func(w io.Writer) error { return WriteJUnit(w, res) }},
	}
}

// PublishActions, under GitHub Actions (GITHUB_ACTIONS=true), prints the
// ::error annotations on stdout, naming the budget file relative to
// $GITHUB_WORKSPACE, and appends the Markdown to $GITHUB_STEP_SUMMARY
// (a failure to is a warning on stderr).
func PublishActions(stdout, stderr io.Writer, res *CheckResult) {
	if os.Getenv("GITHUB_ACTIONS") != "true" {
		return
	}
	WriteAnnotations(stdout, res, os.Getenv("GITHUB_WORKSPACE"))
	if p := os.Getenv("GITHUB_STEP_SUMMARY"); p != "" {
		if err := outfile.Append(p, func(w io.Writer) error { WriteCheckMarkdown(w, res); return nil }); err != nil {
			fmt.Fprintf(stderr, "onnxcost: warning: cannot append to GITHUB_STEP_SUMMARY %s: %v\n", p, err)
		}
	}
}
