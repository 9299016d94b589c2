package calib

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/detmath"
)

// FormatVersion is the version of the calibration file format.
const FormatVersion = 1

// Calibration is what a set of measurements taught the time model about
// one GPU: a GPU-wide factor and per-cell factors in a hierarchy (class;
// class×op and class×op×term; class×term and class×term×size), each
// cell's factor relative to the level above, plus held-out residual
// bands. Its file form is Write's.
type Calibration struct {
	// Path is the file it was loaded from ("" for one just fitted).
	Path   string
	Source Source
	// GPUFactor is exp(g): how far the fitted GPU's kernels were off as a
	// whole (the mean of its classes' offsets, each class one vote: see
	// centre), which is what its peaks and clocks got wrong. It applies
	// only on that GPU.
	GPUFactor float64
	// MedianErrBefore and MedianErrAfter are the median |measured /
	// predicted − 1| over the fit rows, uncalibrated and calibrated (each
	// row predicted by a fit that left its fold out).
	MedianErrBefore, MedianErrAfter float64
	Transfer                        TransferWeights
	// Paths are, per GEMM-like kernel class (perf.KernelClass.GEMMLike),
	// the compute paths (PathOf: "tensor", "vector"; sorted) of that
	// class's kernels in the rows: the cells of such a class apply to
	// its kernels on these paths only, on the GPU fitted (which keeps its
	// GPU factor) and on any other. A calibration of CUDA-core rows says
	// what the SIMT library kernels do, nothing about the tensor-core
	// ones (fitted on a P100's fp32 rows, its conv cells moved the T4's
	// fp16 convolutions the wrong way: 13.9% → 14.1%), while TF32 and
	// fp16 tensor-core GEMMs are one library family (the H100's cells
	// on the H200's TF32 GEMMs: 20.1% with them withheld, −14% signed).
	// Streaming classes run one kernel at every width and carry to
	// every path. nil (a file without them): every path.
	Paths map[string][]string
	// Cells in canonical order (cellCompare): one per class, class×op,
	// class×op×term, class×term and class×term×size that the rows
	// touched.
	Cells []Cell
	// Bands are the held-out residual bands: "*" for every row, and one
	// per class with enough rows.
	Bands []Band
	// Hosts are the eager runtimes' host factors (see HostFactor).
	Hosts []HostFactor
}

// Source records where a calibration came from.
type Source struct {
	GPU    string // hwdb name of the GPU the rows were measured on (set by Fit)
	Family string // its architecture family (set by Fit)
	// Device is the device the measurements name (Provenance.DeviceText:
	// "NVIDIA H200 (132 SMs, 139.8 GiB)"), "" when they do not.
	Device string
	// Measurements names the table or profile the rows came from.
	Measurements string
	Rows         int    // rows fitted (set by Fit)
	Date         string // when fitted, as the caller states it (Fit never reads the clock)
	Driver       string // "" when not known
	Runtime      string // the runtime the rows were measured under, "" when not known
}

// TransferWeights is the exponent applied to a calibration's
// kernel-relative factors on a GPU other than the one fitted: 1 would
// carry them whole, 0 not at all.
type TransferWeights struct {
	SameFamily  float64
	OtherFamily float64
}

// DefaultTransfer is what Fit writes into a new calibration.
//
// Measured end to end (internal/kernelrows TestCalibrationEndToEnd: fit
// on all of one GPU's rows, median |error| of the other GPU's held-out
// half, uncalibrated → transferred), with the GPU factor centred on the
// ops (centre) and the op cells transferring like the class cells. At a
// quarter: A100 → H100 13.1% → 12.6%, H100 → A100 12.3% → 10.9%, but
// A100 → A40 7.2% → 8.0% (A100's Mul runs 30% over the model, A40's 4%).
// At 0.15: A100 → H100 13.1% → 12.8%, H100 → A100 12.3% → 11.1%, A100 →
// A40 7.2% → 6.7%, P100 → T4 13.1% → 11.4%: better on every pair, and
// doubling the source's GEMMs still moves the target's GEMMs +10% and
// its other kernels under 0.5% (P100 → T4, two ops: +5.0%, −4.6%). The
// same family did no better than another (A100 → A40), so both get the
// same weight. (Measured before transferDeadband; the values with it, on
// a later time model, are at transferDeadband.)
var DefaultTransfer = TransferWeights{SameFamily: 0.15, OtherFamily: 0.15}

