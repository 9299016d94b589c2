package calib

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
)

// Row is one measured call and onnxcost's uncalibrated estimate of it,
// priced on the GPU the call was measured on.
type Row struct {
	Name      string // for error messages: the model, the table line
	MeasuredS float64
	Report    *report.Report
}

// penalties are the ridge weights pulling each level's log factor toward
// its parent, in units of rows: a cell touched by n rows keeps about
// n/(n+λ) of its own deviation and borrows the rest from its parent.
//
// ESTIMATE: a class's offset is the model's systematic error for a kernel
// library (10-30% in DeepBench/Vidur held-out errors); an op's within its
// class and a term's are second-order corrections to it, an op×term or a
// size decade third-order, so each level down is given twice the pull of
// the one above; the values were checked, not tuned, on the kernel rows
// (internal/kernelrows TestCalibrationEndToEnd).
//
// A ridge cell refines a class×term cell along one more axis, so it gets
// twice a size cell's pull. Checked on the kernel rows (fit half, held
// half, median |error|, summed over the eleven GPUs): 145.1 points at 8,
// 148.1 at 4, 145.0 at 16, 146.6 with no ridge cells: within the
// medians' noise either way (see TestCalibrationEndToEnd).
//
// A shape cell refines a class×op cell by the GEMM's dims, a third-order
// correction like an op×term cell, with its pull (4).
type penalties struct{ class, op, opTerm, shape, bound, size, ridge float64 }

var defaultPenalties = penalties{class: 1, op: 2, opTerm: 4, shape: 4, bound: 2, size: 4, ridge: 8}

// huberDelta is where the fit's loss turns from squared to absolute, in
// log(pred/measured). ESTIMATE: a tenth is the spread of a well-modelled
// kernel across shapes; rows further off (a shape the library handles
// specially, a timing glitch) then pull with constant force instead of
// dragging their cell after them.
const huberDelta = 0.1

// minBandRows is the fewest held-out rows a residual band is formed from:
// with fewer, a 10th percentile is one row (ESTIMATE).
const minBandRows = 10

// cvFolds is the number of folds of the cross-validated residuals: each
// row is predicted by a fit on the other four fifths.
const cvFolds = 5

// Fit fits a calibration of gpu to rows measured on it. src says where
// the rows came from; Fit fills in its GPU, Family and Rows. The result
// is deterministic: the same rows give the same calibration.
func Fit(gpu *hwdb.GPU, rows []Row, src Source) (*Calibration, error) {
	return fit(gpu, rows, src, defaultPenalties)
}

func fit(gpu *hwdb.GPU, rows []Row, src Source, pen penalties) (*Calibration, error) {
	if gpu == nil {
		return nil, errors.New("calibrate: no GPU given")
	}
	frs, err := prepareRows(gpu, rows)
	if err != nil {
		return nil, err
	}
	paths := splitPrecisions(frs)
	px := newParamIndex(frs, pen)
	before := make([]float64, len(frs))
	for i := range frs {
		before[i] = frs[i].meas / frs[i].predict(nil)
	}
	theta := solve(frs, px, nil)
	hosts := fitHosts(frs, theta, nil)
	setHosts(frs, hosts)
	src.GPU, src.Family, src.Rows = gpu.Name, Family(gpu), len(frs)
	cal := assemble(frs, px, theta, src)
	cal.Hosts = hosts
	cal.Paths = paths
	ratios := crossValidate(frs, px)
	cal.MedianErrBefore = round4(medianAbsErr(before))
	cal.MedianErrAfter = round4(medianAbsErr(ratios))
	cal.Bands = residualBands(frs, ratios)
	return cal, nil
}

// fitRow is a row reduced to what the prediction needs: pred(θ) =
// max(host, rest + Σ body_k(θ)), each kernel's body priced as
// cost.Analyze prices a calibrated kernel (fitKernel.body).
type fitRow struct {
	name string
	meas float64
	rest float64 // Totals.TimeS − Σ body: launch gaps, host stalls, communication
	host float64 // the host's issue time; the call cannot be faster
	// runtime is the runtime the row was priced under, and hostFactor
	// the factor on its host time being fitted or applied (fitHosts).
	runtime    string
	hostFactor float64
	training   bool // a training step (its host factor is fitted apart)
	// tail is, for a row with a host, the time after both the host's
	// issue and the device side end: pred = tail + max(host, device).
	tail      float64
	kernels   []fitKernel
	mainClass string // the class with the most body time
	// mainPrec is the precision group with the most body time among the
	// mainClass kernels.
	mainPrec string
}

