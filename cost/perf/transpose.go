package perf

import "github.com/onnxcost/onnxcost/hwdb"

// cuDNN hands an NCHW tensor to its NHWC tensor-core kernels through a
// layout transpose of its own (cudnn::engines_precompiled::
// nchwToNhwcKernel and nhwcToNchwKernel): each image's C × (H·W) matrix
// goes through shared memory in 32×32 tiles. Our H200's conv-choice
// sweep (testdata/measured/h200_sxm_conv_choices.csv, fp16 NCHW rows)
// times those kernels at 2.0-2.5 TB/s of reads and writes whatever their
// size, 6 MB (which L2 holds) to 822 MB, against the 4.3 TB/s a copy
// streams on that board: an element's shared-memory round trip, not the
// DRAM, sets the pace. Where a side of the matrix is shorter than the
// tile (a 3×3 filter's 9 taps, an RGB image's 3 channels), the tile's
// idle lanes cost as much as busy ones.
//
// transposeElementCycles is the SM cycles an element costs in a full
// tile, FITTED: the median over the 12 activation transposes (input and
// output) of the sweep's batch-32 fp16 NCHW rows that last over 10 µs,
// 0.48 cycles (0.43-0.53). Held out: the batch-128 rows' 4 (0.42-0.49);
// the 3×3 filters' transposes, tile-adjusted (9 of 32 lanes), of 4.7 MB
// 0.42-0.46, of 1.2-2.4 MB 0.53-0.62 (their launch floor besides);
// VGG-16's RGB input (3 of 32 channels) 0.35. Per element, as the
// kernel's shared-memory accesses are: an fp32 transpose at this rate
// moves 8 bytes an element and stays memory-bound on every HBM board in
// hwdb (no fp32 NCHW tensor-core transpose is traced).
const transposeElementCycles = 0.48

// transposeTile is the side of the shared-memory tile the transpose
// kernel moves.
const transposeTile = 32

// TransposeElements is the tile-weighted element count of a layout
// transpose of elements elements that moves rows × cols matrices (C ×
// H·W for an activation, C × R·S for a KCRS filter): each side shorter
// than transposeTile is charged as a whole tile side. The sum over
// several transposes is their Kernel.TransposeElements.
func TransposeElements(elements, rows, cols float64) float64 {
	if !(elements > 0) || !(rows >= 1) || !(cols >= 1) {
		return 0
	}
	return elements * tileShare(rows) * tileShare(cols)
}

// tileShare is how many lanes of a transposeTile-wide tile side a
// matrix side of n elements keeps idle per busy one, plus one: the
// factor its elements cost.
func tileShare(n float64) float64 {
	if n >= transposeTile {
		return 1
	}
	return transposeTile / n
}

// layoutTransposeS is the time g's SMs take over layout transpose k's
// tiles (0 for any other kernel): its compute term, which the stream of
// its bytes overlaps.
func layoutTransposeS(g *hwdb.GPU, k Kernel, p Params) float64 {
	return smCyclesS(g, p, k.TransposeElements*transposeElementCycles)
}