// Cell is one factor of the hierarchy. Op, Bound, Size and Ridge are "*"
// at the levels above them: a class cell has all four "*", a class×op
// cell names Op (and, at class×op×term, Bound), a class×term cell names
// Bound, a size cell Bound and Size, a ridge cell Bound and Ridge.
type Cell struct {
	Class string
	// Op is the node's ONNX op type (report.NodeCost.OpType): kernels of
	// one class run different code (Add and Softmax are both pointwise
	// passes, with different overheads).
	Op    string
	Bound string
	Size  string
	// Ridge is the kernel's place relative to the ridge point
	// (ridgeBuckets): its compute time over its memory time, as the
	// uncalibrated model prices them on the GPU in use.
	Ridge string
	// Shape is the kernel shape of a shape cell (report.NodeCost.
	// KernelShape, "NxK": a GEMM's N × K, a row kernel's 1 × row length),
	// "" on every other cell: a library picks its kernel by the
	// problem's dims, so one op's GEMMs of two shapes run at their own
	// share of the model (Vidur's H100 QKV, out, up and down projections
	// sit 1-8% apart).
	Shape string
	// Precision is the precision group (PrecisionGroup) of a class×
	// precision cell, "" on every other cell: one class runs on two
	// paths whose library code differs (cuBLAS's fp32 SGEMM on the CUDA
	// cores, its fp16 HGEMM on the tensor cores), and a fit of both
	// kinds of rows put the fp32 GEMMs' correction on the fp16 ones (T4:
	// held-out fp16 GEMMs 5.5% uncalibrated, 8.2% calibrated). The fit
	// makes them only for a class whose rows have kernels of more than
	// one group.
	Precision string
	// N is the number of rows whose time the cell touched.
	N int
	// Factor multiplies the term times of the cell's kernels, relative to
	// the level above (class: relative to GPUFactor).
	Factor float64
}

// Band is an 80% band of measured/calibrated-prediction over held-out
// rows: Class "*" for every row, else rows whose largest kernel time is
// of that class.
type Band struct {
	Class string
	// Precision is the precision group (PrecisionGroup) of the class's
	// kernels in the rows, "" for rows of every precision.
	Precision string
	N         int
	Q10, Q90  float64
}

// Size buckets: decades of a term's uncalibrated time. A kernel's
// error depends on its size (small kernels are latency- and tail-bound,
// large ones at their roof), and a decade is coarse enough that a few
// rows fill a bucket.
var sizeBuckets = []struct {
	name  string
	below float64 // upper limit, seconds
}{
	{"under-10us", 10e-6},
	{"10-100us", 100e-6},
	{"100us-1ms", 1e-3},
	{"over-1ms", math.Inf(1)},
}

// Family is the architecture family of g: hwdb's arch without the die in
// parentheses ("Ampere (GA100)" → "Ampere"), the key of the error bands.
func Family(g *hwdb.GPU) string { return g.Family() }

// cellKey is a cell's identity; a ridge cell's size part is its ridge
// bucket's name, which no size bucket shares. Ops are identifiers
// (validOp), so "/" cannot occur inside a part.
func cellKey(class, op, bound, size string) string {
	return class + "/" + op + "/" + bound + "/" + size
}

// shapeKey is the identity of the class×op×shape cell; "shape:" is in no
// size or ridge bucket's name.
func shapeKey(class, op, shape string) string {
	return cellKey(class, op, "*", "shape:"+shape)
}

// precKey is the identity of the class×precision cell; "prec:" is in no
// size or ridge bucket's name.
func precKey(class, prec string) string {
	return cellKey(class, "*", "*", "prec:"+prec)
}

func (c Cell) key() string {
	if c.Precision != "" {
		return precKey(c.Class, c.Precision)
	}
	if c.Shape != "" {
		return shapeKey(c.Class, c.Op, c.Shape)
	}
	if c.Ridge != "*" && c.Ridge != "" {
		return cellKey(c.Class, c.Op, c.Bound, c.Ridge)
	}
	return cellKey(c.Class, c.Op, c.Bound, c.Size)
}

// Applied is a calibration bound to the GPU being priced.
type Applied struct {
	cal *Calibration
	gpu string
	// full: the GPU fitted on, GPUFactor and the cells apply whole;
	// otherwise the cells' log factors are scaled by weight.
	full    bool
	sibling bool // full on a GPU of the fitted one's silicon (sameSilicon)
	// paths is the calibration's Paths as sets; a class absent from it
	// applies on every path.
	paths      map[string]map[string]bool
	sameFamily bool
	weight     float64
	logF       map[string]float64 // cellKey → log factor of that level
}

