package ir

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// This file is the wire layer of the ONNX reader: it walks the fields of
// one protobuf message without allocating per field, and turns protowire's
// negative length codes into errors that say where in the model the bytes
// went wrong ("truncated protobuf in ModelProto.graph.node[12]").

// pbField is one decoded field of a message. For length-delimited fields,
// b is the payload (a sub-slice of the input, never a copy) and off its
// absolute offset in the input; for varint and fixed fields, x holds the
// value.
type pbField struct {
	num protowire.Number
	typ protowire.Type
	x   uint64
	b   []byte
	off int64
}

// pathElem is one step of the position the reader is at, for messages.
type pathElem struct {
	name string
	idx  int // -1 when the field is not repeated
}

// wherePath renders the reader's position as "ModelProto.graph.node[12]".
func wherePath(path []pathElem) string {
	var b strings.Builder
	for i, p := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p.name)
		if p.idx >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(p.idx))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// wireWalker iterates over the fields of messages, tracking the position
// for error messages.
type wireWalker struct {
	path []pathElem

	// fields holds the current field of each nested walk, in chunks that
	// never move: walk hands its callback a pointer, and a local would
	// escape to the heap, one allocation per message (three per node).
	fields []*[fieldChunk]pbField
	depth  int
}

const fieldChunk = 16

// field returns the field slot of the next walk nesting level.
func (w *wireWalker) field() *pbField {
	c, i := w.depth/fieldChunk, w.depth%fieldChunk
	if c == len(w.fields) {
		w.fields = append(w.fields, new([fieldChunk]pbField))
	}
	w.depth++
	return &w.fields[c][i]
}

func (w *wireWalker) push(name string, idx int) { w.path = append(w.path, pathElem{name, idx}) }
func (w *wireWalker) pop()                      { w.path = w.path[:len(w.path)-1] }
func (w *wireWalker) where() string             { return wherePath(w.path) }

// each calls f for i in [0, n) with field[i] pushed on the path, so that
// the errors of a repeated field's elements say which element failed.
func (w *wireWalker) each(field string, n int, f func(i int) error) error {
	for i := 0; i < n; i++ {
		w.push(field, i)
		err := f(i)
		w.pop()
		if err != nil {
			return err
		}
	}
	return nil
}

// wireErr converts a protowire error code into an error naming the place.
func (w *wireWalker) wireErr(code int) error {
	err := protowire.ParseError(code)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated protobuf in %s", w.where())
	}
	return fmt.Errorf("corrupt protobuf in %s: %w", w.where(), err)
}

// walk calls fn for every field of the message in b, whose first byte is
// at absolute offset off. Groups (deprecated, never used by ONNX) are
// skipped with protowire's own bounded recursion.
func (w *wireWalker) walk(b []byte, off int64, fn func(f *pbField) error) error {
	f := w.field()
	defer func() { w.depth-- }()
	pos := 0
	for pos < len(b) {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			return w.wireErr(n)
		}
		pos += n
		*f = pbField{num: num, typ: typ}
		switch typ {
		case protowire.VarintType, protowire.Fixed32Type, protowire.Fixed64Type:
			v, m := consumeScalar(typ, b[pos:])
			if m < 0 {
				return w.wireErr(m)
			}
			f.x = v
			pos += m
		case protowire.BytesType:
			v, m := protowire.ConsumeBytes(b[pos:])
			if m < 0 {
				return w.wireErr(m)
			}
			f.b = v
			f.off = off + int64(pos+m-len(v))
			pos += m
		case protowire.StartGroupType:
			m := protowire.ConsumeFieldValue(num, typ, b[pos:])
			if m < 0 {
				return w.wireErr(m)
			}
			pos += m
			continue // ONNX has no groups: skip as an unknown field
		default:
			return fmt.Errorf("corrupt protobuf in %s: invalid wire type %d", w.where(), typ)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// consumeScalar reads a varint, fixed32 or fixed64 field value (typ says
// which) widened to uint64, with protowire's length or negative error code.
func consumeScalar(typ protowire.Type, b []byte) (uint64, int) {
	switch typ {
	case protowire.Fixed32Type:
		v, n := protowire.ConsumeFixed32(b)
		return uint64(v), n
	case protowire.Fixed64Type:
		return protowire.ConsumeFixed64(b)
	}
	return protowire.ConsumeVarint(b)
}

// wantType checks a known field's wire type, so that a string field
// encoded as a varint is an error rather than silently empty.
func (w *wireWalker) wantType(f *pbField, typ protowire.Type, field string) error {
	if f.typ != typ {
		return fmt.Errorf("corrupt protobuf in %s: field %s has wire type %d, want %d", w.where(), field, f.typ, typ)
	}
	return nil
}

// appendInts decodes a repeated int64/int32/uint64 field that may be
// packed (one length-delimited run) or not (one varint per field), adding
// at most max values; more is an error returned as ok=false so the caller
// can name its own limit.
func (w *wireWalker) appendInts(dst []int64, f *pbField, max int) (out []int64, ok bool, err error) {
	switch f.typ {
	case protowire.VarintType:
		if len(dst) >= max {
			return dst, false, nil
		}
		return append(dst, int64(f.x)), true, nil
	case protowire.BytesType:
		// Count before allocating: a varint ends at each byte < 0x80.
		cnt := countVarints(f.b)
		if len(dst)+cnt > max {
			return dst, false, nil
		}
		b := f.b
		for len(b) > 0 {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return dst, true, w.wireErr(n)
			}
			dst = append(dst, int64(v))
			b = b[n:]
		}
		return dst, true, nil
	}
	return dst, true, fmt.Errorf("corrupt protobuf in %s: integer field has wire type %d", w.where(), f.typ)
}

// countVarints counts the varints in a packed run without decoding them.
func countVarints(b []byte) int {
	n := 0
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	return n
}
