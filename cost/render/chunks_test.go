package render

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// failingWriter takes `left` bytes, then fails every write.
type failingWriter struct {
	got    bytes.Buffer
	left   int
	writes int // calls after the first failure
	failed bool
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.failed {
		f.writes++
	}
	if len(p) > f.left {
		f.failed = true
		return 0, errors.New("disk full")
	}
	f.left -= len(p)
	return f.got.Write(p)
}

// TestWriteChunks: chunks come out in order whatever goroutine formats
// them, on one or several; the first write error is returned and nothing
// is written after it; a panic while formatting is raised in the caller,
// where run can recover it.
func TestWriteChunks(t *testing.T) {
	format := func(k int, b []byte) []byte {
		for i := 0; i <= k%7; i++ {
			b = strconv.AppendInt(append(b, ' '), int64(k), 10)
		}
		return b
	}
	var want bytes.Buffer
	for k := 0; k < 1000; k++ {
		want.Write(format(k, nil))
	}
	for _, procs := range []int{1, 2, 4} {
		t.Run("GOMAXPROCS="+strconv.Itoa(procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			testWriteChunks(t, procs, format, want.String())
		})
	}
}

// testWriteChunks is TestWriteChunks at one GOMAXPROCS.
func testWriteChunks(t *testing.T, procs int, format func(int, []byte) []byte, want string) {
	var got bytes.Buffer
	if err := WriteChunks(&got, 1000, 8, format); err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Errorf("GOMAXPROCS %d: chunks out of order", procs)
	}
	fw := &failingWriter{left: len(want) / 2}
	if err := WriteChunks(fw, 1000, 8, format); err == nil || err.Error() != "disk full" {
		t.Errorf("GOMAXPROCS %d: error %v, want disk full", procs, err)
	}
	if fw.writes > 0 || !strings.HasPrefix(want, fw.got.String()) {
		t.Errorf("GOMAXPROCS %d: %d writes after the error, or bytes out of order", procs, fw.writes)
	}
	mustPanic := func(what, want string, f func()) {
		defer func() {
			if r := recover(); fmt.Sprint(r) != want {
				t.Errorf("GOMAXPROCS %d: %s: recovered %v, want %q", procs, what, r, want)
			}
		}()
		f()
	}
	mustPanic("WriteChunks", "chunk 500", func() {
		WriteChunks(&bytes.Buffer{}, 1000, 8, func(k int, b []byte) []byte {
			if k == 500 {
				panic("chunk " + strconv.Itoa(k))
			}
			return format(k, b)
		})
	})
	mustPanic("ForChunks", "chunk 7", func() {
		ForChunks(100, func(k int) {
			if k == 7 {
				panic("chunk " + strconv.Itoa(k))
			}
		})
	})
}