// For binds c to the GPU priced: in full on the GPU it was fitted on,
// transferred (GPUFactor dropped, cells raised to the transfer weight of
// the two GPUs' families) on any other. A nil c gives a nil Applied,
// which TermFactor treats as no calibration.
func (c *Calibration) For(gpu *hwdb.GPU) *Applied {
	if c == nil || gpu == nil {
		return nil
	}
	a := &Applied{cal: c, gpu: gpu.Name, logF: make(map[string]float64, len(c.Cells))}
	switch {
	case gpu.Name == c.Source.GPU:
		a.full, a.weight = true, 1
	case sameSilicon(gpu, c.Source.GPU):
		a.full, a.weight, a.sibling = true, 1, true
	case Family(gpu) == c.Source.Family:
		a.weight, a.sameFamily = c.Transfer.SameFamily, true
	default:
		a.weight = c.Transfer.OtherFamily
	}
	for _, cl := range c.Cells {
		a.logF[cl.key()] = detmath.Log(cl.Factor)
	}
	if c.Paths != nil {
		a.paths = map[string]map[string]bool{}
		for class, ps := range c.Paths {
			a.paths[class] = map[string]bool{}
			for _, p := range ps {
				a.paths[class][p] = true
			}
		}
	}
	return a
}

// Full reports whether a applies in full: on the GPU it was fitted on,
// or on one of the same silicon (sameSilicon).
func (a *Applied) Full() bool { return a != nil && a.full }

// Fitted reports whether a applies on the very GPU it was fitted on, whose
// rows its residual bands describe.
func (a *Applied) Fitted() bool { return a != nil && a.full && !a.sibling }

// sameSilicon reports whether gpu is the compute silicon of the GPU named
// source at the same power limit: one architecture, SM count, boost and
// sustained clock, L2 and peak rates, so the same library kernels run at
// the same clocks and only the memory (size, bandwidth) differs. hwdb
// writes such boards as variants of one entry (base:): the H200 of the
// H100 SXM5, the A100 40 GB of the 80 GB. What a calibration learned
// there holds here whole, the GPU factor with it: fitted on our H100 rows
// (testdata/measured/h100_sxm5_measurements.csv) and applied to our H200
// rows, the median |error| went 11.0% → 8.8% in full, 9.1% with the
// memory terms transferred only at the same-family weight, 11.6% without
// the GPU factor (all of it the factor, 1.085), and 11.0% under the
// same-family transfer, which moved nothing (calib/loop
// TestOwnTransferH100ToH200; 8.5% in full since eager rows are fitted
// with their host stalls apart). A GPU outside the built-in database
// (--gpu-file) is never a sibling.
func sameSilicon(gpu *hwdb.GPU, source string) bool {
	src, err := hwdb.Lookup(source)
	if err != nil || src.Name == gpu.Name {
		return false
	}
	return src.Arch == gpu.Arch && src.SMs == gpu.SMs && src.BoostClockMHz == gpu.BoostClockMHz &&
		src.SustainedClockMHz == gpu.SustainedClockMHz && src.TDPWatts == gpu.TDPWatts &&
		src.L2Bytes == gpu.L2Bytes && maps.Equal(src.Peak, gpu.Peak)
}

// maxFactor bounds any factor a calibration applies: beyond 20× the
// model, not the kernel, is wrong, and the fit must not hide it (the
// same bound Parse enforces on a file).
const maxFactor = 20

