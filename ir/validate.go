package ir

// Operand validation: the ONNX operator spec's constraints between an op's
// inputs and attributes that its shape function does not need in order to
// compute an output shape, and so would otherwise let through. A Conv whose
// weight expects 5 input channels still has a well-defined output shape
// from the weight alone, but no runtime can execute it; costing it would
// price a model that does not exist. Each check runs before the op's shape
// function and refuses only what is provably wrong: a symbolic or unknown
// dim is never a mismatch, because the model may bind it to the right value.
//
// Constraints the shape functions already enforce (MatMul inner dims,
// broadcasting of elementwise ops, Where and Expand, Concat ranks and
// non-axis dims, Split sums, Transpose permutations, Pad and Tile lengths,
// Reshape element counts, Gather index ranges) are not repeated here.

// Each check is the Check field of its op's schema (ops_*.go), so an op's
// constraints are found where the op is.

// inferChecked validates n's operands, then runs its shape function.
func inferChecked(s *OpSchema, c *InferCtx) error {
	if s.Check != nil {
		if err := s.Check(c); err != nil {
			return err
		}
	}
	return s.Infer(c)
}

// knownDim returns s's dim i when s is ranked, i is in range and the dim is
// a number.
func knownDim(s Shape, i int) (int64, bool) {
	if !s.Ranked || i < 0 || i >= len(s.Dims) || !s.Dims[i].IsKnown() {
		return 0, false
	}
	return s.Dims[i].Value, true
}

// inShapeOpt is input i's shape, or an unranked shape when i < 0 or the
// input is absent.
func inShapeOpt(c *InferCtx, i int) Shape {
	if i < 0 || !c.HasIn(i) {
		return Unranked()
	}
	return c.InShape(i)
}

// checkVector refuses an input that is not 1-D of length want (when both
// are known); what names the input in the message.
func checkVector(c *InferCtx, i int, what string, want Dim) error {
	s := inShapeOpt(c, i)
	if !s.Ranked {
		return nil
	}
	if len(s.Dims) != 1 {
		return c.Errorf("%s must be 1-D of length %s, got shape %s", what, want, s)
	}
	if s.Dims[0].IsKnown() && want.IsKnown() && s.Dims[0].Value != want.Value {
		return c.Errorf("%s has length %d, want %d (%s)", what, s.Dims[0].Value, want.Value, s)
	}
	return nil
}

// checkDims refuses input i (named what) when it is ranked with another
// rank than want's or a known dim differs from want's known one (a zero
// Dim{} in want is any size); an absent input passes.
func checkDims(c *InferCtx, i int, what string, want ...Dim) error {
	s := inShapeOpt(c, i)
	if !s.Ranked {
		return nil
	}
	if s.Rank() != len(want) {
		return c.Errorf("%s has rank %d (%s), want %d", what, s.Rank(), s, len(want))
	}
	for j, w := range want {
		if w != (Dim{}) && w.IsKnown() && s.Dims[j].IsKnown() && s.Dims[j].Value != w.Value {
			return c.Errorf("%s is %s; its dim %d should be %d", what, s, j, w.Value)
		}
	}
	return nil
}

// checkKernelAttr refuses a kernel_shape attribute that contradicts the
// weight's spatial dims.
func checkKernelAttr(c *InferCtx, w Shape) error {
	ks, ok := c.AttrInts("kernel_shape")
	if !ok || !w.Ranked || len(w.Dims) < 2 || len(ks) != len(w.Dims)-2 {
		return nil // a length mismatch is reported by the shape function
	}
	for i, k := range ks {
		if d, ok := knownDim(w, 2+i); ok && d != k {
			return c.Errorf("kernel_shape %v contradicts weight shape %s", ks, w)
		}
	}
	return nil
}

// checkGroup reads the group attribute, which must be positive.
func checkGroup(c *InferCtx) (int64, error) {
	g := c.AttrInt("group", 1)
	if g < 1 {
		return 0, c.Errorf("group %d must be positive", g)
	}
	return g, nil
}

