package ir

import (
	"errors"
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"
)

// ErrFileChanged is the error of a read whose memory-mapped file lost
// bytes meanwhile: truncated by another process, or unreadable (an I/O
// error on a network file system reaches a mapping the same way).
var ErrFileChanged = errors.New("the file changed while being read (truncated, or an I/O error): its bytes are gone")

// TestHookAfterMap, when set, runs in ReadFile between mapping the file
// and decoding it: tests, of this package and of its callers, truncate
// the file there, where decoding is sure to touch the lost pages. Leave
// it nil otherwise.
var TestHookAfterMap func(path string)

// testHookSplit, when set, runs where decodeNodes has split a graph's
// nodes among workers, with the offset just past the first range's last
// node, so that a test can truncate the file under the other workers
// only: the graph scan before has read every node once.
var testHookSplit func(firstEnd int64)

// guardMapped runs fn on the calling goroutine with a memory fault inside
// data reported as ErrFileChanged. Touching a mapped page past the end of
// a file truncated after mapping raises SIGBUS, which the runtime turns
// into a panic only on a goroutine that asked for it
// (debug.SetPanicOnFault); elsewhere it kills the process. The setting is
// per goroutine, so every goroutine that decodes from data runs its work
// through here. It costs two runtime calls per goroutine; reading every
// byte with pread instead would give up the mapping, and with it the
// weights left untouched.
//
// A fault elsewhere, or any other panic, is a bug and panics on.
func guardMapped(data []byte, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if p := recover(); p != nil {
			if !faultIn(p, data) {
				panic(p)
			}
			err = ErrFileChanged
		}
	}()
	return fn()
}

// faultIn reports whether p is the runtime's panic for a memory fault at
// an address inside data.
func faultIn(p any, data []byte) bool {
	if _, ok := p.(runtime.Error); !ok || len(data) == 0 {
		return false
	}
	f, ok := p.(interface{ Addr() uintptr })
	if !ok {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	a := f.Addr()
	return a >= lo && a-lo < uintptr(len(data))
}

// mapped are the files mapped now, by the address range of their bytes:
// after ReadFile returns, names and encoded types still point into the
// mapping, so a file truncated later faults where the graph is next read.
var mapped struct {
	sync.Mutex
	files map[*byte]mappedFile
}

type mappedFile struct {
	path string
	size int
}

// remember records data as path's mapping until the returned func runs.
func remember(path string, data []byte) (forget func()) {
	if len(data) == 0 {
		return func() {}
	}
	key := unsafe.SliceData(data)
	mapped.Lock()
	if mapped.files == nil {
		mapped.files = map[*byte]mappedFile{}
	}
	mapped.files[key] = mappedFile{path, len(data)}
	mapped.Unlock()
	return func() {
		mapped.Lock()
		delete(mapped.files, key)
		mapped.Unlock()
	}
}

// FaultedFile reports which mapped model file a recovered panic p faulted
// in: the runtime's panic for a memory fault (on a goroutine with
// debug.SetPanicOnFault) at an address inside a mapping ReadFile made. A
// command recovers with it to name the file that changed under it
// instead of dying with SIGBUS.
func FaultedFile(p any) (string, bool) {
	if _, ok := p.(runtime.Error); !ok {
		return "", false
	}
	f, ok := p.(interface{ Addr() uintptr })
	if !ok {
		return "", false
	}
	a := f.Addr()
	mapped.Lock()
	defer mapped.Unlock()
	for key, m := range mapped.files {
		if lo := uintptr(unsafe.Pointer(key)); a >= lo && a-lo < uintptr(m.size) {
			return m.path, true
		}
	}
	return "", false
}
