package prefault

import (
	"reflect"
	"syscall"
	"unsafe"
)

// It imports only what the runtime's first packages import, so that it is
// initialised before the packages whose initialisation faults most
// (gonum/plot's fonts, go-latex, gob, os): the Go spec initialises the ready
// package first in import-path order. That is why it parses
// /proc/self/maps by hand: with bytes.Cut and strconv.ParseUint (bytes
// imports unicode) its init ran at 14 ms into `--version` instead of 3.8,
// after os's 2.7 ms (GODEBUG=inittrace=1).
func init() {
	var buf [16 << 10]byte
	for _, m := range code(readMaps(buf[:]), reflect.ValueOf(code).Pointer()) {
		populate(m.lo, m.hi-m.lo, madvPopulateRead)
	}
	base = uintptr(unsafe.Pointer(new(byte))) &^ (chunk - 1)
	populate(base, chunk, madvPopulateWrite)
}

const (
	madvPopulateRead  = 22 // Linux 5.14
	madvPopulateWrite = 23
	// chunk is the unit in which the Go runtime maps heap (its page
	// allocator's palloc chunk), aligned to its size; the heap grows
	// upward from its first chunk, one chunk after another, within a
	// 64 MiB arena.
	chunk = 4 << 20
	// heapChunks is how many chunks after the first Heap populates.
	heapChunks = 3
)

// base is the heap's first chunk.
var base uintptr

func populate(addr, n, advice uintptr) bool {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, addr, n, advice)
	return errno == 0
}

// heap populates the chunks after base as far as they are mapped: madvise
// fails on the first one the runtime has not mapped yet.
func heap() {
	for k := uintptr(1); k <= heapChunks; k++ {
		if !populate(base+k*chunk, chunk, madvPopulateWrite) {
			return
		}
	}
}

// code returns the executable's code: the read-only, executable mappings
// of the file that holds pc. Its read-only data is left alone: populating
// it too (18 MB here, with the embedded web app) cost more than its ~75
// faults (DenseNet-121 report 28.9–30.1 ms against 27.9–29.6).
func code(maps []byte, pc uintptr) []mapping {
	var path []byte
	for rest := maps; len(rest) > 0; {
		var m mapping
		m, rest = nextMapping(rest)
		if m.lo <= pc && pc < m.hi {
			path = m.path
			break
		}
	}
	if len(path) == 0 {
		return nil
	}
	var out []mapping
	for rest := maps; len(rest) > 0; {
		var m mapping
		m, rest = nextMapping(rest)
		if string(m.path) == string(path) && string(m.perms[:3]) == "r-x" {
			out = append(out, m)
		}
	}
	return out
}

// readMaps reads /proc/self/maps into buf (a static Go binary's has a few
// dozen lines), or returns nothing.
func readMaps(buf []byte) []byte {
	fd, err := syscall.Open("/proc/self/maps", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		k, err := syscall.Read(fd, buf[n:])
		if k <= 0 || err != nil {
			break
		}
		n += k
	}
	if n == len(buf) {
		// Cut at the last whole line.
		for n > 0 && buf[n-1] != '\n' {
			n--
		}
	}
	return buf[:n]
}

// mapping is one line of /proc/self/maps: "lo-hi perms offset dev inode path".
type mapping struct {
	lo, hi uintptr
	perms  [4]byte
	path   []byte
}

// nextMapping parses the first line of b; a malformed line gives a zero
// mapping.
func nextMapping(b []byte) (mapping, []byte) {
	line := b
	rest := b[len(b):]
	for i, c := range b {
		if c == '\n' {
			line, rest = b[:i], b[i+1:]
			break
		}
	}
	var m mapping
	fields := [6][]byte{}
	nf := 0
	for i := 0; i < len(line) && nf < 6; {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		j := i
		for j < len(line) && (line[j] != ' ' || nf == 5) {
			j++
		}
		if j > i {
			fields[nf] = line[i:j]
			nf++
		}
		i = j
	}
	if nf < 5 || len(fields[1]) != 4 {
		return mapping{}, rest
	}
	lo, r, ok1 := hex(fields[0])
	hi, r2, ok2 := hex(r[min(1, len(r)):])
	if !ok1 || !ok2 || len(r) == 0 || r[0] != '-' || len(r2) != 0 {
		return mapping{}, rest
	}
	m.lo, m.hi = lo, hi
	copy(m.perms[:], fields[1])
	if nf == 6 {
		m.path = fields[5]
	}
	return m, rest
}

// hex parses a leading hexadecimal number.
func hex(b []byte) (uintptr, []byte, bool) {
	var v uintptr
	i := 0
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		default:
			return v, b[i:], i > 0
		}
	}
	return v, b[i:], i > 0
}