// fitKernel is one kernel as the calibration is applied to it
// (perf.PoweredKernel.Calibrated): its body is perf.BodyS(fc·C, fl·L, fm·M),
// each term scaled by TermFactor of its own class, term and size. What
// is fitted is what is applied: fitting one factor per kernel by its
// bound and body size, as the fit first did, left the Vidur held-out
// halves 1-2 points worse calibrated than not (internal/kernelrows
// TestCalibrationEndToEnd).
type fitKernel struct {
	class string
	op    string // the node's op type, "" when it has none a file can name
	shape string // the node's KernelShape, "" for none
	// prec is the node's precision group (PrecisionGroup) where the rows
	// hold kernels of its class in more than one group (splitPrecisions),
	// "" otherwise: the class×precision cell it draws on.
	prec string
	// path is the node's compute path (PathOf).
	path string
	// terms are the kernel's non-zero time terms: compute and latency add,
	// memory overlaps them.
	terms []fitTerm
	// params are g, the class cell, the class×precision cell, the
	// class×op cell and the class×op×shape cell: they scale every term.
	params []int
	// ridge is ridgeX of the kernel's uncalibrated terms; hasRidge is
	// false when a side is zero (no ridge cells then).
	ridge    float64
	hasRidge bool
	// n is how many of the row's kernels this one stands for: kernels of
	// one class, op, shape and terms are priced alike, and a transformer's
	// layers repeat them (a LLaMA-7B decode step's 1,291 are 41 kinds),
	// so a row sums each kind once, times n.
	n int
}

// fitTerm is one term of a kernel: its uncalibrated seconds, its
// class×term and class×op×term cells and the size cells its factor is
// interpolated from.
type fitTerm struct {
	name  string
	s     float64
	cells []int // parameters of (class, *, term, *) and (class, op, term, *)
	// size is the parameter of each size bucket's (class, *, term, size)
	// cell, -1 where the rows made none; ridge likewise per ridge bucket.
	size  [nSize]int
	ridge [nRidge]int
}

// nSize is the number of size buckets.
const nSize = 4

// termNames are the terms a calibration scales (cost.KernelCalibration).
var termNames = [3]string{"compute", "latency", "memory"}

// NodeBody is the part of a node's time a calibration scales: its device
// time less its launch gap, its kernels' fixed ramp (report.NodeCost.RampS,
// which no efficiency changes) and its tensor-parallel communication; 0
// for a node with no kernel class.
func NodeBody(n *report.NodeCost) float64 {
	if n.KernelClass == "" {
		return 0
	}
	return max(0, n.TimeS-n.RampS-n.LaunchS-n.CommunicationS)
}

func prepareRows(gpu *hwdb.GPU, rows []Row) ([]fitRow, error) {
	if len(rows) == 0 {
		return nil, errors.New("calibrate: no measured rows")
	}
	frs := make([]fitRow, 0, len(rows))
	anyBody := false
	for i, r := range rows {
		name := r.Name
		if name == "" {
			name = fmt.Sprintf("row %d", i+1)
		}
		fr, err := prepareRow(gpu, name, r)
		if err != nil {
			return nil, err
		}
		anyBody = anyBody || len(fr.kernels) > 0
		frs = append(frs, fr)
	}
	if !anyBody {
		return nil, errors.New("calibrate: no row has kernel time to calibrate (every estimate is launch or host overhead)")
	}
	return frs, nil
}