// checkConv validates a convolution whose data, weight and bias are inputs
// x, w and b (b < 0: none). W is [M, C/group, k...]: the input's channels
// must be W's second dim times group, M must divide into the groups, the
// bias has M entries, kernel_shape agrees with W, and every spatial axis
// must fit at least one window.
func checkConv(x, w, b int) func(c *InferCtx) error {
	return func(c *InferCtx) error {
		xs, ws := c.InShape(x), inShapeOpt(c, w)
		group, err := checkGroup(c)
		if err != nil {
			return err
		}
		if m, ok := knownDim(ws, 0); ok && m%group != 0 {
			return c.Errorf("weight %s has %d output channels, not divisible by group %d", ws, m, group)
		}
		if ch, ok := knownDim(xs, 1); ok {
			if wc, ok := knownDim(ws, 1); ok && ch != wc*group {
				return c.Errorf("input %s has %d channels but weight %s with group %d takes %d", xs, ch, ws, group, wc*group)
			}
			if ch%group != 0 {
				return c.Errorf("input %s has %d channels, not divisible by group %d", xs, ch, group)
			}
		}
		if err := checkKernelAttr(c, ws); err != nil {
			return err
		}
		if b >= 0 && ws.Ranked && len(ws.Dims) > 0 {
			if err := checkVector(c, b, "bias", ws.Dims[0]); err != nil {
				return err
			}
		}
		return checkWindows(c, xs, spatialOf(ws))
	}
}

// checkWindows refuses a convolution or pooling window larger than its
// (padded) input on some spatial axis: the spec's output extent
// floor((in + pads - ek) / stride) + 1 is then zero or negative.
func checkWindows(c *InferCtx, x Shape, weightKernel []Dim) error {
	if !x.Ranked || len(x.Dims) < 2 {
		return nil
	}
	n := len(x.Dims) - 2
	g, err := readConvGeom(c, n, weightKernel)
	if err != nil || g == nil {
		return nil // attribute errors are the shape function's to report
	}
	if g.autoPad == "SAME_UPPER" || g.autoPad == "SAME_LOWER" {
		return nil
	}
	for i := 0; i < n; i++ {
		in, ek, ok := g.knownWindow(x, i)
		if !ok {
			continue
		}
		if _, fits := ConvOutDim(in, ek, g.strides[i], 1, g.pads[i], g.pads[i+n], g.autoPad); fits {
			continue
		}
		padded := in
		if g.autoPad != "VALID" {
			padded += g.pads[i] + g.pads[i+n]
		}
		return c.Errorf("window of %d on spatial axis %d exceeds the padded input extent %d (input %s)", ek, i, padded, x)
	}
	return nil
}

// knownWindow returns spatial axis i's input extent in x and the dilated
// kernel extent there; ok is false when either is symbolic, and then the
// checks leave the axis to run time.
func (g *convGeom) knownWindow(x Shape, i int) (in, ek int64, ok bool) {
	in, ok = knownDim(x, 2+i)
	k := effectiveKernel(g.kernel[i], g.dilations[i])
	if !ok || !k.IsKnown() {
		return 0, 0, false
	}
	return in, k.Value, true
}

// checkPoolWindow validates MaxPool/AveragePool/LpPool windows.
func checkPoolWindow(c *InferCtx) error {
	return checkWindows(c, c.InShape(0), nil)
}

// checkConvTranspose: W is [C, M/group, k...] with C the input's channels
// (divisible by group); the bias has M = W[1]*group entries; and unless
// output_shape is given, every spatial output extent
// stride*(in-1) + output_padding + ek - pads must be positive.
func checkConvTranspose(c *InferCtx) error {
	xs, ws := c.InShape(0), c.InShape(1)
	group, err := checkGroup(c)
	if err != nil {
		return err
	}
	if ch, ok := knownDim(xs, 1); ok {
		if wc, ok := knownDim(ws, 0); ok && wc != ch {
			return c.Errorf("input %s has %d channels but weight %s takes %d", xs, ch, ws, wc)
		}
		if ch%group != 0 {
			return c.Errorf("input %s has %d channels, not divisible by group %d", xs, ch, group)
		}
	} else if wc, ok := knownDim(ws, 0); ok && wc%group != 0 {
		return c.Errorf("weight %s has %d input channels, not divisible by group %d", ws, wc, group)
	}
	if err := checkKernelAttr(c, ws); err != nil {
		return err
	}
	if ws.Ranked && len(ws.Dims) > 1 {
		m, ok := MulDim(ws.Dims[1], D(group))
		if ok {
			if err := checkVector(c, 2, "bias", m); err != nil {
				return err
			}
		}
	}
	if os, ok := c.AttrInts("output_shape"); ok && len(os) > 0 {
		return nil
	}
	if !xs.Ranked || len(xs.Dims) < 2 {
		return nil
	}
	n := len(xs.Dims) - 2
	if ws.Ranked && len(ws.Dims) != n+2 {
		return nil
	}
	g, err := readConvGeom(c, n, spatialOf(ws))
	if err != nil || g == nil || g.autoPad != "NOTSET" {
		return nil
	}
	outPad, err := attrPerAxis(c, "output_padding", n, 0)
	if err != nil {
		return nil
	}
	for i := 0; i < n; i++ {
		in, ek, ok := g.knownWindow(xs, i)
		if !ok {
			continue
		}
		if out := g.strides[i]*(in-1) + outPad[i] + ek - g.pads[i] - g.pads[i+n]; out <= 0 {
			return c.Errorf("output extent %d on spatial axis %d: pads %d+%d exceed the transposed extent of input %s", out, i, g.pads[i], g.pads[i+n], xs)
		}
	}
	return nil
}

