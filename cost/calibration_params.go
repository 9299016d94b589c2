package cost

// calibratedParams are the time model's parameters fitted on the training
// split of DeepBench (see CALIBRATION.md for the command, the data and the
// held-out error). Regenerate with `go run ./scripts/calibrate -fit -write`.
var calibratedParams = Params{
	EffVector:       0.8745,
	EffTensor:       0.9248,
	EffConv:         0.9658,
	EffWinograd:     0.5774,
	KHalf:           24.53,
	SmallTile:       0.7293,
	Occupancy:       2.636e-06,
	Unaligned:       1,
	MemEff:          0.569,
	L2Factor:        3,
	FullClockPower:  2.5,
	RNNStepLaunches: 15.14,
	FillLaunches:    2.826,
	LaunchS:         3.003e-06,
}
