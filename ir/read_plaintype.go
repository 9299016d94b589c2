package ir

import "google.golang.org/protobuf/encoding/protowire"

// plainType is a TypeProto of the form nearly every value_info entry has:
// a tensor type with at most one elem_type and at most one shape. The
// reader checks such entries, and inference compares them, straight from
// their bytes (see valueInfoEntry and rawAgrees): on a 112k-node graph,
// decoding them through the general walker was a fifth of loading.
type plainType struct {
	dtype  DType
	ranked bool
	shape  []byte // the TensorShapeProto payload when ranked
}

// parsePlainType parses b as a plainType; false for any other form
// (decode it with the reader then, which also says what is wrong).
func parsePlainType(b []byte) (plainType, bool) {
	var p plainType
	tt, ok := onlyField(b, 1)
	if !ok {
		return p, false
	}
	seenType := false
	for len(tt) > 0 {
		num, typ, n := protowire.ConsumeTag(tt)
		if n < 0 {
			return p, false
		}
		tt = tt[n:]
		switch {
		case num == 1 && typ == protowire.VarintType && !seenType:
			x, m := protowire.ConsumeVarint(tt)
			if m < 0 {
				return p, false
			}
			p.dtype, seenType, tt = DType(int32(x)), true, tt[m:]
		case num == 2 && typ == protowire.BytesType && !p.ranked:
			s, m := protowire.ConsumeBytes(tt)
			if m < 0 {
				return p, false
			}
			p.shape, p.ranked, tt = s, true, tt[m:]
		default:
			return p, false
		}
	}
	return p, true
}

// eachDim calls fn for each dimension of a ranked plainType, read as the
// reader reads it: the last of dim_value and dim_param wins (known is false
// for a symbol, whose name is sym; an empty sym is an unknown dim). It
// returns false when fn does, or when the shape is not of the plain form.
func (p plainType) eachDim(fn func(value int64, known bool, sym []byte) bool) bool {
	shape := p.shape
	for len(shape) > 0 {
		num, typ, n := protowire.ConsumeTag(shape)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			return false
		}
		dim, m := protowire.ConsumeBytes(shape[n:])
		if m < 0 {
			return false
		}
		shape = shape[n+m:]
		var value int64
		var sym []byte
		known := false
		for len(dim) > 0 {
			num, typ, n := protowire.ConsumeTag(dim)
			if n < 0 {
				return false
			}
			rest := dim[n:]
			switch {
			case num == 1 && typ == protowire.VarintType:
				x, m := protowire.ConsumeVarint(rest)
				if m < 0 {
					return false
				}
				value, known, sym, dim = int64(x), true, nil, rest[m:]
			case num == 2 && typ == protowire.BytesType:
				s, m := protowire.ConsumeBytes(rest)
				if m < 0 {
					return false
				}
				value, known, sym, dim = 0, false, s, rest[m:]
			case num == 1 || num == 2:
				return false // a wrong wire type: the reader reports it
			default:
				m := protowire.ConsumeFieldValue(num, typ, rest)
				if m < 0 {
					return false
				}
				dim = rest[m:]
			}
		}
		if !fn(value, known, sym) {
			return false
		}
	}
	return true
}

// onlyField returns the payload of b's single field, when that is the
// length-delimited field num.
func onlyField(b []byte, num protowire.Number) ([]byte, bool) {
	n, typ, k := protowire.ConsumeTag(b)
	if k < 0 || n != num || typ != protowire.BytesType {
		return nil, false
	}
	p, m := protowire.ConsumeBytes(b[k:])
	return p, m >= 0 && k+m == len(b)
}

// checkPlainType reports whether b is a plainType the reader would accept
// as it is, with no dim it would number as unknown ("?unk_N"): every dim a
// number within the limits or a named symbol, the rank within the limit.
func (r *reader) checkPlainType(b []byte) bool {
	p, ok := parsePlainType(b)
	if !ok {
		return false
	}
	rank := 0
	return p.eachDim(func(value int64, known bool, sym []byte) bool {
		rank++
		if rank > r.lim.MaxRank {
			return false
		}
		if known {
			return value >= 0 && value <= r.lim.MaxDim
		}
		return len(sym) > 0
	})
}