// checkGemm: op(A) is [M, K], op(B) is [K, N] and C broadcasts to [M, N]
// in one direction (C's dims are 1 or equal to Y's).
func checkGemm(c *InferCtx) error {
	a, b := c.InShape(0), c.InShape(1)
	if a.Rank() != 2 || b.Rank() != 2 {
		return nil // unranked, or a rank error the shape function reports
	}
	ta, tb := c.AttrInt("transA", 0) != 0, c.AttrInt("transB", 0) != 0
	m, ka := a.Dims[0], a.Dims[1]
	if ta {
		m, ka = ka, m
	}
	kb, n := b.Dims[0], b.Dims[1]
	if tb {
		kb, n = n, kb
	}
	if ka.IsKnown() && kb.IsKnown() && ka.Value != kb.Value {
		return c.Errorf("inner dims differ: A %s (transA=%d) gives K=%d, B %s (transB=%d) gives K=%d",
			a, boolVal(ta), ka.Value, b, boolVal(tb), kb.Value)
	}
	cs := inShapeOpt(c, 2)
	if !cs.Ranked {
		return nil
	}
	if len(cs.Dims) > 2 {
		return c.Errorf("C %s has rank %d, at most 2 broadcasts to Y [%s,%s]", cs, len(cs.Dims), m, n)
	}
	y := []Dim{m, n}
	for i, d := range cs.Dims {
		t := y[2-len(cs.Dims)+i]
		if d.IsKnown() && t.IsKnown() && d.Value != 1 && d.Value != t.Value {
			return c.Errorf("C %s does not broadcast to Y [%s,%s]", cs, m, n)
		}
	}
	return nil
}

// channelDim is X's channel dim (dim 1); ok is false when X is unranked.
// X must have rank >= 2: N and C come first.
func channelDim(c *InferCtx) (Dim, bool, error) {
	x := c.InShape(0)
	if !x.Ranked {
		return Dim{}, false, nil
	}
	if len(x.Dims) < 2 {
		return Dim{}, false, c.Errorf("input %s has rank %d, need at least 2 (N, C, ...)", x, len(x.Dims))
	}
	return x.Dims[1], true, nil
}

// checkBatchNorm: scale, B, mean and var are [C] (spatial mode; opsets
// before 9 with spatial=0 take per-activation [C, D...] statistics).
func checkBatchNorm(c *InferCtx) error {
	ch, ok, err := channelDim(c)
	if err != nil || !ok {
		return err
	}
	if c.Opset < 9 && c.AttrInt("spatial", 1) == 0 {
		return nil
	}
	for i, name := range []string{"scale", "B", "input_mean", "input_var"} {
		if err := checkVector(c, 1+i, name, ch); err != nil {
			return err
		}
	}
	return nil
}

// checkInstanceNorm: scale and B are [C].
func checkInstanceNorm(c *InferCtx) error {
	ch, ok, err := channelDim(c)
	if err != nil || !ok {
		return err
	}
	for i, name := range []string{"scale", "B"} {
		if err := checkVector(c, 1+i, name, ch); err != nil {
			return err
		}
	}
	return nil
}