// splitPrecisions keeps a kernel's precision group only where the rows
// hold kernels of its class in two or more groups: with one, a
// class×precision cell would be the class cell again, and the two
// would split its deviation between them, loosening its pull. It
// returns the compute paths of each GEMM-like class's kernels
// (Calibration.Paths).
func splitPrecisions(frs []fitRow) map[string][]string {
	groups := map[string]map[string]bool{}
	paths := map[string]map[string]bool{}
	for _, fr := range frs {
		for _, k := range fr.kernels {
			if groups[k.class] == nil {
				groups[k.class], paths[k.class] = map[string]bool{}, map[string]bool{}
			}
			groups[k.class][k.prec] = true
			paths[k.class][k.path] = true
		}
	}
	for i := range frs {
		for j := range frs[i].kernels {
			if k := &frs[i].kernels[j]; len(groups[k.class]) < 2 {
				k.prec = ""
			}
		}
	}
	out := map[string][]string{}
	for class, ps := range paths {
		if perf.KernelClass(class).GEMMLike() { // a stream runs one kernel at any width: its cells carry to every path
			out[class] = slices.Sorted(maps.Keys(ps))
		}
	}
	return out
}

func prepareRow(gpu *hwdb.GPU, name string, r Row) (fitRow, error) {
	if !(r.MeasuredS > 0) || math.IsInf(r.MeasuredS, 0) {
		return fitRow{}, fmt.Errorf("calibrate: %s: measured time %g s is not a positive number", name, r.MeasuredS)
	}
	rep := r.Report
	if rep == nil {
		return fitRow{}, fmt.Errorf("calibrate: %s: no estimate to calibrate", name)
	}
	if rep.GPU != gpu.Name {
		return fitRow{}, fmt.Errorf("calibrate: %s: priced on %q, not on %s the rows were measured on", name, rep.GPU, gpu.Name)
	}
	if !(rep.Totals.TimeS > 0) || math.IsInf(rep.Totals.TimeS, 0) {
		return fitRow{}, fmt.Errorf("calibrate: %s: the estimate has no time (%g s)", name, rep.Totals.TimeS)
	}
	fr := fitRow{name: name, meas: r.MeasuredS, hostFactor: 1, training: rep.Totals.Train != nil}
	var sum float64
	classBody := map[string]float64{}
	precBody := map[[2]string]float64{} // by class and precision group
	kind := map[string]int{}            // a kernel's identity → its index in fr.kernels
	for i := range rep.Nodes {
		n := &rep.Nodes[i]
		b := NodeBody(n)
		if b <= 0 || !knownClass(n.KernelClass) {
			continue // no kernel, or a class this format cannot name: left in rest
		}
		k := nodeKernel(n, b)
		if len(k.terms) == 0 {
			continue
		}
		sum += k.body(nil, true)
		classBody[n.KernelClass] += b
		precBody[[2]string{n.KernelClass, PrecisionGroup(hwdb.Precision(n.Precision))}] += b
		id := k.identity()
		if j, ok := kind[id]; ok {
			fr.kernels[j].n++
			continue
		}
		kind[id] = len(fr.kernels)
		fr.kernels = append(fr.kernels, k)
	}
	fr.rest = max(0, rep.Totals.TimeS-sum)
	// Any host work per call is a host term, a graph replay's one launch
	// and synchronize (call_us, no dispatch) included: in the fixed rest,
	// a kernel measured faster than that floor (timed inside a graph of
	// many calls, or from a profiler's durations) could never be priced
	// under it, calibrated or not.
	if rt := rep.Runtime; rt != nil && rt.HostS > 0 {
		fr.host, fr.runtime = rt.HostS, rt.Name
		if rt.DeviceS > 0 {
			// The device side without the host's stalls, and what follows
			// both (the last kernel's tail, the call's synchronize): a
			// faster host shortens the stalls, not the kernels.
			fr.rest = max(0, rt.DeviceS-sum)
			fr.tail = max(0, rep.Totals.TimeS-max(rt.HostS, rt.DeviceS))
		}
	}
	fr.mainClass = argmaxKey(classBody)
	inClass := map[string]float64{}
	for k, b := range precBody {
		if k[0] == fr.mainClass {
			inClass[k[1]] += b
		}
	}
	fr.mainPrec = argmaxKey(inClass)
	return fr, nil
}

// identity is what prices a kernel: two with the same are priced alike
// under every theta.
func (k *fitKernel) identity() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|%s|%s|%v|%x", k.class, k.prec, k.path, k.op, k.shape, k.hasRidge, math.Float64bits(k.ridge))
	for _, t := range k.terms {
		fmt.Fprintf(&b, "|%s:%x", t.name, math.Float64bits(t.s))
	}
	return b.String()
}