// TermFactor is the factor on one term of a kernel's time (term
// "compute", "latency" or "memory"; precision the kernel's hwdb.Precision;
// shape the kernel's shape, "" for none; terms the kernel's uncalibrated
// compute, latency and memory seconds), as cost.Analyze applies it: on the
// GPU fitted, GPUFactor times the class cell, the class×precision cell of
// the kernel's precision group, the class×op and class×op×term cells of the node's op
// type, the class×op×shape cell of its shape, the class×term cell, the
// term's size cells and, for compute and memory, the kernel's ridge
// cells (a GEMM-like kernel on a compute path the rows did not run its
// class on, Paths, gets the GPU factor alone); on another GPU the
// same cells less the shape, size, ridge and latency-term cells (none for such a
// kernel), their product shrunk by transferDeadband and raised to the
// transfer weight, and no GPUFactor. A shape cell is one factor at every
// batch size: a batch never changes a kernel's shape (cost.kernelShape).
// The size cells are interpolated over log term time between the
// decades' centres by the fit's own monotone rule (monotoneSizeLog), so a
// term × TermFactor rises with the term and never faster than it:
// calibrating never makes a kernel faster because its batch grew. The
// ridge cells are interpolated over the log of compute time over memory
// time by a rule (monotoneRidgeLog) that keeps every calibrated term
// rising with each term. A nil a, no class or no time gets 1.
func (a *Applied) TermFactor(class, precision, op, shape, term string, terms [3]float64) float64 {
	ti := slices.Index(termNames[:], term)
	if a == nil || class == "" || ti < 0 || !(terms[ti] > 0) {
		return 1
	}
	var lf float64
	if ps, ok := a.paths[class]; !ok || ps[PathOf(hwdb.Precision(precision))] {
		lf = a.cellsLog(class, precision, op, shape, term, terms, ti)
	} // else the rows held no kernel of this class on this path: none of its cells applies
	if a.full {
		lf += detmath.Log(a.cal.GPUFactor)
	}
	return detmath.Exp(max(-detmath.Log(maxFactor), min(detmath.Log(maxFactor), lf)))
}

// cellsLog is the log factor TermFactor takes from the cells (term ti of
// terms), without the GPU factor: in full, every level; transferred, the
// transferable part shrunk by transferDeadband and raised to the weight.
func (a *Applied) cellsLog(class, precision, op, shape, term string, terms [3]float64, ti int) float64 {
	lf := a.transferLog(class, PrecisionGroup(hwdb.Precision(precision)), op, term)
	if !a.full {
		return a.weight * deadband(lf)
	}
	lf += a.sizeLog(class, term, terms[ti])
	if op != "" && shape != "" {
		lf += a.logF[shapeKey(class, op, shape)]
	}
	if x, ok := ridgeX(terms); ok && ridgeTerm(term) {
		lf += a.ridgeLog(class, term, x)
	}
	return lf
}

// transferDeadband is how far a kernel's cells must put it from the
// fitted GPU's typical kernel before any of it transfers, in log factor:
// huberDelta, the spread of a well-modelled kernel across shapes, which
// the fit itself treats as noise. What lies within it is the source's
// scatter, not something known about the kernel. Measured on the kernel
// rows (internal/kernelrows TestCalibrationEndToEnd, uncalibrated →
// transferred, on the tree of this change): with no deadband A100 → H100
// 11.44% → 11.7% (the A100's Gathers, cells 1.03, moved the H100's, which
// the model prices within 3%), H100 → A100 11.98% → 10.5%, A100 → A40
// 6.32% → 5.6%, P100 → T4 15.40% → 13.7%; with it 11.45%, 11.15%, 5.64%,
// 13.58%; at twice it 11.44%, 11.98% (nothing left to carry), 5.85%,
// 13.58%.
const transferDeadband = huberDelta

// deadband shrinks a transferred log factor toward 0 by transferDeadband.
func deadband(lf float64) float64 {
	return math.Copysign(max(0, math.Abs(lf)-transferDeadband), lf)
}

// ridgeLog is the ridge cells' log factor at ridgeX x (monotoneRidgeLog
// of the buckets' cells, 0 where missing).
func (a *Applied) ridgeLog(class, term string, x float64) float64 {
	var raw [nRidge]float64
	var present [nRidge]bool
	for i, b := range ridgeBuckets {
		raw[i], present[i] = a.logF[cellKey(class, "*", term, b.name)]
	}
	v, _ := monotoneRidgeLog(raw, present, x, term)
	return v
}

// sizeLog is the size cells' log factor at termS (monotoneSizeLog of the
// decades' cells, 0 where missing).
func (a *Applied) sizeLog(class, term string, termS float64) float64 {
	var raw [nSize]float64
	for i, b := range sizeBuckets {
		raw[i] = a.logF[cellKey(class, "*", term, b.name)]
	}
	v, _ := monotoneSizeLog(raw, termS)
	return v
}

