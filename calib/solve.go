package calib

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// solve fits the log factors θ by penalised Gauss–Newton on the Huber
// loss of log(pred/measured), over the rows train selects (nil: all):
//
//	minimise Σ_r ρ(log pred_r(θ) − log meas_r) + ½ Σ_j λ_j θ_j²
//
// Each step solves (JᵀWJ + Λ) Δ = −(JᵀWe + Λθ) with the Huber weights W
// (iteratively reweighted least squares) and halves Δ until the objective
// falls. Single-kernel rows make the problem linear in θ, so it converges
// in a few steps; rows of many kernels need more.
func solve(frs []fitRow, px *paramIndex, train []bool) []float64 {
	theta := make([]float64, len(px.keys))
	// The monotone size rule is flat where it caps a cell: a cell capped
	// at θ = 0 gets no gradient and never leaves it. So the size cells
	// are first fitted free, then under the rule from there.
	theta = descend(frs, px, train, theta, false)
	return descend(frs, px, train, theta, true)
}

// descend runs the Gauss–Newton iterations from theta.
func descend(frs []fitRow, px *paramIndex, train []bool, theta []float64, mono bool) []float64 {
	obj := objective(frs, px, train, theta, mono)
	for iter := 0; iter < 100; iter++ {
		step := gnStep(frs, px, train, theta, mono)
		if step == nil {
			break
		}
		if mono {
			px.tieSteps(theta, step)
		}
		next, nobj, ok := lineSearch(frs, px, train, theta, step, obj, mono)
		if !ok {
			break
		}
		moved := 0.0
		for j := range theta {
			moved = max(moved, math.Abs(next[j]-theta[j]))
		}
		theta, obj = next, nobj
		if moved < 1e-10 {
			break
		}
	}
	return theta
}

// gnStep is one Gauss–Newton step at theta, nil when the system cannot
// be solved (it is positive definite by the penalties, so only on NaN).
func gnStep(frs []fitRow, px *paramIndex, train []bool, theta []float64, mono bool) []float64 {
	np := len(theta)
	a := mat.NewSymDense(np, nil)
	b := mat.NewVecDense(np, nil)
	grad := make([]float64, np)
	for i := range frs {
		if train != nil && !train[i] {
			continue
		}
		clear(grad)
		p, dev := frs[i].predictGrad(theta, grad, mono)
		if !dev {
			continue
		}
		e := math.Log(p / frs[i].meas)
		w := huberWeight(e)
		for j, gj := range grad {
			if gj == 0 {
				continue
			}
			b.SetVec(j, b.AtVec(j)-w*gj*e)
			for k := j; k < np; k++ {
				if grad[k] != 0 {
					a.SetSym(j, k, a.At(j, k)+w*gj*grad[k])
				}
			}
		}
	}
	for j := range np {
		a.SetSym(j, j, a.At(j, j)+px.lambda[j])
		b.SetVec(j, b.AtVec(j)-px.lambda[j]*theta[j])
	}
	var ch mat.Cholesky
	if !ch.Factorize(a) {
		return nil
	}
	var x mat.VecDense
	if err := ch.SolveVecTo(&x, b); err != nil {
		return nil
	}
	return x.RawVector().Data
}

// lineSearch halves step until the objective falls below obj.
func lineSearch(frs []fitRow, px *paramIndex, train []bool, theta, step []float64, obj float64, mono bool) ([]float64, float64, bool) {
	next := make([]float64, len(theta))
	for s := 1.0; s > 1e-6; s /= 2 {
		for j := range theta {
			next[j] = theta[j] + s*step[j]
		}
		if o := objective(frs, px, train, next, mono); o < obj || (o == obj && s == 1) {
			return next, o, true
		}
	}
	return nil, obj, false
}

func objective(frs []fitRow, px *paramIndex, train []bool, theta []float64, mono bool) float64 {
	var o float64
	for i := range frs {
		if train != nil && !train[i] {
			continue
		}
		p, _ := frs[i].predictGrad(theta, nil, mono)
		o += huberLoss(math.Log(p / frs[i].meas))
	}
	for j, t := range theta {
		o += 0.5 * px.lambda[j] * t * t
	}
	return o
}

