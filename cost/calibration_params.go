package cost

// calibratedParams are the time model's parameters fitted on the training
// split of DeepBench (see CALIBRATION.md for the command, the data and the
// held-out error). Regenerate with `go run ./scripts/calibrate -fit -write`.
var calibratedParams = Params{
	EffVector:       0.8336,
	EffTensor:       0.9219,
	EffConv:         0.9503,
	EffWinograd:     0.5479,
	KHalf:           22.48,
	SmallTile:       0.6465,
	TileReuse:       4.164,
	Occupancy:       2.074e-06,
	Unaligned:       0.9934,
	MemEff:          0.7527,
	L2Factor:        3,
	FullClockPower:  2.5,
	RNNStepLaunches: 14.19,
	FillLaunches:    3.912,
	LaunchS:         4.344e-06,
}
