package main

import (
	"strings"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/train"
	"github.com/spf13/cobra"
)

// trainFlags are --train and --optimizer, on every command that estimates
// cost (costFlags).
type trainFlags struct {
	train      bool
	optimizer  string
	checkpoint string
	// gradAccum is micro-batches per optimizer step (--grad-accum);
	// dataParallel the DDP replicas (--data-parallel).
	gradAccum, dataParallel int
	// fromFlags is set when cobra declared the flags (add): zero values
	// are then the user's, not a costFlags built in code.
	fromFlags bool
	// trainCmd is the command the flags were declared on, to tell a flag
	// the user gave from one left at its default (a value check cannot:
	// --optimizer adam is the default's value).
	trainCmd *cobra.Command
}

// trainOnlyFlags are the flags that shape a training step and mean
// nothing to an inference estimate: given without --train they would be
// silently ignored, so validate refuses them.
var trainOnlyFlags = []string{"optimizer", "checkpoint", "grad-accum", "data-parallel"}

func (f *trainFlags) add(c *cobra.Command) {
	f.fromFlags = true
	f.trainCmd = c
	c.Flags().BoolVar(&f.train, "train", false, "cost one training step (forward, loss, backward, optimizer) and its memory; with --dtype fp16|bf16, mixed precision with fp32 master weights; BN folding is not applied")
	c.Flags().StringVar(&f.checkpoint, "checkpoint", pipeline.DefaultCheckpoint, "activation recomputation with --train: "+strings.Join(train.CheckpointModes(), "|"))
	c.Flags().StringVar(&f.optimizer, "optimizer", pipeline.DefaultOptimizer, "optimizer with --train: "+strings.Join(train.Optimizers(), "|"))
	c.Flags().IntVar(&f.dataParallel, "data-parallel", 1, "data parallelism with --train: `N` DistributedDataParallel replicas of the model (each on --batch; with --gpus, of the tensor-parallel group): one gradient all-reduce per optimizer step, overlapped with the backward, and DDP's gradient buckets in memory")
	c.Flags().IntVar(&f.gradAccum, "grad-accum", 1, "gradient accumulation with --train: `K` micro-batches of --batch per optimizer step (effective batch K × batch); time is one optimizer step, memory one micro-batch's plus the gradient buffer")
}

func (f *trainFlags) validate() error {
	if !f.fromFlags {
		// A costFlags built in code: zero is "not set".
		f.gradAccum, f.dataParallel = max(f.gradAccum, 1), max(f.dataParallel, 1)
	}
	// A bad value is named first, as serve (which sets these up for the
	// page's training toggle) names it.
	if err := asUsage(pipeline.CheckTrain(&f.optimizer, &f.checkpoint)); err != nil {
		return err
	}
	if !f.train && f.trainCmd != nil {
		for _, name := range trainOnlyFlags {
			if fl := f.trainCmd.Flags().Lookup(name); fl != nil && fl.Changed {
				return usageErr("--%s %s needs --train (it sets up a training step; an inference estimate has none)", name, fl.Value)
			}
		}
	}
	if !f.train && f.dataParallel != 1 {
		return usageErr("--data-parallel %d needs --train", f.dataParallel)
	}
	if f.dataParallel < 1 {
		return usageErr("--data-parallel %d: want 1 or more replicas", f.dataParallel)
	}
	if !f.train && f.gradAccum != 1 {
		return usageErr("--grad-accum %d needs --train", f.gradAccum)
	}
	if f.gradAccum < 1 {
		return usageErr("--grad-accum %d: want 1 or more micro-batches per optimizer step", f.gradAccum)
	}
	return nil
}

// options is the cost model's training request; nil without --train.
func (f *trainFlags) options() cost.Training {
	if !f.train {
		return nil
	}
	return &train.Options{Optimizer: f.optimizer, Checkpoint: f.checkpoint, GradAccum: f.gradAccum, DataParallel: f.dataParallel}
}