func huberLoss(e float64) float64 {
	if a := math.Abs(e); a > huberDelta {
		return huberDelta*a - 0.5*huberDelta*huberDelta
	}
	return 0.5 * e * e
}

func huberWeight(e float64) float64 {
	if a := math.Abs(e); a > huberDelta {
		return huberDelta / a
	}
	return 1
}

// assemble turns θ into a calibration, its GPU-wide level re-centred
// (centre): GPUFactor = exp(G) and each class cell keeps the rest of its
// class's offset, g + a_k − G. This changes no prediction on the fitted
// GPU, but it decides what transfers: only the cells do.
func assemble(frs []fitRow, px *paramIndex, theta []float64, src Source) *Calibration {
	theta = px.project(theta)
	n := touchCounts(frs, len(theta))
	g := centre(frs, theta)
	cal := &Calibration{Source: src, GPUFactor: clampRound(math.Exp(g)), Transfer: DefaultTransfer}
	for j := 1; j < len(theta); j++ {
		c := px.cells[j]
		lf := theta[j]
		if c.Op == "*" && c.Bound == "*" && c.Precision == "" {
			lf = theta[0] + theta[j] - g
		}
		c.N, c.Factor = n[j], clampRound(math.Exp(lf))
		if c.Shape != "" && c.Factor == 1 {
			// A missing shape cell is 1: whole-model rows touch dozens of
			// shapes and tell few apart (40 of the 95 of our H100 table).
			continue
		}
		cal.Cells = append(cal.Cells, c)
	}
	return cal
}

// centre is the log GPU factor G: what is common to the fitted GPU's
// kernels, a robust mean of the offsets of its op types with each
// class×op one vote (huberLocation). An op's offset is the median over
// its kernels of the log factor that would transfer
// (fitKernel.transferLog: g and every cell but the size cells), so it
// holds the op's whole offset however the penalties split it between
// levels.
//
// One vote per op, not per kernel: the median kernel, which this
// replaces, followed whichever class held half the rows, so with GEMMs
// half of Vidur's, doubling them moved the target's GEMMs 0% and its
// other kernels −9 to −14%. Per op, not per class: Vidur's four classes
// on A100 are GEMMs within 10%, Gathers 4-5× slow and two classes whose
// ops scatter from −50% to +50%, and a centre of four classes (robust
// or not) landed 20-30% above the GEMMs, pushing every transferred GEMM
// 5-11% fast (A100 → H100 13.1% → 14.9-18.1% median |error|); eight ops
// centre near the typical one. A uniform offset still lands wholly in
// G, and rows of a single op make G that op's offset, so nothing
// transfers from them.
func centre(frs []fitRow, theta []float64) float64 {
	byOp := map[string][]float64{}
	for _, fr := range frs {
		for _, k := range fr.kernels {
			key := k.class + "/" + k.op
			for range k.n {
				byOp[key] = append(byOp[key], k.transferLog(theta))
			}
		}
	}
	offs := make([]float64, 0, len(byOp))
	for _, c := range sortedKeys(byOp) {
		offs = append(offs, quantile(byOp[c], 0.5))
	}
	return huberLocation(offs)
}

// huberLocation is the Huber M-estimate of the centre of xs (0 for
// none): the mean for points within huberDelta of it, a pull of constant
// size from those further. An op moved far (all GEMMs 2×) then moves G
// by about 2·huberDelta/K at most, where the mean moved it by log 2/K,
// and an op far off the others (Gathers) barely counts. It starts at
// the median and iterates the reweighted mean to a fixed point; two
// points, or any set that leaves G free within an interval, give the
// median's choice.
func huberLocation(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	g := quantile(xs, 0.5)
	for range 100 {
		var sw, swx float64
		for _, x := range xs {
			w := huberWeight(x - g)
			sw, swx = sw+w, swx+w*x
		}
		next := swx / sw
		if math.Abs(next-g) < 1e-12 {
			return next
		}
		g = next
	}
	return g
}

