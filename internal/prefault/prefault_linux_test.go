package prefault

import (
	"reflect"
	"syscall"
	"testing"
	"unsafe"
)

const sampleMaps = `00400000-00c90000 r-xp 00000000 fd:01 1234 /usr/local/bin/onnx cost
00c90000-01eb4000 r--p 00890000 fd:01 1234 /usr/local/bin/onnx cost
01eb4000-0240d000 rw-p 01ab4000 fd:01 1234 /usr/local/bin/onnx cost
0240d000-04455000 rw-p 00000000 00:00 0
13c1b4000000-13c1b4800000 rw-p 00000000 00:00 0
7f44b3000000-7f44b3021000 r-xp 00000000 fd:01 99 /usr/lib/other.so
7ffef4000000-7ffef4021000 rw-p 00000000 00:00 0                          [stack]
garbage line
`

func TestCode(t *testing.T) {
	got := code([]byte(sampleMaps), 0x500000)
	want := []mapping{{lo: 0x400000, hi: 0xc90000, perms: [4]byte{'r', '-', 'x', 'p'}, path: []byte("/usr/local/bin/onnx cost")}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("code = %+v, want %+v", got, want)
	}
	for _, pc := range []uintptr{0x13c1b4000010, 0x3ff000, 0} {
		if got := code([]byte(sampleMaps), pc); got != nil {
			t.Errorf("pc %#x outside the executable: code = %+v", pc, got)
		}
	}
	if got := code([]byte(sampleMaps[:40]), 0x500000); got != nil {
		t.Errorf("a cut line: code = %+v", got)
	}
}

// TestThisProcess: the test binary's own code is found, and populate maps
// in fresh anonymous pages (where the kernel has MADV_POPULATE_WRITE).
func TestThisProcess(t *testing.T) {
	var buf [16 << 10]byte
	if ms := code(readMaps(buf[:]), reflect.ValueOf(code).Pointer()); len(ms) == 0 {
		t.Fatal("no code mapping found for this binary")
	}
	const n = 64 << 10
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(b)
	addr := uintptr(unsafe.Pointer(&b[0]))
	if resident(t, addr, n) != 0 {
		t.Fatal("fresh pages already resident")
	}
	if !populate(addr, n, madvPopulateWrite) {
		t.Skip("kernel without MADV_POPULATE_WRITE (before 5.14)")
	}
	if got := resident(t, addr, n); got != n/syscall.Getpagesize() {
		t.Errorf("%d of %d pages resident after populate", got, n/syscall.Getpagesize())
	}
}

// resident counts the resident pages of [addr, addr+n).
func resident(t *testing.T, addr uintptr, n int) int {
	vec := make([]byte, n/syscall.Getpagesize())
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, addr, uintptr(n), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	c := 0
	for _, v := range vec {
		c += int(v & 1)
	}
	return c
}
