package report

// Training fields (present only when a report is made with --train; absent
// otherwise, so inference reports are unchanged).

// Backward is one node's backward pass: the sum of the kernels its
// backward rule launches (train/backward.go), each priced by the kernel
// time model.
type Backward struct {
	FLOPs        float64 `json:"flops"`
	BytesRead    float64 `json:"bytes_read"`
	BytesWritten float64 `json:"bytes_written"`
	TimeS        float64 `json:"time_s"`
	Launches     float64 `json:"launches"`
	// LibraryLaunches are the kernels among Launches that a library call
	// issues itself (cuDNN's layout transposes around a gradient
	// convolution): a driver launch each on the host, not an op dispatch.
	LibraryLaunches float64 `json:"library_launches,omitempty"`
	// ForwardExtraS is forward work that runs only in training (Dropout's
	// mask, BatchNormalization's batch statistics); it is in
	// Train.ForwardTimeS, not in the node's time_s.
	ForwardExtraS float64 `json:"forward_extra_s,omitempty"`
	// SavedBytes are the bytes kept from the forward for this backward
	// beyond the graph's own tensors (masks, indices, RNN reserve space).
	SavedBytes float64 `json:"saved_bytes,omitempty"`
	// EnergyJ is the backward kernels' energy, ForwardExtraJ that of
	// ForwardExtraS, each under the report's power cap or clock lock.
	EnergyJ       float64 `json:"energy_j"`
	ForwardExtraJ float64 `json:"forward_extra_j,omitempty"`
	// Kernels names the backward kernels ("dgrad+wgrad", ...).
	Kernels string `json:"kernels,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Train is one training step: forward, backward (with the loss), and the
// optimizer update.
type Train struct {
	Optimizer string `json:"optimizer"`
	// MixedPrecision: fp16/bf16 compute with fp32 master weights and
	// fp32 optimizer state.
	MixedPrecision bool `json:"mixed_precision"`
	// Checkpoint is the activation recomputation mode ("none", "sqrt");
	// RecomputeTimeS the forward work re-run in backward because of it.
	Checkpoint     string  `json:"checkpoint"`
	RecomputeTimeS float64 `json:"recompute_time_s"`
	// ForwardTimeS, RecomputeTimeS and BackwardTimeS are one
	// micro-batch's (the --batch the graph is costed at).
	ForwardTimeS   float64 `json:"forward_time_s"`
	BackwardTimeS  float64 `json:"backward_time_s"`
	OptimizerTimeS float64 `json:"optimizer_time_s"`
	// GradAccum is the micro-batches per optimizer step (1: none); the
	// effective batch is GradAccum × the graph's batch.
	// AccumulateTimeS is the in-place gradient adds of micro-batches 2..K
	// (PyTorch's AccumulateGrad: grad += new).
	GradAccum       int     `json:"grad_accum"`
	AccumulateTimeS float64 `json:"accumulate_time_s"`
	// DataParallel is the data-parallel replicas (1: none);
	// GradAllReduceS the gradient all-reduce per optimizer step and
	// GradAllReduceExposedS the part of it not hidden behind the backward
	// (train/dataparallel.go).
	DataParallel          int     `json:"data_parallel"`
	GradAllReduceS        float64 `json:"grad_all_reduce_time_s"`
	GradAllReduceExposedS float64 `json:"grad_all_reduce_exposed_s"`
	// HostWaitS is the device's idle time waiting on the host's kernel
	// dispatch under a runtime that issues kernels one by one (PyTorch
	// eager; train/dispatch.go).
	HostWaitS float64 `json:"host_wait_s"`
	// StepTimeS is one optimizer step: GradAccum × (forward + recompute +
	// backward) + AccumulateTimeS + GradAllReduceExposedS + OptimizerTimeS
	// + HostWaitS.
	StepTimeS float64 `json:"step_time_s"`
	// The energy of each phase, priced kernel by kernel like the times
	// above (forward, recompute and backward are one micro-batch's), and
	// of the step, which is Totals.EnergyJ under --train: GradAccum ×
	// (forward + recompute + backward) + accumulate + optimizer + wait.
	// WaitEnergyJ is the idle GPU's while it waits on the host or on the
	// exposed gradient all-reduce.
	ForwardEnergyJ    float64 `json:"forward_energy_j"`
	RecomputeEnergyJ  float64 `json:"recompute_energy_j"`
	BackwardEnergyJ   float64 `json:"backward_energy_j"`
	OptimizerEnergyJ  float64 `json:"optimizer_energy_j"`
	AccumulateEnergyJ float64 `json:"accumulate_energy_j"`
	WaitEnergyJ       float64 `json:"wait_energy_j"`
	StepEnergyJ       float64 `json:"step_energy_j"`
	// Epoch is set when the number of samples per epoch is given
	// (--samples): the step repeated over it.
	Epoch          *Epoch  `json:"epoch,omitempty"`
	ForwardFLOPs   float64 `json:"forward_flops"`
	BackwardFLOPs  float64 `json:"backward_flops"`
	OptimizerFLOPs float64 `json:"optimizer_flops"`
	// OptimizerLaunches is the optimizer's kernel launches (multi-tensor
	// apply: many parameter tensors per launch).
	OptimizerLaunches float64     `json:"optimizer_launches"`
	Memory            TrainMemory `json:"memory"`
	// Notes say what was assumed (a loss head added, passes not run,
	// ops whose backward is not modelled).
	Notes []string `json:"notes"`
	// Dispatch is the host's issue of the step under a runtime that
	// dispatches from the host (TrainDispatch); nil under a graph replay.
	Dispatch []TrainDispatch `json:"-"`
}

// TrainMemory is the device memory of a training step, in three views:
//
//   - live tensors: TensorPeakBytes, the peak over the step's timeline of
//     the tensors alive (torch.cuda.max_memory_allocated, less the
//     library workspace);
//   - allocator reserve: AllocatorReservedBytes, what PyTorch's caching
//     allocator holds after replaying the step (rounding, segment sizes,
//     fragmentation; torch.cuda.max_memory_reserved), the workspace
//     included;
//   - nvidia-smi: NvidiaSMIBytes, the reserve plus the CUDA context
//     (RuntimeBytes), the process's device memory as nvidia-smi shows it.
//
// PeakBytes, the report's peak_memory_bytes, is the nvidia-smi view.
type TrainMemory struct {
	WeightsBytes        float64 `json:"weights_bytes"`
	MasterWeightsBytes  float64 `json:"master_weights_bytes"`
	GradientsBytes      float64 `json:"gradients_bytes"`
	OptimizerStateBytes float64 `json:"optimizer_state_bytes"`
	// ActivationsBytes: forward tensors retained for backward at the end
	// of the forward pass (their peak).
	ActivationsBytes float64 `json:"activations_bytes"`
	WorkspaceBytes   float64 `json:"workspace_bytes"`
	// LayoutCopyBytes is the workspace cuDNN holds at the tensor peak for
	// the NHWC copies of a convolution's NCHW operands (a runtime that
	// hands it NCHW tensors on tensor cores); 0 when none is live then.
	LayoutCopyBytes float64 `json:"layout_copy_bytes,omitempty"`
	// DDPBucketBytes is DistributedDataParallel's gradient buckets (a flat
	// copy of the gradients) under data parallelism; 0 without.
	DDPBucketBytes float64 `json:"ddp_bucket_bytes"`
	RuntimeBytes   float64 `json:"runtime_bytes"`
	// TensorPeakBytes is the peak of live tensors alone (no runtime
	// floor).
	TensorPeakBytes        float64 `json:"tensor_peak_bytes"`
	AllocatorReservedBytes float64 `json:"allocator_reserved_bytes"`
	NvidiaSMIBytes         float64 `json:"nvidia_smi_bytes"`
	PeakBytes              float64 `json:"peak_bytes"`
	// PeakPhase says where the peak falls: "forward", "backward" or
	// "optimizer".
	PeakPhase string `json:"peak_phase"`
}

// TrainSetting names the training step a time is of: what an output
// priced under --train says in its first line and JSON.
type TrainSetting struct {
	Optimizer  string `json:"optimizer"`
	Checkpoint string `json:"checkpoint"`
	// GradAccum is micro-batches per optimizer step, DataParallel the
	// DDP replicas (each 1: none).
	GradAccum    int `json:"grad_accum"`
	DataParallel int `json:"data_parallel"`
}

// Setting is the step t prices; nil for nil (no training step).
func (t *Train) Setting() *TrainSetting {
	if t == nil {
		return nil
	}
	return &TrainSetting{Optimizer: t.Optimizer, Checkpoint: t.Checkpoint, GradAccum: max(t.GradAccum, 1), DataParallel: max(t.DataParallel, 1)}
}
