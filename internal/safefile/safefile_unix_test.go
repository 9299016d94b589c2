//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test if f takes more than 5 s: the files here would
// block a plain open or read forever.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("blocked for more than 5 s")
	}
}

func TestFIFORefused(t *testing.T) {
	d := t.TempDir()
	p := filepath.Join(d, "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	within(t, func() {
		_, err := ReadFile(p, SideFileLimit)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a named pipe") {
			t.Errorf("ReadFile(fifo) = %v", err)
		}
		root, err := os.OpenRoot(d)
		if err != nil {
			t.Error(err)
			return
		}
		defer root.Close()
		if _, _, err := OpenIn(root, "fifo"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenIn(fifo) = %v", err)
		}
	})
}

// TestOpenedFIFORefused checks the descriptor check alone, for a path
// swapped to a named pipe after it was checked.
func TestOpenedFIFORefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	within(t, func() {
		f, err := os.OpenFile(p, os.O_RDONLY|nonBlock, 0)
		if err != nil {
			t.Error(err)
			return
		}
		if _, _, err := checkOpened(f, p); !errors.Is(err, ErrNotRegular) {
			t.Errorf("checkOpened(fifo) = %v", err)
		}
	})
}

func TestDevZeroRefused(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	within(t, func() {
		_, err := ReadFile("/dev/zero", SideFileLimit)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a character device") {
			t.Errorf("ReadFile(/dev/zero) = %v", err)
		}
	})
}

func TestSymlinkToDevZeroRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "link.yaml")
	if err := os.Symlink("/dev/zero", p); err != nil {
		t.Skip(err)
	}
	within(t, func() {
		if _, err := ReadFile(p, SideFileLimit); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Errorf("ReadFile(link to /dev/zero) = %v", err)
		}
	})
}
