package cost

// calibratedParams are the time model's parameters fitted on the training
// split of DeepBench (see CALIBRATION.md for the command, the data and the
// held-out error). Regenerate with `go run ./scripts/calibrate -fit -write`.
var calibratedParams = Params{
	EffVector:       0.8172,
	EffTensor:       0.9767,
	EffConv:         0.9173,
	EffWinograd:     0.5149,
	KHalf:           23.32,
	SmallTile:       0.6764,
	TileReuse:       4.201,
	Occupancy:       1.812e-06,
	Unaligned:       1,
	MemEff:          0.7362,
	L2Factor:        3,
	FullClockPower:  2.5,
	RNNStepLaunches: 14.29,
	FillLaunches:    3.699,
	LaunchS:         3.903e-06,
}
