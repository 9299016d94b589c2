package ir

import "fmt"

// DType is an ONNX tensor element type. The numeric values are those of
// onnx.TensorProto.DataType so that decoding is a cast, not a lookup.
type DType int32

const (
	Undefined      DType = 0
	Float32        DType = 1
	Uint8          DType = 2
	Int8           DType = 3
	Uint16         DType = 4
	Int16          DType = 5
	Int32          DType = 6
	Int64          DType = 7
	String         DType = 8
	Bool           DType = 9
	Float16        DType = 10
	Float64        DType = 11
	Uint32         DType = 12
	Uint64         DType = 13
	Complex64      DType = 14
	Complex128     DType = 15
	BFloat16       DType = 16
	Float8E4M3FN   DType = 17
	Float8E4M3FNUZ DType = 18
	Float8E5M2     DType = 19
	Float8E5M2FNUZ DType = 20
	Uint4          DType = 21
	Int4           DType = 22
	Float4E2M1     DType = 23
)

type dtypeInfo struct {
	name string
	bits int // storage bits per element; 0 for variable-size (string)
}

var dtypeTable = map[DType]dtypeInfo{
	Undefined:      {"undefined", 0},
	Float32:        {"float32", 32},
	Uint8:          {"uint8", 8},
	Int8:           {"int8", 8},
	Uint16:         {"uint16", 16},
	Int16:          {"int16", 16},
	Int32:          {"int32", 32},
	Int64:          {"int64", 64},
	String:         {"string", 0},
	Bool:           {"bool", 8},
	Float16:        {"float16", 16},
	Float64:        {"float64", 64},
	Uint32:         {"uint32", 32},
	Uint64:         {"uint64", 64},
	Complex64:      {"complex64", 64},
	Complex128:     {"complex128", 128},
	BFloat16:       {"bfloat16", 16},
	Float8E4M3FN:   {"float8e4m3fn", 8},
	Float8E4M3FNUZ: {"float8e4m3fnuz", 8},
	Float8E5M2:     {"float8e5m2", 8},
	Float8E5M2FNUZ: {"float8e5m2fnuz", 8},
	Uint4:          {"uint4", 4},
	Int4:           {"int4", 4},
	Float4E2M1:     {"float4e2m1", 4},
}

// String returns the lower-case name used in dumps and JSON ("float32").
func (d DType) String() string {
	if info, ok := dtypeTable[d]; ok {
		return info.name
	}
	return fmt.Sprintf("dtype(%d)", int32(d))
}

// Valid reports whether d is a type ONNX defines.
func (d DType) Valid() bool { _, ok := dtypeTable[d]; return ok }

// Bits is the storage size of one element in bits (4 for int4, 0 for string
// and undefined, whose size is not fixed).
func (d DType) Bits() int { return dtypeTable[d].bits }

// ByteSize is the number of bytes n elements of d occupy, rounding packed
// 4-bit types up to whole bytes.
func (d DType) ByteSize(n int64) int64 { return (n*int64(d.Bits()) + 7) / 8 }

// IsFloat reports whether d is a floating-point type of any width.
func (d DType) IsFloat() bool {
	switch d {
	case Float32, Float16, Float64, BFloat16, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float4E2M1:
		return true
	}
	return false
}

// IsInt reports whether d is a signed or unsigned integer type.
func (d DType) IsInt() bool {
	switch d {
	case Uint8, Int8, Uint16, Int16, Int32, Int64, Uint32, Uint64, Uint4, Int4:
		return true
	}
	return false
}

// ParseDType accepts the names String returns and the ONNX spellings
// ("float", "double", "FLOAT16").
func ParseDType(s string) (DType, error) {
	for d, info := range dtypeTable {
		if info.name == s {
			return d, nil
		}
	}
	switch s {
	case "float", "FLOAT", "fp32":
		return Float32, nil
	case "double", "DOUBLE", "fp64":
		return Float64, nil
	case "half", "FLOAT16", "fp16":
		return Float16, nil
	case "BFLOAT16", "bf16":
		return BFloat16, nil
	}
	return Undefined, fmt.Errorf("unknown dtype %q", s)
}
