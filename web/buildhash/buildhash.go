// Package buildhash fingerprints what web/dist is built from, so a test
// can tell when the committed WebAssembly build is stale: the Go files
// (and their embedded files) of every package of this module that the
// WebAssembly main (web/wasm) compiles, go.mod, go.sum and the build
// script. The page's own files (web/static) are not built, only served
// beside the build, so they are not part of it. The Go toolchain is not part of it: another Go version
// builds other bytes that do the same thing.
//
// A Go file counts by its tokens (line ends that end a statement
// included) and compiler directives, not its bytes: a comment or
// spacing change builds the same WebAssembly, and hashing
// bytes made every comment edit in ir/ or passes/ a 10 MB rebuild and
// commit of web/dist.
package buildhash

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/scanner"
	"go/token"
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
		if strings.HasSuffix(f, ".go") {
			b = goTokens(b)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// goTokens is a Go source's tokens, one per line, with the comments that
// are compiler directives (//go:embed, //go:build, //line ...) and none
// of the others. A file that does not scan is returned as it is.
func goTokens(src []byte) []byte {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	bad := false
	s.Init(file, src, func(token.Position, string) { bad = true }, scanner.ScanComments)
	var out bytes.Buffer
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.COMMENT && !strings.HasPrefix(lit, "//go:") && !strings.HasPrefix(lit, "//line ") {
			continue
		}
		if tok == token.SEMICOLON && lit == "\n" {
			lit = ";" // an inserted semicolon, wherever the line ended
		}
		fmt.Fprintf(&out, "%s %s\n", tok, lit)
	}
	if bad {
		return src
	}
	return out.Bytes()
}
