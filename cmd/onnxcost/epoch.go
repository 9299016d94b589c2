package main

import (
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/pipeline"
)

// applyEpoch adds the per-epoch figures --samples asks for to a training
// report (nothing without --samples).
func (f *costFlags) applyEpoch(r *report.Report, l *pipeline.Loaded) error {
	if !f.given("samples") {
		return nil
	}
	if f.samples <= 0 {
		return usageErr("--samples %d: want a positive number of samples per epoch", f.samples)
	}
	if !f.train || r.Totals.Train == nil {
		return usageErr("--samples prices a training epoch: it needs --train")
	}
	per, err := samplesPerStep(&f.modelFlags, l)
	if err != nil {
		return err
	}
	if err := r.Totals.Train.SetEpoch(f.samples, per); err != nil {
		return usageErr("--samples %d: %v", f.samples, err)
	}
	return nil
}

// samplesPerStep is the batch one training step consumes: --batch, else
// a --dim binding of a dim named as a batch (--dim batch_size=32), else
// the user must say. Neither a symbol the loader assumed to be 1 nor a
// static graph's leading dim is taken: a [seq, batch] LSTM input leads
// with the sequence.
func samplesPerStep(f *modelFlags, l *pipeline.Loaded) (int64, error) {
	if f.batch > 0 {
		return f.batch, nil
	}
	var syms []string
	for _, d := range f.dims {
		if s, _, ok := strings.Cut(d, "="); ok && pipeline.IsBatchName(strings.TrimSpace(s)) {
			syms = append(syms, strings.TrimSpace(s))
		}
	}
	sort.Strings(syms)
	var v int64
	for _, s := range syms {
		b := l.Bindings[s]
		if v != 0 && b != v {
			return 0, usageErr("--samples: the batch dims %s are bound to different values; give the batch per step with --batch N", strings.Join(syms, ", "))
		}
		v = b
	}
	if v <= 0 {
		return 0, usageErr("--samples: the samples per training step are unknown; give them with --batch N")
	}
	return v, nil
}
