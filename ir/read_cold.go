package ir

import (
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// Weights-heavy files: reading the main graph's initializers without
// touching the mapped pages around them.
//
// An exported CNN interleaves each large weight with the small tensors
// between it and the next one (biases, norm parameters): the bytes the reader
// needs — every initializer's tag, dims, dtype and name, and the small
// tensors' values — sit one per page, at the end of the previous weight's
// payload. Touching each through the mapping costs one page fault, and on a
// virtualised machine a fault costs 15–60 µs (DenseNet-121: ~120 of them,
// 3.5–4 ms of a 40 ms report; the same model with its weights in a side file
// reports in 36.6 ms instead of 40.5). Those bytes are read with pread
// instead, a few hundred bytes per weight: every field of the main graph
// that follows a large payload is read that way until a field that is
// decoded from the mapping anyway (a node, an input) makes its page warm.
//
// Anything unexpected (a group, a length past the end, a tensor whose
// raw_data is not its last field) leaves the field to the mapping, or the
// whole graph to the ordinary walk, which reports malformed bytes as
// before; readCold_test.go checks that both ways give the same model.

const (
	// coldPayload is the smallest payload ReadFile skips as cold. Larger
	// than any tensor the reader decodes (SmallTensorElems elements of at
	// most 16 bytes), so a cold weight's values are never read (the tests
	// use smaller ones, which decode them through raw as well).
	coldPayload = 64<<10 + 1
	// coldHead is how much of a large initializer is read to find its
	// fields before raw_data (dims, dtype, name: tens of bytes in practice).
	coldHead = 512
	// coldMinFile is the smallest file read this way: below it the whole
	// file is a few pages.
	coldMinFile = 1 << 20
	// coldMaxFields is the most fields listTop lists before it leaves the
	// graph to the walk: a graph with more is structure-heavy, and its list
	// costs more than the faults it saves (the 112k-node LLaMA graph's
	// growing list took `report` from 0.70 to 1.23 s). Exported CNNs have
	// a few hundred to two thousand (DenseNet-121: 810).
	coldMaxFields = 4096
)

// coldInit is an initializer decoded from the file instead of the mapping.
// A large one keeps its fields before raw_data in b and raw_data as raw, a
// slice of the mapping that is never read. A small one (raw nil) is read
// again when it is decoded, into a buffer every small one reuses: copies
// kept side by side took more fresh pages (77, DenseNet-121) than the
// mapping's faults they saved, as each of those maps 64 KB around it.
type coldInit struct {
	b   []byte
	raw *pbField
}

// topField is one field of the main graph with, for an initializer, its
// copy when it was read cold.
type topField struct {
	f    pbField
	cold *coldInit
}

// listTop lists the fields of the main GraphProto (b, at absolute offset
// off in r.data) reading cold bytes through r.src. ok is false when the
// bytes hold anything listTop does not handle; the caller then walks b as
// usual.
func (r *reader) listTop(b []byte, off int64) (fields []topField, ok bool) {
	var hdr [2 * binaryMaxVarint]byte
	end := off + int64(len(b))
	cold := false
	fields = make([]topField, 0, 1024)
	for pos := off; pos < end; {
		if len(fields) == coldMaxFields {
			return nil, false
		}
		// The tag and, for bytes, the length: from the file when cold.
		h := r.data[pos:min(end, pos+int64(len(hdr)))]
		if cold {
			n, err := r.src.ReadAt(hdr[:len(h)], pos)
			if n != len(h) && err != nil {
				return nil, false
			}
			h = hdr[:len(h)]
		}
		num, typ, n := protowire.ConsumeTag(h)
		if n < 0 {
			return nil, false
		}
		t := topField{f: pbField{num: num, typ: typ}}
		switch typ {
		case protowire.VarintType, protowire.Fixed32Type, protowire.Fixed64Type:
			v, m := consumeScalar(typ, h[n:])
			if m < 0 {
				return nil, false
			}
			t.f.x = v
			pos += int64(n + m)
			fields = append(fields, t)
			continue
		case protowire.BytesType:
		default:
			return nil, false
		}
		l, m := protowire.ConsumeVarint(h[n:])
		if m < 0 || l > uint64(end-pos-int64(n+m)) {
			return nil, false
		}
		po, pl := pos+int64(n+m), int64(l)
		t.f.off, t.f.b = po, r.data[po:po+pl:po+pl]
		pos = po + pl
		switch {
		case num == 5 && pl >= r.coldMin:
			t.cold = r.coldHead(po, pl)
			cold = true // the page after a large payload holds only cold bytes
		case num == 5 && cold:
			t.cold = &coldInit{}
		default:
			cold = false // decoded from the mapping: its page is warm anyway
		}
		fields = append(fields, t)
	}
	return fields, true
}

// binaryMaxVarint is the longest varint, in bytes.
const binaryMaxVarint = 10

// coldHead reads the fields of a large initializer that come before its
// raw_data. It returns nil (decode from the mapping) unless raw_data is the
// payload's last field and every field before it lies in the head read.
func (r *reader) coldHead(po, pl int64) *coldInit {
	var head [coldHead]byte
	h := head[:min(pl, coldHead)]
	if n, err := r.src.ReadAt(h, po); n != len(h) && err != nil {
		return nil
	}
	for k := 0; k < len(h); {
		num, typ, n := protowire.ConsumeTag(h[k:])
		if n < 0 {
			return nil
		}
		if num == tpRawData && typ == protowire.BytesType {
			l, m := protowire.ConsumeVarint(h[k+n:])
			if m < 0 || l > uint64(pl) {
				return nil
			}
			rawOff := po + int64(k+n+m)
			if rawOff+int64(l) != po+pl {
				return nil
			}
			b := r.coldBytes(k)
			copy(b, h[:k])
			raw := &pbField{num: num, typ: typ, off: rawOff, b: r.data[rawOff : rawOff+int64(l) : rawOff+int64(l)]}
			return &coldInit{b: b, raw: raw}
		}
		m := protowire.ConsumeFieldValue(num, typ, h[k+n:])
		if m < 0 {
			return nil
		}
		k += n + m
	}
	return nil
}

// coldTensor decodes a cold initializer whose payload is b's field at
// absolute offset off (see coldInit).
func (r *reader) coldTensor(c *coldInit, off, n int64) (*Tensor, error) {
	if c.raw != nil {
		return r.tensorRaw(c.b, off, r.lim.SmallTensorElems, c.raw)
	}
	if int64(cap(r.coldBuf)) < n {
		// Once, at the most a small one can take (it is smaller than
		// coldPayload): growing it to each larger size allocated 0.18 MB
		// of fresh pages per DenseNet-121 read; untouched pages cost
		// nothing.
		r.coldBuf = make([]byte, max(n, coldPayload))
	}
	b := r.coldBuf[:n]
	if k, err := r.src.ReadAt(b, off); int64(k) != n && err != nil {
		if err == io.EOF { // the bytes were inside the file when it was mapped
			err = ErrFileChanged
		}
		return nil, fmt.Errorf("reading %d bytes at offset %d: %w", n, off, err)
	}
	// Nothing may point into the reused buffer: names are copied.
	share := r.share
	r.share = false
	defer func() { r.share = share }()
	return r.tensor(b, off)
}

// coldBytes hands out n bytes of the head slab.
func (r *reader) coldBytes(n int) []byte {
	if n > len(r.coldSlab) {
		r.coldSlab = make([]byte, max(n, 4<<10))
	}
	b := r.coldSlab[:n:n]
	r.coldSlab = r.coldSlab[n:]
	return b
}