// transferLog is the part of the cells that transfers: the class,
// class×precision (prec, the kernel's precision group: to kernels of
// the same group only), class×op, class×op×term and class×term cells,
// the term cells for the compute and memory terms only. Shape cells stay
// on the GPU fitted (which kernel a library picks for a shape is the
// GPU's own), and so do size cells: a decade of term time there holds
// other kernels on a GPU of another speed, and carrying them made every
// transfer on the kernel rows worse. So do the latency term's cells: a
// kernel's fixed latency (its fill, ramp and launch) is the GPU's and
// its driver's, as its peaks are. Carried, the A100's GEMM latency cells
// made the H100's small GEMMs (10-40 µs, already priced fast) 0.2-0.7%
// faster, and the transfers on the kernel rows (internal/kernelrows
// TestCalibrationEndToEnd, uncalibrated → transferred) were A100 → H100
// 9.20% → 9.29% (once elementwise streams lost their FLOP limit;
// 9.37% → 9.37% before), P100 → T4 10.68% → 10.69%; kept on the GPU
// fitted, 9.20% → 9.20% and 10.68% → 10.68%, the others unchanged
// (H100 → A100 9.91% → 9.71%, A100 → A40 6.65% → 6.65%).
func (a *Applied) transferLog(class, prec, op, term string) float64 {
	lf := a.logF[cellKey(class, "*", "*", "*")]
	if prec != "" {
		lf += a.logF[precKey(class, prec)]
	}
	if op != "" {
		lf += a.logF[cellKey(class, op, "*", "*")]
	}
	if a.full || term != "latency" {
		lf += a.logF[cellKey(class, "*", term, "*")]
		if op != "" {
			lf += a.logF[cellKey(class, op, term, "*")]
		}
	}
	return lf
}

// Name is the calibration's file as the user gave it, "(just fitted)"
// for one not loaded from a file: what a header names
// (report.Report.CalibrationFile).
func (a *Applied) Name() string {
	if a == nil {
		return ""
	}
	if a.cal.Path == "" {
		return "(just fitted)"
	}
	return a.cal.Path
}

// Describe is one line for a report header: which file, fitted on what,
// and how it applies here.
func (a *Applied) Describe() string {
	if a == nil {
		return "no calibration"
	}
	c := a.cal
	name := a.Name()
	fitted := fmt.Sprintf("calibration %s: fitted on %s from %d rows of %s", name, c.Source.GPU, c.Source.Rows, orUnknown(c.Source.Measurements))
	if c.Source.Date != "" {
		fitted += " (" + c.Source.Date + ")"
	}
	if c.Source.Device != "" {
		fitted += " measured on " + c.Source.Device
	}
	if c.Source.Runtime != "" {
		fitted += " under " + c.Source.Runtime
	}
	if a.sibling {
		return fmt.Sprintf("%s; applied in full to %s, the same silicon at the same power limit (GPU factor %.3g, %d cells; host factors not: another machine)", fitted, a.gpu, c.GPUFactor, len(c.Cells))
	}
	if a.full {
		return fmt.Sprintf("%s; applied in full (GPU factor %.3g, %d cells%s%s)", fitted, c.GPUFactor, len(c.Cells), a.hostsText(), a.onePathText())
	}
	rel := "another family"
	if a.sameFamily {
		rel = "the same family"
	}
	return fmt.Sprintf("%s; transferred to %s (%s): class, op and term factors at weight %.2g%s, the GPU factor %.3g of %s dropped",
		fitted, a.gpu, rel, a.weight, a.pathsText(), c.GPUFactor, c.Source.GPU)
}

// pathsText says which compute paths a transferred calibration's
// GEMM-like classes apply on, "" when every class applies on every path.
func (a *Applied) pathsText() string {
	if len(a.cal.Paths) == 0 {
		return ""
	}
	var parts []string
	for _, class := range sortedKeys(a.cal.Paths) {
		parts = append(parts, class+" "+strings.Join(a.cal.Paths[class], "/"))
	}
	return ", on the compute paths fitted (" + strings.Join(parts, ", ") + ")"
}

// onePathText names, for a calibration applied in full, the GEMM-like
// classes its rows ran on one compute path only: kernels of theirs on the
// other path get the GPU factor alone, which the header must say.
func (a *Applied) onePathText() string {
	var parts []string
	for _, class := range sortedKeys(a.cal.Paths) {
		if ps := a.cal.Paths[class]; len(ps) == 1 {
			parts = append(parts, class+" "+ps[0])
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; fitted on one compute path: " + strings.Join(parts, ", ") + " (the other path's kernels of these classes take the GPU factor only)"
}

// hostsText lists the host factors a full calibration applies.
func (a *Applied) hostsText() string {
	var b strings.Builder
	for _, h := range a.cal.Hosts {
		fmt.Fprintf(&b, ", host ×%.3g on %s%s", h.Factor, h.Runtime, trainingText(h.Training))
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown measurements"
	}
	return s
}