// nodeKernel is a node's kernel by its terms. A node that reports no
// terms (a report written by hand, a composite) is one term of its body
// named by its bound regime, on the memory side when memory-bound.
func nodeKernel(n *report.NodeCost, body float64) fitKernel {
	k := fitKernel{class: n.KernelClass, prec: PrecisionGroup(hwdb.Precision(n.Precision)), path: PathOf(hwdb.Precision(n.Precision)), n: 1}
	if validOp(n.OpType) {
		k.op = n.OpType
		if gemmShape.MatchString(n.KernelShape) {
			k.shape = n.KernelShape
		}
	}
	for i, s := range [3]float64{n.ComputeS, n.LatencyS, n.MemoryS} {
		if s > 0 && !math.IsInf(s, 0) {
			k.terms = append(k.terms, fitTerm{name: termNames[i], s: s})
		}
	}
	if len(k.terms) == 0 && slices.Contains(termNames[:], n.Bound) {
		k.terms = []fitTerm{{name: n.Bound, s: body}}
		return k
	}
	k.ridge, k.hasRidge = ridgeX([3]float64{n.ComputeS, n.LatencyS, n.MemoryS})
	return k
}

// argmaxKey is the key with the largest value, the smallest key on a tie.
func argmaxKey(m map[string]float64) string {
	best, bv := "", -1.0
	for _, k := range sortedKeys(m) {
		if m[k] > bv {
			best, bv = k, m[k]
		}
	}
	return best
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// paramIndex numbers the fit's parameters: 0 is g (GPU-wide), then one
// per cell the rows touch, in sorted key order.
type paramIndex struct {
	keys   []string // cellKey per parameter; keys[0] = "" for g
	cells  []Cell   // the cell of each parameter (zero for g)
	lambda []float64
	chains []monoChain // the size and ridge cells the monotone rules chain
}

func newParamIndex(frs []fitRow, pen penalties) *paramIndex {
	seen := map[string]Cell{}
	for _, fr := range frs {
		for _, k := range fr.kernels {
			for _, c := range kernelCells(k) {
				seen[c.key()] = c
			}
		}
	}
	px := &paramIndex{keys: []string{""}, cells: []Cell{{}}, lambda: []float64{1e-9}}
	cells := make([]Cell, 0, len(seen))
	for _, c := range seen {
		cells = append(cells, c)
	}
	slices.SortFunc(cells, cellCompare)
	pos := map[string]int{}
	for _, c := range cells {
		pos[c.key()] = len(px.keys)
		px.keys = append(px.keys, c.key())
		px.cells = append(px.cells, c)
		px.lambda = append(px.lambda, max(1e-9, levelPenalty(c, pen)))
	}
	for i := range frs {
		for j := range frs[i].kernels {
			bindKernel(&frs[i].kernels[j], pos)
		}
	}
	px.chains = monoChains(px)
	return px
}

// bindKernel points k's parameters at the cells' positions pos.
func bindKernel(k *fitKernel, pos map[string]int) {
	k.params = []int{0, pos[cellKey(k.class, "*", "*", "*")]}
	if p, ok := pos[precKey(k.class, k.prec)]; ok && k.prec != "" {
		k.params = append(k.params, p)
	}
	if k.op != "" {
		k.params = append(k.params, pos[cellKey(k.class, k.op, "*", "*")])
	}
	if p, ok := pos[shapeKey(k.class, k.op, k.shape)]; ok && k.shape != "" {
		k.params = append(k.params, p)
	}
	for t := range k.terms {
		tm := &k.terms[t]
		tm.cells = []int{pos[cellKey(k.class, "*", tm.name, "*")]}
		if p, ok := pos[cellKey(k.class, k.op, tm.name, "*")]; ok && k.op != "" {
			tm.cells = append(tm.cells, p)
		}
		for b := range tm.size {
			tm.size[b] = -1
			if p, ok := pos[cellKey(k.class, "*", tm.name, sizeBuckets[b].name)]; ok {
				tm.size[b] = p
			}
		}
		for b := range tm.ridge {
			tm.ridge[b] = -1
			if p, ok := pos[cellKey(k.class, "*", tm.name, ridgeBuckets[b].name)]; ok && k.hasRidge {
				tm.ridge[b] = p
			}
		}
	}
}

// opTermCells says whether the fit makes class×op×term cells.
// ESTIMATE: measured on the kernel rows (see Fit's report).
const opTermCells = true

// kernelCells are the cells a kernel's terms draw on, top level first:
// its class and class×op, and per term the class×term and class×op×term
// cells, the size cells its factor is interpolated between
// (termBuckets) and the ridge cells (ridgeBucketsAt).
func kernelCells(k fitKernel) []Cell {
	cell := func(op, bound, size, ridge string) Cell {
		return Cell{Class: k.class, Op: op, Bound: bound, Size: size, Ridge: ridge}
	}
	cs := []Cell{cell("*", "*", "*", "*")}
	if k.prec != "" {
		c := cell("*", "*", "*", "*")
		c.Precision = k.prec
		cs = append(cs, c)
	}
	if k.op != "" {
		cs = append(cs, cell(k.op, "*", "*", "*"))
	}
	if k.shape != "" {
		c := cell(k.op, "*", "*", "")
		c.Shape = k.shape
		cs = append(cs, c)
	}
	for _, t := range k.terms {
		cs = append(cs, cell("*", t.name, "*", "*"))
		if k.op != "" && opTermCells {
			cs = append(cs, cell(k.op, t.name, "*", "*"))
		}
		for _, b := range termBuckets(t.s) {
			cs = append(cs, cell("*", t.name, sizeBuckets[b].name, "*"))
		}
		if k.hasRidge && ridgeTerm(t.name) {
			for _, b := range ridgeBucketsAt(k.ridge) {
				cs = append(cs, cell("*", t.name, "*", ridgeBuckets[b].name))
			}
		}
	}
	return cs
}

// termBuckets are the size buckets whose centres bracket s (one beyond
// the outer centres): the cells its interpolated factor depends on.
func termBuckets(s float64) []int {
	x := math.Log(s)
	if x <= math.Log(sizeCentre(0)) {
		return []int{0}
	}
	for i := 0; i+1 < nSize; i++ {
		if x <= math.Log(sizeCentre(i+1)) {
			return []int{i, i + 1}
		}
	}
	return []int{nSize - 1}
}

func levelPenalty(c Cell, pen penalties) float64 {
	switch {
	case c.Shape != "":
		return pen.shape
	case c.Precision != "":
		return pen.op
	case c.Op != "*" && c.Bound == "*":
		return pen.op
	case c.Op != "*":
		return pen.opTerm
	case c.Bound == "*":
		return pen.class
	case isRidge(c.Ridge):
		return pen.ridge
	case c.Size == "*":
		return pen.bound
	}
	return pen.size
}

// cellCompare orders cells by class, then op, then bound, then size,
// with "*" (the level above) first and sizes in increasing order.
func cellCompare(a, b Cell) int {
	if a.Class != b.Class {
		return cmpStr(a.Class, b.Class)
	}
	if a.Op != b.Op {
		return cmpStr(a.Op, b.Op)
	}
	if a.Bound != b.Bound {
		return cmpStr(a.Bound, b.Bound)
	}
	if d := sizeRank(a.Size) - sizeRank(b.Size); d != 0 {
		return d
	}
	if d := ridgeRank(a.Ridge) - ridgeRank(b.Ridge); d != 0 {
		return d
	}
	if a.Precision != b.Precision {
		return strings.Compare(a.Precision, b.Precision)
	}
	return strings.Compare(a.Shape, b.Shape)
}

func cmpStr(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "*":
		return -1
	case b == "*":
		return 1
	case a < b:
		return -1
	}
	return 1
}

