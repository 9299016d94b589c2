package ir

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/onnxcost/onnxcost/internal/safefile"
	"google.golang.org/protobuf/encoding/protowire"
)

// TensorProto field numbers that hold data. The writer uses them to find
// out, from the tag just before a tensor's bytes, how those bytes were
// encoded (see sourceEncoding).
const (
	tpFloatData  protowire.Number = 4
	tpInt32Data  protowire.Number = 5
	tpStringData protowire.Number = 6
	tpInt64Data  protowire.Number = 7
	tpRawData    protowire.Number = 9
	tpDoubleData protowire.Number = 10
	tpUint64Data protowire.Number = 11
)

// tensorParts collects a TensorProto's fields before dims are known (the
// field order in a file is free).
type tensorParts struct {
	t        *Tensor
	raw      pbField // raw_data, when hasRaw
	hasRaw   bool
	typed    []pbField // runs of the one typed data field the dtype uses
	typedNum protowire.Number
	typedCnt int64 // elements in the typed runs
	strings  [][]byte
	external []KeyValue
	location int64 // data_location: 1 = EXTERNAL
}

// typedField is the TensorProto field that holds values of dtype d when
// raw_data is not used, per onnx.proto.
func typedField(d DType) protowire.Number {
	switch d {
	case Float32, Complex64:
		return tpFloatData
	case Float64, Complex128:
		return tpDoubleData
	case Int64:
		return tpInt64Data
	case Uint32, Uint64:
		return tpUint64Data
	case String:
		return tpStringData
	}
	return tpInt32Data
}

// tensor decodes a TensorProto at absolute offset off. Values are decoded
// only when the tensor has at most Limits.SmallTensorElems elements;
// otherwise the tensor records where its bytes are.
func (r *reader) tensor(b []byte, off int64) (*Tensor, error) {
	return r.tensorCap(b, off, r.lim.SmallTensorElems)
}

func (r *reader) tensorCap(b []byte, off int64, small int64) (*Tensor, error) {
	return r.tensorRaw(b, off, small, nil)
}

