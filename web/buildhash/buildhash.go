// Package buildhash fingerprints what web/dist is built from, so a test
// can tell when the committed WebAssembly build is stale: the Go files
// (and their embedded files) of every package of this module that the
// WebAssembly main (web/wasm) compiles, go.mod, go.sum and the build
// script. The page's own files (web/static) are not built, only served
// beside the build, so they are not part of it. The Go toolchain is not part of it: another Go version
// builds other bytes that do the same thing.
package buildhash

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// module is this repository's module path.
const module = "github.com/onnxcost/onnxcost"

// Inputs lists, sorted and relative to the module root, the files web/dist
// is built from.
func Inputs(root string) ([]string, error) {
	cmd := exec.Command("go", "list", "-deps",
		"-f", `{{if .Module}}{{if eq .Module.Path "`+module+`"}}{{range .GoFiles}}{{$.Dir}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$.Dir}}/{{.}}
{{end}}{{end}}{{end}}`, "./web/wasm")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		rel, err := filepath.Rel(absRoot, line)
		if err != nil {
			return nil, err
		}
		files = append(files, filepath.ToSlash(rel))
	}
	files = append(files, "go.mod", "go.sum", "scripts/build_web.sh")
	sort.Strings(files)
	return files, nil
}

// Sum is the SHA-256 over the inputs' names and contents, in hex.
func Sum(root string) (string, error) {
	files, err := Inputs(root)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
