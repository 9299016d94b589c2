package outfile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefuse: an input, a directory or a second flag naming the same
// file is refused with the flag and the path; outputs not asked for are
// skipped.
func TestRefuse(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.onnx"), filepath.Join(dir, "out.svg")
	write(t, in, "model")
	if err := Refuse([]string{in}, Target{"-o", out}, Target{"--trace", ""}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		outs []Target
		want string
	}{
		{[]Target{{"-o", in}}, "-o " + in + ": is an input"},
		{[]Target{{"-o", dir}}, "-o " + dir + ": is a directory"},
		{[]Target{{"--out-json", out}, {"--out-markdown", out}}, "--out-markdown " + out + ": is also the file of --out-json"},
	} {
		if err := Refuse([]string{in}, c.outs...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.outs, err, c.want)
		}
	}
}

// TestWriteAll: every file asked for lands; one that cannot be written
// leaves none.
func TestWriteAll(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.md")
	if err := WriteAll(nil, Bytes(a, []byte("A")), File{Path: "", Write: func(io.Writer) error { return nil }}, Bytes(b, []byte("B"))); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{a: "A", b: "B"} {
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	c := filepath.Join(dir, "c.json")
	if err := WriteAll(nil, Bytes(c, []byte("C")), Bytes(filepath.Join(dir, "no", "d.md"), nil)); err == nil {
		t.Fatal("a missing folder was not an error")
	}
	onlyFiles(t, dir, "a.json", "b.md")
}
