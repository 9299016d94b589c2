package ir

import (
	"math/rand"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestRawAgreesMatchesDecode: comparing an encoded value_info type as it
// is read gives the same verdict as decoding it and comparing, on random
// declared and inferred types (ranks, dtypes, numbers and symbols, dims
// given twice, missing shapes).
func TestRawAgreesMatchesDecode(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	dtypes := []DType{Undefined, Float32, Float16, Int64}
	e := &inferer{}
	checked := 0
	for trial := 0; trial < 20000; trial++ {
		// The declared type, encoded.
		var dims []byte
		rank := rng.Intn(4)
		for range rank {
			var dim []byte
			for k := 1 + rng.Intn(2); k > 0; k-- { // sometimes both fields
				if rng.Intn(3) == 0 {
					dim = protowire.AppendTag(dim, 2, protowire.BytesType)
					dim = protowire.AppendString(dim, []string{"batch", "seq"}[rng.Intn(2)])
				} else {
					dim = protowire.AppendTag(dim, 1, protowire.VarintType)
					dim = protowire.AppendVarint(dim, uint64(1+rng.Intn(3)))
				}
			}
			dims = protowire.AppendTag(dims, 1, protowire.BytesType)
			dims = protowire.AppendBytes(dims, dim)
		}
		var tt []byte
		if d := dtypes[rng.Intn(len(dtypes))]; d != Undefined {
			tt = protowire.AppendTag(tt, 1, protowire.VarintType)
			tt = protowire.AppendVarint(tt, uint64(d))
		}
		if rng.Intn(5) > 0 {
			tt = protowire.AppendTag(tt, 2, protowire.BytesType)
			tt = protowire.AppendBytes(tt, dims)
		}
		raw := protowire.AppendTag(nil, 1, protowire.BytesType)
		raw = protowire.AppendBytes(raw, tt)

		// The inferred type.
		v := &Value{Kind: TensorValue, DType: dtypes[rng.Intn(len(dtypes))], Shape: Unranked()}
		if rng.Intn(5) > 0 {
			var ds []Dim
			for k := rank + rng.Intn(3) - 1; k > 0; k-- {
				if rng.Intn(3) == 0 {
					ds = append(ds, S("n"))
				} else {
					ds = append(ds, D(int64(1+rng.Intn(3))))
				}
			}
			v.Shape = RankedShape(ds...)
		}

		var dec infoDecoder
		ti := dec.decode(string(raw))
		want := !e.disagrees(v, &ti)
		got, ok := rawAgrees(string(raw), v)
		if !ok {
			continue
		}
		checked++
		if got != want {
			t.Fatalf("trial %d: declared %v %v, inferred %v %v: rawAgrees %v, decode says %v", trial, ti.DType, ti.Shape, v.DType, v.Shape, got, want)
		}
	}
	if checked < 15000 {
		t.Fatalf("only %d of 20000 types took the fast path", checked)
	}
}

// TestCheckPlainTypeMatchesReader: a type the quick check accepts is one
// the reader's full decode accepts with no unknown dim, on random types
// with defects (negative and huge dims, empty symbols, too many dims,
// wrong wire types, extra fields).
func TestCheckPlainTypeMatchesReader(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	lim := DefaultLimits
	lim.MaxRank = 5
	accepted := 0
	for trial := 0; trial < 20000; trial++ {
		var dims []byte
		for k := rng.Intn(7); k > 0; k-- {
			var dim []byte
			switch rng.Intn(8) {
			case 0:
				dim = protowire.AppendTag(dim, 2, protowire.BytesType)
				dim = protowire.AppendString(dim, "")
			case 1:
				dim = protowire.AppendTag(dim, 1, protowire.VarintType)
				dim = protowire.AppendVarint(dim, ^uint64(0)) // -1
			case 2:
				dim = protowire.AppendTag(dim, 1, protowire.Fixed32Type)
				dim = protowire.AppendFixed32(dim, 3)
			case 3:
				dim = protowire.AppendTag(dim, 3, protowire.BytesType) // denotation only
				dim = protowire.AppendString(dim, "DATA_BATCH")
			case 4:
				dim = protowire.AppendTag(dim, 2, protowire.BytesType)
				dim = protowire.AppendString(dim, "batch")
			default:
				dim = protowire.AppendTag(dim, 1, protowire.VarintType)
				dim = protowire.AppendVarint(dim, uint64(rng.Int63n(2*lim.MaxDim)))
			}
			dims = protowire.AppendTag(dims, 1, protowire.BytesType)
			dims = protowire.AppendBytes(dims, dim)
		}
		var tt []byte
		tt = protowire.AppendTag(tt, 1, protowire.VarintType)
		tt = protowire.AppendVarint(tt, 1)
		if rng.Intn(6) > 0 {
			tt = protowire.AppendTag(tt, 2, protowire.BytesType)
			tt = protowire.AppendBytes(tt, dims)
		}
		raw := protowire.AppendTag(nil, 1, protowire.BytesType)
		raw = protowire.AppendBytes(raw, tt)
		if rng.Intn(10) == 0 {
			raw = raw[:len(raw)-1] // truncated
		}

		r := &reader{data: raw, lim: &lim}
		quick := r.checkPlainType(raw)
		ti, err := r.typeProto(raw, 0, 0)
		if quick {
			accepted++
			if err != nil || r.unknownDims != 0 {
				t.Fatalf("trial %d: quick check accepts % x; reader: %v, %d unknown dims", trial, raw, err, r.unknownDims)
			}
			var dec infoDecoder
			if got := dec.decode(string(raw)); got.DType != ti.DType || !got.Shape.Equal(ti.Shape) || got.Shape.Ranked != ti.Shape.Ranked {
				t.Fatalf("trial %d: kept encoded it decodes to %v %v, read %v %v", trial, got.DType, got.Shape, ti.DType, ti.Shape)
			}
		}
	}
	if accepted < 2000 {
		t.Fatalf("only %d types passed the quick check", accepted)
	}
}
