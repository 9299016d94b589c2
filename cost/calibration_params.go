package cost

// calibratedParams are the time model's parameters fitted on the training
// split of DeepBench (see CALIBRATION.md for the command, the data and the
// held-out error). Regenerate with `go run ./scripts/calibrate -fit -write`.
var calibratedParams = Params{
	EffVector:       0.8277,
	EffTensor:       0.6116,
	EffConv:         0.9795,
	EffWinograd:     0.5163,
	KHalf:           11.09,
	SmallTile:       0.7257,
	Occupancy:       1.006e-05,
	Unaligned:       0.9856,
	MemEff:          0.5384,
	L2Factor:        3,
	RNNStepLaunches: 13.15,
	FillLaunches:    3.396,
	LaunchS:         2.59e-06,
}