// touchCounts is, per parameter, the number of rows with a kernel in it.
func touchCounts(frs []fitRow, np int) []int {
	n := make([]int, np)
	for _, fr := range frs {
		touched := map[int]bool{}
		for _, k := range fr.kernels {
			for _, p := range k.params {
				touched[p] = true
			}
			for _, t := range k.terms {
				for _, p := range t.cells {
					touched[p] = true
				}
				for _, b := range termBuckets(t.s) {
					if t.size[b] >= 0 {
						touched[t.size[b]] = true
					}
				}
				if k.hasRidge && ridgeTerm(t.name) {
					for _, b := range ridgeBucketsAt(k.ridge) {
						if t.ridge[b] >= 0 {
							touched[t.ridge[b]] = true
						}
					}
				}
			}
		}
		for p := range touched {
			n[p]++
		}
	}
	return n
}

// crossValidate predicts each row by a fit on the rows outside its fold
// (row i is in fold i mod cvFolds) and returns measured/predicted. With
// fewer rows than folds each row is its own fold; one row has no
// held-out prediction and gets none.
func crossValidate(frs []fitRow, px *paramIndex) []float64 {
	k := min(cvFolds, len(frs))
	if k < 2 {
		return nil
	}
	ratios := make([]float64, len(frs))
	train := make([]bool, len(frs))
	for f := range k {
		for i := range frs {
			train[i] = i%k != f
		}
		setHosts(frs, nil)
		theta := solve(frs, px, train)
		setHosts(frs, fitHosts(frs, theta, train))
		for i := range frs {
			if !train[i] {
				ratios[i] = frs[i].meas / frs[i].predict(theta)
			}
		}
	}
	setHosts(frs, nil)
	return ratios
}

// residualBands are the 10th and 90th percentiles of the held-out ratios,
// over every row and per main class, where there are minBandRows.
func residualBands(frs []fitRow, ratios []float64) []Band {
	if len(ratios) < minBandRows {
		return nil
	}
	bands := []Band{band("*", "", ratios)}
	byClass := map[string][]float64{}
	byPrec := map[string]map[string][]float64{} // class → precision group → ratios
	for i, fr := range frs {
		if fr.mainClass == "" {
			continue
		}
		byClass[fr.mainClass] = append(byClass[fr.mainClass], ratios[i])
		if fr.mainPrec != "" {
			if byPrec[fr.mainClass] == nil {
				byPrec[fr.mainClass] = map[string][]float64{}
			}
			byPrec[fr.mainClass][fr.mainPrec] = append(byPrec[fr.mainClass][fr.mainPrec], ratios[i])
		}
	}
	for _, c := range sortedKeys(byClass) {
		if len(byClass[c]) < minBandRows {
			continue
		}
		bands = append(bands, band(c, "", byClass[c]))
		// A precision's own band where it has the rows and is not the
		// class's every row (P100's fp32 and fp16-storage kernels of one
		// class scatter differently).
		for _, pg := range sortedKeys(byPrec[c]) {
			if r := byPrec[c][pg]; len(r) >= minBandRows && len(r) < len(byClass[c]) {
				bands = append(bands, band(c, pg, r))
			}
		}
	}
	return bands
}

func band(class, prec string, r []float64) Band {
	return Band{Class: class, Precision: prec, N: len(r), Q10: clampRound(quantile(r, 0.1)), Q90: clampRound(quantile(r, 0.9))}
}

// quantile is the q-quantile of xs by linear interpolation between order
// statistics (Hyndman–Fan type 7, numpy's default); NaN for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// medianAbsErr is the median of |r − 1| over ratios r = measured/predicted.
func medianAbsErr(ratios []float64) float64 {
	if len(ratios) == 0 {
		return 0
	}
	e := make([]float64, len(ratios))
	for i, r := range ratios {
		e[i] = math.Abs(r - 1)
	}
	return quantile(e, 0.5)
}

// round4 keeps 4 significant digits, what the file holds, so a fitted
// calibration and the same one read back price identically.
func round4(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 4, 64), 64)
	return v
}

// clampRound rounds a factor into the range a file may hold.
func clampRound(f float64) float64 {
	return round4(max(1.0/maxFactor, min(maxFactor, f)))
}