// tensorRaw is tensorCap for a TensorProto whose raw_data field, when raw
// is not nil, was taken off the end of b (a cold initializer's head, see
// coldHead): b holds the fields before it.
func (r *reader) tensorRaw(b []byte, off int64, small int64, raw *pbField) (*Tensor, error) {
	if err := r.countObject(); err != nil {
		return nil, err
	}
	p := &tensorParts{t: &Tensor{}}
	t := p.t
	var fields []pbField // data fields, sorted out once the dtype is known
	err := r.walk(b, off, func(f *pbField) error {
		var err error
		switch f.num {
		case 1:
			var ok bool
			t.Dims, ok, err = r.appendInts(t.Dims, f, r.lim.MaxRank)
			if err == nil && !ok {
				err = fmt.Errorf("%s: tensor has more than %d dims (the limit)", r.where(), r.lim.MaxRank)
			}
		case 2:
			err = r.wantType(f, protowire.VarintType, "data_type")
			t.DType = DType(int32(f.x))
		case 8:
			t.Name, err = r.str(f, "name")
		case 13:
			var kv KeyValue
			kv, err = r.keyValue(f, "external_data", len(p.external))
			p.external = append(p.external, kv)
		case 14:
			err = r.wantType(f, protowire.VarintType, "data_location")
			p.location = int64(f.x)
		case tpRawData:
			if err = r.wantType(f, protowire.BytesType, "raw_data"); err == nil {
				p.raw, p.hasRaw = *f, true
			}
		case tpFloatData, tpInt32Data, tpStringData, tpInt64Data, tpDoubleData, tpUint64Data:
			fields = append(fields, *f)
		case 3:
			err = fmt.Errorf("%s: segmented tensors are not supported", r.where())
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if raw != nil {
		p.raw, p.hasRaw = *raw, true
	}
	n, err := r.checkDims(t.Dims)
	if err != nil {
		return nil, err
	}
	p.typedNum = typedField(t.DType)
	for i := range fields {
		if fields[i].num != p.typedNum {
			continue // a field the dtype does not use: ignored, like onnx
		}
		if err := r.addTyped(p, &fields[i], n); err != nil {
			return nil, err
		}
	}
	if err := r.tensorData(p, n, small); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	return t, nil
}

// checkDims validates dims against Limits and returns their product,
// computed without overflow.
func (r *reader) checkDims(dims []int64) (int64, error) {
	n := int64(1)
	for _, d := range dims {
		if err := r.checkDim(d); err != nil {
			return 0, err
		}
		hi, lo := bits.Mul64(uint64(n), uint64(d))
		if hi != 0 || lo > uint64(r.lim.MaxElements) {
			return 0, fmt.Errorf("%s: tensor dims %v hold more than %d elements (the limit)", r.where(), dims, r.lim.MaxElements)
		}
		n = int64(lo)
	}
	return n, nil
}

// addTyped records one run of the dtype's typed data field, counting its
// elements without decoding them.
func (r *reader) addTyped(p *tensorParts, f *pbField, n int64) error {
	switch p.typedNum {
	case tpStringData:
		if f.typ != protowire.BytesType {
			return fmt.Errorf("corrupt protobuf in %s: string_data has wire type %d", r.where(), f.typ)
		}
		p.typedCnt++
		if p.typedCnt <= n {
			p.strings = append(p.strings, f.b)
		}
		return nil
	case tpFloatData:
		return r.addFixed(p, f, 4)
	case tpDoubleData:
		return r.addFixed(p, f, 8)
	}
	switch f.typ {
	case protowire.VarintType:
		p.typedCnt++
	case protowire.BytesType:
		p.typedCnt += int64(countVarints(f.b))
	default:
		return fmt.Errorf("corrupt protobuf in %s: integer data has wire type %d", r.where(), f.typ)
	}
	p.typed = append(p.typed, *f)
	return nil
}

func (r *reader) addFixed(p *tensorParts, f *pbField, size int) error {
	switch {
	case size == 4 && f.typ == protowire.Fixed32Type, size == 8 && f.typ == protowire.Fixed64Type:
		p.typedCnt++
	case f.typ == protowire.BytesType:
		if len(f.b)%size != 0 {
			return fmt.Errorf("corrupt protobuf in %s: packed data of %d bytes is not a multiple of %d", r.where(), len(f.b), size)
		}
		p.typedCnt += int64(len(f.b) / size)
	default:
		return fmt.Errorf("corrupt protobuf in %s: float data has wire type %d", r.where(), f.typ)
	}
	p.typed = append(p.typed, *f)
	return nil
}

// typedCount is how many typed-field entries n elements of d take.
func typedCount(d DType, n int64) int64 {
	switch d {
	case Complex64, Complex128:
		return 2 * n
	case Int4, Uint4, Float4E2M1:
		return (n + 1) / 2 // two 4-bit values per int32_data entry
	}
	return n
}

// tensorData settles where a tensor's bytes are and, for small tensors,
// decodes them.
func (r *reader) tensorData(p *tensorParts, n, small int64) error {
	t := p.t
	fixed := t.DType.Bits() > 0
	switch {
	case p.location == 1:
		if p.hasRaw || p.typedCnt > 0 {
			return fmt.Errorf("stored externally and also holds data")
		}
		return r.external(p, n, small)
	case p.location != 0:
		return fmt.Errorf("unknown data_location %d", p.location)
	case p.hasRaw:
		if p.typedCnt > 0 {
			return fmt.Errorf("holds both raw_data and typed data")
		}
		if t.DType == String {
			return fmt.Errorf("string tensor stored in raw_data")
		}
		if want := t.DType.ByteSize(n); fixed && int64(len(p.raw.b)) != want {
			return fmt.Errorf("raw_data holds %d bytes, dims %v of %s need %d", len(p.raw.b), t.Dims, t.DType, want)
		}
		t.Loc = DataLocation{Offset: p.raw.off, Length: int64(len(p.raw.b))}
		if n <= small && fixed {
			return decodeRaw(t, p.raw.b, n)
		}
		return nil
	case p.typedCnt > 0:
		if want := typedCount(t.DType, n); p.typedCnt != want && t.DType.Valid() {
			return fmt.Errorf("holds %d data entries, dims %v of %s need %d", p.typedCnt, t.Dims, t.DType, want)
		}
		if len(p.typed) == 1 && p.typed[0].typ == protowire.BytesType {
			t.Loc = DataLocation{Offset: p.typed[0].off, Length: int64(len(p.typed[0].b))}
		} else {
			// Unpacked or split runs have no single byte range; the
			// writer re-encodes them only when their values were read.
			t.Loc = DataLocation{Offset: -1}
		}
		if n <= small {
			return r.decodeTyped(p, n)
		}
		return nil
	}
	if n == 0 {
		t.HasData = true // an empty tensor's contents are known
		return nil
	}
	return nil // no data at all: dims and dtype only
}

// decodeRaw decodes little-endian raw bytes of n elements into t.
func decodeRaw(t *Tensor, b []byte, n int64) error {
	d := t.DType
	switch {
	case d == Int4 || d == Uint4:
		t.Ints = make([]int64, n)
		for i := int64(0); i < n; i++ {
			t.Ints[i] = nibble(b[i/2], i%2 == 1, d == Int4)
		}
	case d == Float4E2M1:
		t.Floats = make([]float64, n)
		for i := int64(0); i < n; i++ {
			t.Floats[i] = float4e2m1(uint8(nibble(b[i/2], i%2 == 1, false)))
		}
	case d == Complex64 || d == Complex128:
		return nil // no shape computation reads complex values
	case d == Float32:
		// The common case, without leUint's loop and floatBits' switch
		// per element: 16 µs per 4096 elements, allocation included,
		// against 26.
		t.Floats = make([]float64, n)
		for i := range t.Floats {
			t.Floats[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	case d == Int64:
		t.Ints = make([]int64, n)
		for i := range t.Ints {
			t.Ints[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
	case d.IsFloat():
		t.Floats = make([]float64, n)
		size := int64(d.Bits() / 8)
		for i := int64(0); i < n; i++ {
			t.Floats[i] = floatBits(d, leUint(b[i*size:(i+1)*size]))
		}
	case d.IsInt() || d == Bool:
		t.Ints = make([]int64, n)
		size := int64(d.Bits() / 8)
		for i := int64(0); i < n; i++ {
			t.Ints[i] = intBits(d, leUint(b[i*size:(i+1)*size]))
		}
	default:
		return nil
	}
	t.HasData = true
	return nil
}

// decodeTyped decodes the typed data field runs of a small tensor.
func (r *reader) decodeTyped(p *tensorParts, n int64) error {
	t := p.t
	d := t.DType
	switch p.typedNum {
	case tpStringData:
		t.Strings = make([]string, len(p.strings))
		for i, s := range p.strings {
			t.Strings[i] = string(s)
		}
		t.HasData = true
		return nil
	case tpFloatData, tpDoubleData:
		if d == Complex64 || d == Complex128 {
			return nil
		}
		t.Floats = make([]float64, 0, n)
		for i := range p.typed {
			f := &p.typed[i]
			if f.typ != protowire.BytesType {
				t.Floats = append(t.Floats, floatBits(d, f.x))
				continue
			}
			size := 4
			if p.typedNum == tpDoubleData {
				size = 8
			}
			for j := 0; j+size <= len(f.b); j += size {
				t.Floats = append(t.Floats, floatBits(d, leUint(f.b[j:j+size])))
			}
		}
		t.HasData = true
		return nil
	}
	var raw []int64
	for i := range p.typed {
		var err error
		raw, _, err = r.appendInts(raw, &p.typed[i], math.MaxInt)
		if err != nil {
			return err
		}
	}
	switch {
	case d == Int4 || d == Uint4 || d == Float4E2M1:
		vals := make([]int64, n)
		for i := int64(0); i < n; i++ {
			vals[i] = nibble(byte(raw[i/2]), i%2 == 1, d == Int4)
		}
		if d == Float4E2M1 {
			t.Floats = make([]float64, n)
			for i, v := range vals {
				t.Floats[i] = float4e2m1(uint8(v))
			}
		} else {
			t.Ints = vals
		}
	case d.IsFloat(): // float16, bfloat16, float8: bits in int32_data
		t.Floats = make([]float64, len(raw))
		for i, v := range raw {
			t.Floats[i] = floatBits(d, uint64(v))
		}
	case d.IsInt() || d == Bool:
		t.Ints = make([]int64, len(raw))
		for i, v := range raw {
			t.Ints[i] = intBits(d, uint64(v))
		}
	default:
		return nil
	}
	t.HasData = true
	return nil
}

// leUint reads a little-endian unsigned integer of len(b) ≤ 8 bytes.
func leUint(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// nibble extracts a 4-bit value (the high one when hi), sign-extending it
// when signed.
func nibble(b byte, hi, signed bool) int64 {
	v := b & 0x0f
	if hi {
		v = b >> 4
	}
	if signed && v&0x8 != 0 {
		return int64(v) - 16
	}
	return int64(v)
}

// intBits interprets the low bits of u as an integer of dtype d: a bool is
// its one byte; int4/uint4 are unpacked by nibble before they get here.
func intBits(d DType, u uint64) int64 {
	if d == Bool {
		u &= 0xff
	}
	return WrapInt(int64(u), d)
}

// floatBits interprets the low bits of u as a float of dtype d.
func floatBits(d DType, u uint64) float64 {
	switch d {
	case Float32:
		return float64(math.Float32frombits(uint32(u)))
	case Float64:
		return math.Float64frombits(u)
	case Float16:
		return float16(uint16(u))
	case BFloat16:
		return float64(math.Float32frombits(uint32(uint16(u)) << 16))
	case Float8E4M3FN:
		b := uint8(u)
		if b&0x7f == 0x7f {
			return math.NaN()
		}
		return minifloat(b, 3, 7, false)
	case Float8E4M3FNUZ:
		if uint8(u) == 0x80 {
			return math.NaN()
		}
		return minifloat(uint8(u), 3, 8, false)
	case Float8E5M2:
		return minifloat(uint8(u), 2, 15, true)
	case Float8E5M2FNUZ:
		if uint8(u) == 0x80 {
			return math.NaN()
		}
		return minifloat(uint8(u), 2, 16, false)
	}
	return math.NaN()
}

// float16 decodes IEEE 754 half precision.
func float16(h uint16) float64 {
	return minifloatN(uint64(h), 16, 10, 15, true)
}

// float4e2m1 decodes the 4-bit E2M1 format (no inf, no NaN).
func float4e2m1(v uint8) float64 {
	return minifloatN(uint64(v), 4, 1, 1, false)
}

// minifloat decodes an 8-bit float with mant mantissa bits and the given
// exponent bias; ieee means the all-ones exponent is inf/NaN.
func minifloat(b uint8, mant, bias int, ieee bool) float64 {
	return minifloatN(uint64(b), 8, mant, bias, ieee)
}

func minifloatN(u uint64, width, mant, bias int, ieee bool) float64 {
	sign := 1.0
	if u>>(width-1)&1 == 1 {
		sign = -1
	}
	expBits := width - 1 - mant
	e := int(u>>mant) & (1<<expBits - 1)
	m := float64(u & (1<<mant - 1))
	switch {
	case ieee && e == 1<<expBits-1:
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	case e == 0:
		return sign * math.Ldexp(m, 1-bias-mant)
	}
	return sign * math.Ldexp(m+float64(int(1)<<mant), e-bias-mant)
}

// sparseTensor decodes a SparseTensorProto as a tensor with the dense dims
// and the values' dtype. Its values are never read; Loc spans the whole
// SparseTensorProto so the writer can copy it unchanged.
func (r *reader) sparseTensor(b []byte, off int64) (*Tensor, error) {
	if err := r.countObject(); err != nil {
		return nil, err
	}
	t := &Tensor{Loc: DataLocation{Offset: off, Length: int64(len(b))}}
	err := r.walk(b, off, func(f *pbField) error {
		switch f.num {
		case 3:
			var ok bool
			var err error
			t.Dims, ok, err = r.appendInts(t.Dims, f, r.lim.MaxRank)
			if err == nil && !ok {
				err = fmt.Errorf("%s: sparse tensor has more than %d dims (the limit)", r.where(), r.lim.MaxRank)
			}
			return err
		case 1: // values: name and dtype only
			if err := r.wantType(f, protowire.BytesType, "values"); err != nil {
				return err
			}
			r.push("values", -1)
			defer r.pop()
			return r.walk(f.b, f.off, func(g *pbField) error {
				var err error
				switch g.num {
				case 2:
					err = r.wantType(g, protowire.VarintType, "data_type")
					t.DType = DType(int32(g.x))
				case 8:
					t.Name, err = r.str(g, "name")
				}
				return err
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := r.checkDims(t.Dims); err != nil {
		return nil, err
	}
	return t, nil
}

// maxTensorFileElems caps how many values ReadTensorFile decodes; larger
// tensors come back with dims and dtype only.
const maxTensorFileElems = 1 << 24

// maxTensorFileBytes bounds the file ReadTensorFile reads whole: 2^24
// values of the widest type (complex128) are 256 MiB, and a graph input's
// data is rarely more than a few MB.
const maxTensorFileBytes = 1 << 30

// ReadTensorFile reads a serialized TensorProto (such as the conformance
// suite's input_N.pb and output_N.pb) and decodes its values, up to 2^24
// elements. External data resolves against the file's folder.
func ReadTensorFile(path string) (*Tensor, error) {
	f, fi, err := openModel(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := safefile.ReadAll(f, fi, path, maxTensorFileBytes)
	if err != nil {
		return nil, err
	}
	lim := DefaultLimits
	r := &reader{data: data, lim: &lim, ext: newExtFiles(dirOf(path))}
	defer r.ext.close()
	r.push("TensorProto", -1)
	return r.tensorCap(data, 0, maxTensorFileElems)
}

// putLE appends v as a little-endian integer of size bytes.
func putLE(b []byte, v uint64, size int) []byte {
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], v)
	return append(b, buf[:size]...)
}
