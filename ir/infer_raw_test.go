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
