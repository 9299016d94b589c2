package cost

// calibratedParams are the time model's parameters fitted on the training
// split of DeepBench (see CALIBRATION.md for the command, the data and the
// held-out error). Regenerate with `go run ./scripts/calibrate -fit -write`.
var calibratedParams = Params{
	EffVector:       0.8649,
	EffTensor:       0.9219,
	EffConv:         0.9904,
	EffWinograd:     0.6096,
	KHalf:           20.08,
	SmallTile:       0.6465,
	Occupancy:       1.688e-06,
	Unaligned:       1,
	MemEff:          0.7552,
	L2Factor:        3,
	FullClockPower:  2.5,
	RNNStepLaunches: 13.02,
	FillLaunches:    3.386,
	LaunchS:         3.926e-06,
}
