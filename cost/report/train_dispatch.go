package report

// TrainDispatch is one entry of a training step's host issue, in the
// order the host issues it (train/dispatch.go builds them; the trace
// draws them): the forward's nodes, the loss head, the recompute, the
// backward in reverse node order, then the gradient scaler and the
// optimizer. It is not serialised: the JSON report carries the totals
// (runtime.host_s, train.host_wait_s).
type TrainDispatch struct {
	// Phase is "forward" (the loss head's forward included),
	// "recompute", "backward" (the loss head's backward included),
	// "accumulate", "communication" or "optimizer".
	Phase string
	// Node indexes Report.Nodes for a node's own work; -1 for step-wide
	// work (the loss head, the scaler, the optimizer).
	Node int
	// Name labels the entry on a trace.
	Name string
	// DeviceS is the kernels' device time, Launches their count; HostS
	// the host's time to issue them all (0 launches with HostS > 0 is
	// host work that issues nothing, such as an optimizer's Python loop).
	DeviceS, Launches, HostS float64
	// Sync marks an entry before which the host waits for the device to
	// drain (the gradient scaler's found-inf read).
	Sync bool
}