// tieSteps makes a monotone rule's clamped cells move with the cell they
// are clamped to. Gauss–Newton sees a clamped cell's value through the
// cell before it, so it steps that one alone; the clamped cell, left
// behind, comes unclamped at its old value and the step's prediction
// fails (a lone 2× row stalled at 1.85×). Moving it by its anchor's
// step keeps the rule's linearisation exact along the step.
func (px *paramIndex) tieSteps(theta, step []float64) {
	for _, ch := range px.chains {
		anchor := make([]int, len(ch.params)) // the parameter each cell moves with, -1: none
		vals := make([]float64, len(ch.params))
		prev := -1
		for i, p := range ch.params {
			anchor[i] = p
			raw := 0.0
			if p >= 0 {
				raw = theta[p]
			} else if ch.ridge {
				continue // absent ridge cells take no part
			}
			vals[i] = raw
			if prev >= 0 {
				lo, hi := ch.bounds(vals[prev], prev, i)
				if raw >= hi || raw < lo {
					anchor[i], vals[i] = anchor[prev], min(hi, max(lo, raw))
				}
			}
			prev = i
		}
		for i, p := range ch.params {
			if p >= 0 && anchor[i] != p {
				step[p] = 0
				if anchor[i] >= 0 {
					step[p] = step[anchor[i]]
				}
			}
		}
	}
}

// project is theta with each size and ridge cell at the value its rule
// gives it: the rules are idempotent on such values, so nothing priced
// changes, but a file then shows the factors that apply, not a fit's raw
// value that the rule clamps.
func (px *paramIndex) project(theta []float64) []float64 {
	out := slices.Clone(theta)
	for _, ch := range px.chains {
		prev := -1
		for i, p := range ch.params {
			if p < 0 && ch.ridge {
				continue
			}
			v := 0.0
			if p >= 0 {
				v = out[p]
			}
			if prev >= 0 {
				pv := 0.0
				if ch.params[prev] >= 0 {
					pv = out[ch.params[prev]]
				} else {
					pv = ch.missing[prev]
				}
				lo, hi := ch.bounds(pv, prev, i)
				v = min(hi, max(lo, v))
			}
			if p >= 0 {
				out[p] = v
			} else {
				ch.missing[i] = v
			}
			prev = i
		}
	}
	return out
}

// monoChain is one class×term's size or ridge cells in bucket order
// (-1 where the rows made none), as a monotone rule chains them.
type monoChain struct {
	params []int
	ridge  bool
	memory bool
	// missing holds, during project, the rule's value at a size bucket
	// with no cell (its raw value is 0, and it bounds the next bucket).
	missing []float64
}

// bounds is the range the rule allows cell i given cell prev's value v.
func (ch monoChain) bounds(v float64, prev, i int) (lo, hi float64) {
	if !ch.ridge {
		return v + minSizeSlope*math.Ln10*float64(i-prev), v
	}
	step := maxRidgeSlope * (ridgeCentre(i) - ridgeCentre(prev))
	if ch.memory {
		return v, v + step
	}
	return v - step, v
}

// monoChains lists the chains of px's cells.
func monoChains(px *paramIndex) []monoChain {
	type key struct {
		class, term string
		ridge       bool
	}
	byKey := map[key]*monoChain{}
	var keys []key
	for j, c := range px.cells {
		var k key
		var b int
		switch {
		case isRidge(c.Ridge):
			k, b = key{c.Class, c.Bound, true}, ridgeRank(c.Ridge)-1
		case sizeRank(c.Size) > 0:
			k, b = key{c.Class, c.Bound, false}, sizeRank(c.Size)-1
		default:
			continue
		}
		ch := byKey[k]
		if ch == nil {
			n := nSize
			if k.ridge {
				n = nRidge
			}
			ch = &monoChain{params: slices.Repeat([]int{-1}, n), ridge: k.ridge, memory: k.term == "memory", missing: make([]float64, n)}
			byKey[k] = ch
			keys = append(keys, k)
		}
		ch.params[b] = j
	}
	out := make([]monoChain, len(keys))
	for i, k := range keys {
		out[i] = *byKey[k]
	}
	return out
}