func sizeRank(s string) int {
	for i, b := range sizeBuckets {
		if b.name == s {
			return i + 1
		}
	}
	return 0 // "*"
}

// predict is the row's time under log factors theta (nil: uncalibrated).
func (fr *fitRow) predict(theta []float64) float64 {
	p, _ := fr.predictGrad(theta, nil, true)
	return p
}

// predictGrad returns pred(θ) and, when grad is not nil, accumulates
// d log pred / dθ into it (zero when the host bounds the call). mono
// applies the size cells' monotone rule (monotoneSizeLog), as the
// calibration is applied; without it they are interpolated as they are.
func (fr *fitRow) predictGrad(theta, grad []float64, mono bool) (float64, bool) {
	dev := fr.device(theta, mono)
	if host := fr.host * fr.hostFactor; host > dev {
		return fr.tail + host, false
	}
	if grad != nil {
		for _, k := range fr.kernels {
			k.addGrad(theta, float64(k.n)/(fr.tail+dev), grad, mono)
		}
	}
	return fr.tail + dev, true
}

// device is the row's device side under theta: rest plus the kernels'
// calibrated bodies (mono: see predictGrad).
func (fr *fitRow) device(theta []float64, mono bool) float64 {
	dev := fr.rest
	for _, k := range fr.kernels {
		dev += float64(k.n) * k.body(theta, mono)
	}
	return dev
}