// checkLayerNorm: Scale and B must broadcast to X in one direction (the
// normalization multiplies and adds them to X-shaped values); in practice
// they are X's trailing dims from axis on.
func checkLayerNorm(c *InferCtx) error {
	x := c.InShape(0)
	if !x.Ranked {
		return nil
	}
	for i, name := range []string{"Scale", "B"} {
		s := inShapeOpt(c, 1+i)
		if !s.Ranked {
			continue
		}
		if !broadcastsTo(s, x) {
			return c.Errorf("%s %s does not broadcast to input %s", name, s, x)
		}
	}
	return nil
}

// broadcastsTo reports whether s may broadcast to t in one direction:
// rank at most t's, each trailing-aligned dim 1 or equal (symbols agree).
func broadcastsTo(s, t Shape) bool {
	if len(s.Dims) > len(t.Dims) {
		return false
	}
	off := len(t.Dims) - len(s.Dims)
	for i, d := range s.Dims {
		o := t.Dims[off+i]
		if d.IsKnown() && o.IsKnown() && d.Value != 1 && d.Value != o.Value {
			return false
		}
	}
	return true
}

// checkGroupNorm: num_groups is positive and divides C; scale and bias have
// num_groups entries (opset 18) or C entries (opset 21, and what exporters
// of 18 that follow the later semantics write).
func checkGroupNorm(c *InferCtx) error {
	a := c.Attr("num_groups")
	if a == nil {
		return c.Errorf("has no num_groups attribute")
	}
	g := a.I
	if g < 1 {
		return c.Errorf("num_groups %d must be positive", g)
	}
	ch, ok, err := channelDim(c)
	if err != nil || !ok {
		return err
	}
	if ch.IsKnown() && ch.Value%g != 0 {
		return c.Errorf("input has %d channels, not divisible by num_groups %d", ch.Value, g)
	}
	for i, name := range []string{"scale", "bias"} {
		s := inShapeOpt(c, 1+i)
		if !s.Ranked {
			continue
		}
		if len(s.Dims) != 1 {
			return c.Errorf("%s must be 1-D, got shape %s", name, s)
		}
		l, ok := knownDim(s, 0)
		if !ok || l == g || !ch.IsKnown() || l == ch.Value {
			continue
		}
		return c.Errorf("%s has length %d, want num_groups %d or channels %d", name, l, g, ch.Value)
	}
	return nil
}

// checkGather: constant indices must lie in [-s, s-1] for the gather axis
// of size s (the shape function checks this only when it folds the data).
func checkGather(c *InferCtx) error {
	data := c.InShape(0)
	if !data.Ranked || len(data.Dims) == 0 {
		return nil
	}
	ax, err := c.NormAxis(c.AttrInt("axis", 0), len(data.Dims))
	if err != nil {
		return nil
	}
	n, ok := knownDim(data, ax)
	if !ok {
		return nil
	}
	idx, ok := c.ConstInts(1)
	if !ok {
		return nil
	}
	for _, x := range idx {
		if x < -n || x >= n {
			return c.Errorf("index %d out of range for axis %d of size %d", x, ax, n)
		}
	}
	return nil
}

// checkGatherElements: indices may not exceed data on any axis but the
// gather axis (the output takes indices' shape and reads data there).
func checkGatherElements(c *InferCtx) error {
	data, idx := c.InShape(0), c.InShape(1)
	if !data.Ranked || !idx.Ranked || len(data.Dims) != len(idx.Dims) {
		return nil
	}
	ax, err := c.NormAxis(c.AttrInt("axis", 0), len(data.Dims))
	if err != nil {
		return nil
	}
	return indicesWithinData(c, data, idx, ax)
}

// indicesWithinData: indices of data's rank do not exceed data on any
// known axis but ax, the axis GatherElements and ScatterElements index
// along (elsewhere the output reads data at the indices' positions).
func indicesWithinData(c *InferCtx, data, idx Shape, ax int) error {
	for i := range idx.Dims {
		d, ok1 := knownDim(data, i)
		q, ok2 := knownDim(idx, i)
		if i != ax && ok1 && ok2 && q > d {
			return c.Errorf("indices %s exceed data %s on axis %d", idx, data, i)
		}
	}
	return nil
}

