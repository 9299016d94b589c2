package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFileRegular(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.yaml")
	if err := os.WriteFile(p, []byte("gpu: T4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := ReadFile(p, SideFileLimit)
	if err != nil || string(data) != "gpu: T4\n" {
		t.Fatalf("ReadFile = %q, %v", data, err)
	}
	// Exactly at the bound is allowed; one byte over is not.
	if _, err := ReadFile(p, 8); err != nil {
		t.Fatalf("ReadFile at the bound: %v", err)
	}
	_, err = ReadFile(p, 7)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), p) {
		t.Fatalf("ReadFile over the bound: %v", err)
	}
}

func TestReadFileTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: no disk space is used, and the size alone refuses it.
	if err := f.Truncate(SideFileLimit + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadFile(p, SideFileLimit)
	if err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
		t.Fatalf("ReadFile = %v, want larger than 16 MiB", err)
	}
}

func TestReadFileDirectory(t *testing.T) {
	d := t.TempDir()
	_, err := ReadFile(d, SideFileLimit)
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a directory") || !strings.Contains(err.Error(), d) {
		t.Fatalf("ReadFile(dir) = %v", err)
	}
}

func TestReadFileMissing(t *testing.T) {
	_, err := ReadFile(filepath.Join(t.TempDir(), "none"), SideFileLimit)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadFile(missing) = %v", err)
	}
}

func TestOpenInRegular(t *testing.T) {
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "w.bin"), []byte{1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(d)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	f, fi, err := OpenIn(root, "w.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 3)
	if _, err := f.ReadAt(buf, 0); err != nil || fi.Size() != 3 || buf[2] != 3 {
		t.Fatalf("read %v size %d: %v", buf, fi.Size(), err)
	}
	if _, _, err := OpenIn(root, "."); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("OpenIn(dir) = %v", err)
	}
}
