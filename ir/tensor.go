package ir

// Tensor describes a constant tensor: an initializer, a Constant node's
// value, an attribute, or a value computed by shape inference. Its bytes
// are never copied to estimate cost: large tensors carry only where their
// data lives; small ones (see Limits.SmallTensorElems) also carry their
// decoded values because shape inference needs them (shapes, axes, pads).
type Tensor struct {
	Name  string
	DType DType
	Dims  []int64

	// Loc says where the raw bytes are, when the tensor came from a file.
	Loc DataLocation

	// Decoded values in row-major order, set only for small tensors.
	// Integer and bool tensors fill Ints; floating-point tensors fill
	// Floats; string tensors fill Strings. HasData tells an empty tensor
	// with known contents from a tensor whose contents were not read.
	Ints    []int64
	Floats  []float64
	Strings []string
	HasData bool
}

// DataLocation locates a tensor's raw bytes without holding them.
type DataLocation struct {
	// File is "" for bytes inside the model file, else the external data
	// path relative to the model's folder.
	File   string
	Offset int64
	Length int64
	// Missing is set when the tensor names an external file that is not
	// present: normal for graph-only models shared without weights.
	Missing bool
}

// NumElements is the product of Dims (1 for a scalar).
func (t *Tensor) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// ByteSize is the storage size of the tensor's elements.
func (t *Tensor) ByteSize() int64 { return t.DType.ByteSize(t.NumElements()) }

// Shape returns the tensor's dims as a known Shape.
func (t *Tensor) Shape() Shape { return KnownShape(t.Dims...) }

// IntTensor builds a small int64 tensor with known values; shape functions
// use it to propagate computed shapes.
func IntTensor(dims []int64, vals []int64) *Tensor {
	return &Tensor{DType: Int64, Dims: append([]int64(nil), dims...), Ints: vals, HasData: true}
}

// FloatTensor builds a small floating-point tensor with known values.
func FloatTensor(dt DType, dims []int64, vals []float64) *Tensor {
	return &Tensor{DType: dt, Dims: append([]int64(nil), dims...), Floats: vals, HasData: true}
}