// checkGatherND: the first batch_dims dims of data and indices agree.
func checkGatherND(c *InferCtx) error {
	data, idx := c.InShape(0), c.InShape(1)
	b := c.AttrInt("batch_dims", 0)
	if !data.Ranked || !idx.Ranked || b < 0 || b > int64(len(data.Dims)) || b > int64(len(idx.Dims)) {
		return nil
	}
	for i := 0; i < int(b); i++ {
		d, ok1 := knownDim(data, i)
		q, ok2 := knownDim(idx, i)
		if ok1 && ok2 && d != q {
			return c.Errorf("batch dim %d differs: data %s, indices %s", i, data, idx)
		}
	}
	return nil
}

// checkScatterElements: indices have data's rank, updates have indices'
// shape, and indices do not exceed data off the scatter axis.
func checkScatterElements(c *InferCtx) error {
	data, idx, upd := c.InShape(0), c.InShape(1), c.InShape(2)
	if idx.Ranked && upd.Ranked && !compatible(idx, upd) {
		return c.Errorf("updates %s must have the shape of indices %s", upd, idx)
	}
	if !data.Ranked || !idx.Ranked {
		return nil
	}
	if len(data.Dims) != len(idx.Dims) {
		return c.Errorf("data has rank %d, indices rank %d", len(data.Dims), len(idx.Dims))
	}
	ax, err := c.NormAxis(c.AttrInt("axis", 0), len(data.Dims))
	if err != nil {
		return err
	}
	return indicesWithinData(c, data, idx, ax)
}

// checkScatterND: with k = indices' last dim, k <= rank(data) and updates
// are indices.shape[:-1] + data.shape[k:].
func checkScatterND(c *InferCtx) error {
	data, idx, upd := c.InShape(0), c.InShape(1), c.InShape(2)
	if !data.Ranked || !idx.Ranked {
		return nil
	}
	q := len(idx.Dims)
	if q == 0 {
		return c.Errorf("indices must have rank >= 1")
	}
	k, ok := knownDim(idx, q-1)
	if !ok {
		return nil
	}
	if k < 1 || k > int64(len(data.Dims)) {
		return c.Errorf("index depth %d does not fit data of rank %d", k, len(data.Dims))
	}
	if !upd.Ranked {
		return nil
	}
	want := RankedShape(append(append([]Dim(nil), idx.Dims[:q-1]...), data.Dims[k:]...)...)
	if !compatible(want, upd) {
		return c.Errorf("updates %s must have shape %s (indices %s, data %s)", upd, want, idx, data)
	}
	return nil
}

// rnnGateCount is the number of gates whose weights W and R stack.
var rnnGateCount = map[string]int64{"RNN": 1, "GRU": 3, "LSTM": 4}

// checkRecurrent: W is [dirs, gates*hidden, input], R [dirs, gates*hidden,
// hidden], B [dirs, 2*gates*hidden], with input X's last dim and dirs 2 for
// a bidirectional op.
func checkRecurrent(c *InferCtx) error {
	x, w, r := c.InShape(0), c.InShape(1), c.InShape(2)
	gates := rnnGateCount[c.Node.OpType]
	dirs := int64(1)
	if c.AttrString("direction", "forward") == "bidirectional" {
		dirs = 2
	}
	for _, p := range []struct {
		name string
		s    Shape
	}{{"W", w}, {"R", r}} {
		if !p.s.Ranked {
			continue
		}
		if len(p.s.Dims) != 3 {
			return c.Errorf("%s must be 3-D, got %s", p.name, p.s)
		}
		if d, ok := knownDim(p.s, 0); ok && d != dirs {
			return c.Errorf("%s %s has %d directions, the op has %d", p.name, p.s, d, dirs)
		}
	}
	hidden := c.AttrInt("hidden_size", 0)
	if hidden <= 0 {
		if h, ok := knownDim(r, 2); ok {
			hidden = h
		}
	}
	if hidden > 0 {
		for _, p := range []struct {
			name string
			s    Shape
		}{{"W", w}, {"R", r}} {
			if d, ok := knownDim(p.s, 1); ok && d != gates*hidden {
				return c.Errorf("%s %s has %d rows, want %d gates x hidden %d", p.name, p.s, d, gates, hidden)
			}
		}
		if d, ok := knownDim(r, 2); ok && d != hidden {
			return c.Errorf("R %s has %d columns, want hidden %d", r, d, hidden)
		}
		if bs := inShapeOpt(c, 3); bs.Ranked {
			if len(bs.Dims) != 2 {
				return c.Errorf("B must be 2-D, got %s", bs)
			}
			if d, ok := knownDim(bs, 1); ok && d != 2*gates*hidden {
				return c.Errorf("B %s has %d columns, want 2 x %d gates x hidden %d", bs, d, gates, hidden)
			}
		}
	}
	if in, ok := knownDim(x, 2); ok {
		if d, ok := knownDim(w, 2); ok && d != in {
			return c.Errorf("W %s takes inputs of size %d, X %s has %d", w, d, x, in)
		}
	}
	return nil
}

