package ir_test

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
	"github.com/onnxcost/onnxcost/passes"
)

var updateWrite = flag.Bool("update-write", false, "rewrite testdata/write.sha256")

// writeGoldenPath pins the writer's exact output: one "sha256  name" line
// per written model. The writer's encoding is not unique (field order,
// packing), so the round-trip tests alone would let it drift; any change
// to these bytes must be deliberate.
const writeGoldenPath = "testdata/write.sha256"

// writtenHashes writes every committed model as read and as fused by the
// default passes, plus the generated 112k-node LLaMA graph, and returns
// "sha256  name" lines, sorted.
func writtenHashes(t *testing.T) []string {
	var paths []string
	for _, pat := range []string{fixtureDir + "/*.onnx", "testdata/roundtrip/*.onnx", "../passes/testdata/*.onnx"} {
		ps, _ := filepath.Glob(pat)
		paths = append(paths, ps...)
	}
	if len(paths) == 0 {
		t.Fatal("no fixture models found")
	}
	var lines []string
	hash := func(name string, m *ir.Model) {
		var buf bytes.Buffer
		if err := ir.Write(&buf, m); err != nil {
			t.Fatalf("%s: write: %v", name, err)
		}
		lines = append(lines, fmt.Sprintf("%x  %s", sha256.Sum256(buf.Bytes()), name))
	}
	for _, p := range paths {
		name := filepath.ToSlash(p)
		m, err := ir.ReadFile(p, ir.ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		hash(name, m)
		if _, err := passes.Run(m.Graph, passes.Options{}); err != nil {
			t.Fatalf("%s: fuse: %v", p, err)
		}
		hash(name+" fused", m)
	}
	m, err := models.ScaleLlama()
	if err != nil {
		t.Fatal(err)
	}
	models.SetDataFile(m, "llama-112k.onnx.data")
	hash("models.ScaleLlama", m)
	slices.Sort(lines)
	return lines
}

// TestWriteGolden checks the writer's bytes against testdata/write.sha256.
func TestWriteGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("writes the 112k-node scale model")
	}
	got := strings.Join(writtenHashes(t), "\n") + "\n"
	if *updateWrite {
		if err := os.WriteFile(writeGoldenPath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(writeGoldenPath)
	if err != nil {
		t.Fatalf("%v (run with -update-write to create it)", err)
	}
	if got != string(want) {
		reportHashDiff(t, string(want), got)
	}
}

// reportHashDiff names the lines that differ between want and got.
func reportHashDiff(t *testing.T, want, got string) {
	wantLines := strings.Split(want, "\n")
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		if !slices.Contains(wantLines, l) {
			t.Errorf("written bytes changed: %s", l)
		}
	}
	if !t.Failed() {
		t.Errorf("%s lists models no longer written:\n%s", writeGoldenPath, want)
	}
}