// body is the kernel's calibrated body under theta (nil: uncalibrated):
// perf.BodyS(class, fc·C, fl·L, fm·M), as perf.PoweredKernel.Calibrated
// takes it (less the physical floor, which the report does not carry).
func (k *fitKernel) body(theta []float64, mono bool) float64 {
	c, l, m := k.calibratedTerms(theta, mono)
	return perf.BodyS(perf.KernelClass(k.class), c, l, m)
}

// calibratedTerms are the kernel's compute, latency and memory terms, each
// times its factor under theta.
func (k *fitKernel) calibratedTerms(theta []float64, mono bool) (c, l, m float64) {
	for i := range k.terms {
		v := k.terms[i].s * math.Exp(k.termLog(theta, i, nil, 0, mono))
		switch k.terms[i].name {
		case "memory":
			m += v
		case "latency":
			l += v
		default: // compute, or a one-term kernel's bound (launch)
			c += v
		}
	}
	return c, l, m
}

// addGrad adds scale × d body / dθ to grad: the latency term's, which is
// always in series, and the compute and memory terms' by how much each
// moves the overlapped part (perf.BodySlopes: only the side that sets the
// pace under the hard maximum), each by its own log factor's gradient.
func (k *fitKernel) addGrad(theta []float64, scale float64, grad []float64, mono bool) {
	c, _, m := k.calibratedTerms(theta, mono)
	dc, dm := perf.BodySlopes(perf.KernelClass(k.class), c, m)
	for i := range k.terms {
		slope := dc
		switch k.terms[i].name {
		case "latency":
			slope = 1
		case "memory":
			slope = dm
		}
		if slope == 0 {
			continue
		}
		v := k.terms[i].s * math.Exp(k.termLog(theta, i, nil, 0, mono))
		k.termLog(theta, i, grad, scale*slope*v, mono)
	}
}

// termLog is term i's log factor under theta (0 for nil), as
// Applied.TermFactor computes it on the GPU fitted: g, the class and
// class×op cells, the class×term and class×op×term cells and the size cells interpolated over log s with
// the same monotone rule (monotoneSizeLog). When grad is not nil it adds
// w × d(log factor)/dθ to it.
func (k *fitKernel) termLog(theta []float64, i int, grad []float64, w float64, mono bool) float64 {
	if theta == nil {
		return 0
	}
	t := &k.terms[i]
	var lf float64
	for _, p := range k.params {
		lf += theta[p]
	}
	for _, p := range t.cells {
		lf += theta[p]
	}
	var raw [nSize]float64
	for b, p := range t.size {
		if p >= 0 {
			raw[b] = theta[p]
		}
	}
	v, coef := sizeLogOf(raw, t.s, mono)
	rv, rcoef := k.ridgeLog(theta, i, mono)
	if grad != nil {
		for _, p := range k.params {
			grad[p] += w
		}
		for _, p := range t.cells {
			grad[p] += w
		}
		for b, p := range t.size {
			if p >= 0 {
				grad[p] += w * coef[b]
			}
		}
		for b, p := range t.ridge {
			if p >= 0 {
				grad[p] += w * rcoef[b]
			}
		}
	}
	return lf + v + rv
}

// ridgeLog is term i's ridge cells' log factor under theta and its
// derivative per bucket: monotoneRidgeLog as applied, or without mono the
// plain interpolation.
func (k *fitKernel) ridgeLog(theta []float64, i int, mono bool) (float64, [nRidge]float64) {
	t := &k.terms[i]
	if !k.hasRidge || !ridgeTerm(t.name) {
		return 0, [nRidge]float64{}
	}
	var raw [nRidge]float64
	var present [nRidge]bool
	for b, p := range t.ridge {
		if p >= 0 {
			raw[b], present[b] = theta[p], true
		}
	}
	if mono {
		return monotoneRidgeLog(raw, present, k.ridge, t.name)
	}
	return freeRidgeLog(raw, present, k.ridge)
}