// checkConstantOfShape: the shape input's entries are sizes, none
// negative.
func checkConstantOfShape(c *InferCtx) error {
	dims, ok := c.ConstInts(0)
	if !ok {
		return nil
	}
	for _, d := range dims {
		if d < 0 {
			return c.Errorf("shape %v has a negative dim", dims)
		}
	}
	return nil
}

// checkCumSum: the axis input is a scalar (or one-element) axis of x.
func checkCumSum(c *InferCtx) error {
	x := c.InShape(0)
	v, ok := c.ConstInts(1)
	if !ok || !x.Ranked || len(v) != 1 {
		return nil
	}
	_, err := c.NormAxis(v[0], len(x.Dims))
	return err
}

// checkTrilu: the input holds matrices, so its rank is at least 2.
func checkTrilu(c *InferCtx) error {
	if x := c.InShape(0); x.Ranked && len(x.Dims) < 2 {
		return c.Errorf("input %s has rank %d, need at least 2", x, len(x.Dims))
	}
	return nil
}

// checkLRN: size (required) is a positive channel count.
func checkLRN(c *InferCtx) error {
	if a := c.Attr("size"); a == nil || a.I < 1 {
		return c.Errorf("size must be a positive integer")
	}
	return nil
}

// checkRois: MaxRoiPool's rois are [R, 5] (batch index and box); RoiAlign's
// are [R, 4] with batch_indices [R]; X is [N, C, H, W].
func checkRois(c *InferCtx) error {
	x, rois := c.InShape(0), c.InShape(1)
	if x.Ranked && len(x.Dims) != 4 {
		return c.Errorf("input %s must be 4-D [N, C, H, W]", x)
	}
	width := int64(4)
	if c.Node.OpType == "MaxRoiPool" {
		width = 5
	}
	if rois.Ranked {
		if len(rois.Dims) != 2 {
			return c.Errorf("rois %s must be 2-D [R, %d]", rois, width)
		}
		if d, ok := knownDim(rois, 1); ok && d != width {
			return c.Errorf("rois %s must be [R, %d]", rois, width)
		}
	}
	if c.Node.OpType == "RoiAlign" && rois.Ranked {
		if err := checkVector(c, 2, "batch_indices", rois.Dims[0]); err != nil {
			return err
		}
	}
	return nil
}

// checkGridSample: grid is [N, O1..Or, r] for X [N, C, D1..Dr].
func checkGridSample(c *InferCtx) error {
	x, grid := c.InShape(0), c.InShape(1)
	if !x.Ranked || !grid.Ranked || len(grid.Dims) < 3 {
		return nil
	}
	if len(grid.Dims) != len(x.Dims) {
		return c.Errorf("grid %s and input %s differ in rank", grid, x)
	}
	if d, ok := knownDim(grid, len(grid.Dims)-1); ok && d != int64(len(x.Dims)-2) {
		return c.Errorf("grid %s has %d coordinates per point, input %s has %d spatial axes", grid, d, x, len(x.Dims)-2)
	}
	n1, ok1 := knownDim(x, 0)
	n2, ok2 := knownDim(grid, 0)
	if ok1 && ok2 && n1 != n2 {
		return c.Errorf("grid %s and input %s differ in batch", grid, x)
	}
	return nil
}

// checkNMS: boxes are [B, N, 4] and scores [B, C, N].
func checkNMS(c *InferCtx) error {
	boxes, scores := c.InShape(0), c.InShape(1)
	if boxes.Ranked {
		if d, ok := knownDim(boxes, 2); len(boxes.Dims) != 3 || ok && d != 4 {
			return c.Errorf("boxes %s must be [batch, boxes, 4]", boxes)
		}
	}
	if scores.Ranked && len(scores.Dims) != 3 {
		return c.Errorf("scores %s must be [batch, classes, boxes]", scores)
	}
	if boxes.Ranked && scores.Ranked {
		for _, p := range [][2]int{{0, 0}, {1, 2}} {
			a, ok1 := knownDim(boxes, p[0])
			b, ok2 := knownDim(scores, p[1])
			if ok1 && ok2 && a != b {
				return c.Errorf("boxes %s and scores %s disagree (batch and box counts must match)", boxes, scores)
			}
		}
	}
	return nil
}

