//go:build unix

package outfile

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestCheckSpecial: a FIFO and a device are refused and stay what they
// are.
func TestCheckSpecial(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "FIFO", os.DevNull: "device"} {
		if err := WriteAtomic(path, []byte("x")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is no longer one: %v", err)
	}
	onlyFiles(t, filepath.Dir(fifo), "fifo")
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("%s is no longer a device: %v", os.DevNull, err)
	}
}

// TestUmask: files get 0666 less the umask.
func TestUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	umask = sync.OnceValue(readUmask)
	defer func() { umask = sync.OnceValue(readUmask) }()
	p := filepath.Join(t.TempDir(), "out.svg")
	if err := WriteAtomic(p, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 under umask 077 (%v)", st.Mode().Perm(), err)
	}
}
