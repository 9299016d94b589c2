package main

import (
	"strings"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/internal/pipeline"
	"github.com/spf13/cobra"
)

// trainFlags are --train and --optimizer, on every command that estimates
// cost (costFlags).
type trainFlags struct {
	train      bool
	optimizer  string
	checkpoint string
}

func (f *trainFlags) add(c *cobra.Command) {
	c.Flags().BoolVar(&f.train, "train", false, "cost one training step (forward, loss, backward, optimizer) and its memory; with --dtype fp16|bf16, mixed precision with fp32 master weights; BN folding is not applied")
	c.Flags().StringVar(&f.checkpoint, "checkpoint", pipeline.DefaultCheckpoint, "activation recomputation with --train: "+strings.Join(cost.CheckpointModes(), "|"))
	c.Flags().StringVar(&f.optimizer, "optimizer", pipeline.DefaultOptimizer, "optimizer with --train: "+strings.Join(cost.Optimizers(), "|"))
}

func (f *trainFlags) validate() error {
	return asUsage(pipeline.CheckTrain(&f.optimizer, &f.checkpoint))
}

// options is the cost model's training request; nil without --train.
func (f *trainFlags) options() *cost.TrainOptions {
	if !f.train {
		return nil
	}
	return &cost.TrainOptions{Optimizer: f.optimizer, Checkpoint: f.checkpoint}
}