// checkOneHot: values holds [off, on], two elements.
func checkOneHot(c *InferCtx) error {
	v := inShapeOpt(c, 2)
	if n, ok := v.NumElements(); ok && n != 2 {
		return c.Errorf("values %s must hold 2 elements [off, on]", v)
	}
	return nil
}

// checkReverseSequence: sequence_lens has one entry per batch row.
func checkReverseSequence(c *InferCtx) error {
	x := c.InShape(0)
	if !x.Ranked || len(x.Dims) < 2 {
		if x.Ranked {
			return c.Errorf("input %s must have rank >= 2", x)
		}
		return nil
	}
	b := int(c.AttrInt("batch_axis", 1))
	if b < 0 || b > 1 {
		return c.Errorf("batch_axis %d must be 0 or 1", b)
	}
	return checkVector(c, 1, "sequence_lens", x.Dims[b])
}

// checkLoss: scores are [N, C, D...] and labels [N, D...].
func checkLoss(c *InferCtx) error {
	x, y := c.InShape(0), c.InShape(1)
	if !x.Ranked || !y.Ranked {
		return nil
	}
	if len(x.Dims) < 2 || len(y.Dims) != len(x.Dims)-1 {
		return c.Errorf("labels %s do not fit scores %s ([N, C, D...] and [N, D...])", y, x)
	}
	for i, d := range y.Dims {
		xi := i
		if i > 0 {
			xi = i + 1
		}
		if a, ok := knownDim(x, xi); ok && d.IsKnown() && a != d.Value {
			return c.Errorf("labels %s do not fit scores %s ([N, C, D...] and [N, D...])", y, x)
		}
	}
	return nil
}

// checkMaxUnpool: the indices have X's shape.
func checkMaxUnpool(c *InferCtx) error {
	x, i := c.InShape(0), c.InShape(1)
	if x.Ranked && i.Ranked && !compatible(x, i) {
		return c.Errorf("indices %s must have the shape of the input %s", i, x)
	}
	return nil
}

// checkTopK: K may not exceed the axis (the spec and runtimes refuse it).
func checkTopK(c *InferCtx) error {
	x := c.InShape(0)
	if !x.Ranked || len(x.Dims) == 0 {
		return nil
	}
	ax, err := c.NormAxis(c.AttrInt("axis", -1), len(x.Dims))
	if err != nil {
		return nil
	}
	var k int64
	if c.Opset < 10 {
		a := c.Attr("k")
		if a == nil {
			return nil
		}
		k = a.I
	} else {
		v, ok := c.ConstInts(1)
		if !ok || len(v) != 1 {
			return nil
		}
		k = v[0]
	}
	if k < 0 {
		return c.Errorf("k %d is negative", k)
	}
	if d, ok := knownDim(x, ax); ok && k > d {
		return c.Errorf("k %d exceeds axis %d of size %d", k, ax, d)
	}
	return nil
}

// checkQuantParams: a per-axis scale (and zero point) is 1-D with one entry
// per slice of X along axis; a per-tensor one is a scalar (or [1]).
// Blocked quantization (opset 21 block_size) is not checked.
func checkQuantParams(c *InferCtx) error {
	x := c.InShape(0)
	if c.AttrInt("block_size", 0) > 0 || !x.Ranked {
		return nil
	}
	for i, name := range []string{"scale", "zero_point"} {
		s := inShapeOpt(c, 1+i)
		if !s.Ranked || len(s.Dims) == 0 {
			continue
		}
		if len(s.Dims) != 1 {
			return c.Errorf("%s must be a scalar or 1-D, got %s", name, s)
		}
		l, ok := knownDim(s, 0)
		if !ok || l == 1 || len(x.Dims) == 0 {
			continue
		}
		ax, err := c.NormAxis(c.AttrInt("axis", 1), len(x.Dims))
		if err != nil {
			return err
		}
		if d, ok := knownDim(x, ax); ok && d != l {
			return c.Errorf("%s has %d entries, axis %d of input %s has %d", name, l, ax, x, d)
		}
	}
	return nil
}