// transferLog is the part of the kernel's largest term's log factor
// that carries to another GPU (Applied.transferLog), plus g: all of it
// but the size cells.
func (k *fitKernel) transferLog(theta []float64) float64 {
	best := 0
	for i := range k.terms {
		if k.terms[i].s > k.terms[best].s {
			best = i
		}
	}
	var lf float64
	for _, p := range k.params {
		lf += theta[p]
	}
	for _, p := range k.terms[best].cells {
		lf += theta[p]
	}
	return lf
}

// sizeCentre is the geometric centre of size bucket i (the first
// bucket's lower end taken as 1 µs), where its cell's value sits.
func sizeCentre(i int) float64 {
	lo := 1e-6
	if i > 0 {
		lo = sizeBuckets[i-1].below
	}
	return math.Sqrt(lo * lo * 10)
}

// sizeLogOf is monotoneSizeLog, or without mono the plain interpolation
// of the raw values (the same rule with every slope allowed).
func sizeLogOf(raw [nSize]float64, s float64, mono bool) (float64, [nSize]float64) {
	if mono {
		return monotoneSizeLog(raw, s)
	}
	return interpolateSize(s, func(i int) (float64, [nSize]float64) {
		var g [nSize]float64
		g[i] = 1
		return raw[i], g
	})
}

// minSizeSlope is the least d(log factor)/d(log time) the size rule
// allows: a term calibrated this way grows at least as its time to the
// power 1 + minSizeSlope = 0.5, so a bigger batch is never faster. The
// most is 0: a term never grows faster than its uncalibrated time, so a
// batch that doubles a kernel's work never more than doubles its time,
// and decode throughput, which the physics tests hold to never fall as
// batch grows, cannot fall because of a calibration. What the rows say
// about large kernels being slower than the model stays in the class,
// op and term cells.
const minSizeSlope = -0.5

// monotoneSizeLog is the size cells' log factor at s from the buckets'
// raw values, the one rule the fit (fitKernel.termLog) and the
// application (Applied.sizeLog) share: each brought within [minSizeSlope, 0] per decade of the
// previous one (the smaller decade's value wins), constant beyond the
// outer centres, linear in log s between; coef is its derivative with
// respect to each raw value (the rule is piecewise linear).
func monotoneSizeLog(raw [nSize]float64, s float64) (float64, [nSize]float64) {
	var vals [nSize]float64
	var grads [nSize][nSize]float64
	vals[0], grads[0][0] = raw[0], 1
	for i := 1; i < nSize; i++ {
		floor := vals[i-1] + minSizeSlope*math.Ln10
		switch {
		case raw[i] >= vals[i-1]:
			vals[i], grads[i] = vals[i-1], grads[i-1]
		case raw[i] >= floor:
			vals[i], grads[i][i] = raw[i], 1
		default:
			vals[i], grads[i] = floor, grads[i-1]
		}
	}
	return interpolateSize(s, func(i int) (float64, [nSize]float64) { return vals[i], grads[i] })
}

// interpolateSize is the value at s of the buckets' values at their
// centres (at(i): value and its gradient), constant beyond the outer
// centres and linear in log s between.
func interpolateSize(s float64, at func(i int) (float64, [nSize]float64)) (float64, [nSize]float64) {
	x := math.Log(s)
	if x <= math.Log(sizeCentre(0)) {
		return at(0)
	}
	for i := 0; i+1 < nSize; i++ {
		x0, x1 := math.Log(sizeCentre(i)), math.Log(sizeCentre(i+1))
		if x <= x1 {
			f := (x - x0) / (x1 - x0)
			v0, g0 := at(i)
			v1, g1 := at(i + 1)
			var c [nSize]float64
			for j := range c {
				c[j] = (1-f)*g0[j] + f*g1[j]
			}
			return v0 + f*(v1-v0), c
		}
	}
	return at(nSize - 1)
}
