package ir

// QualifiedOp is how the project names an op to people: the op type,
// prefixed with its domain outside the default one ("Conv",
// "onnxcost.FusedConv"). The reader maps "ai.onnx" to "", but a graph built
// in code or a saved report may spell it out, so "ai.onnx" names the
// default domain too.
func QualifiedOp(domain, op string) string {
	if domain == "" || domain == "ai.onnx" {
		return op
	}
	return domain + "." + op
}

// RNNGates is the number of gate blocks stacked in the W and R inputs of a
// recurrent op ("LSTM" 4, "GRU" 3, "RNN" 1; 0 for any other op): the
// recurrent GEMM's M is gates·hidden. Shape inference and the time model
// read the same table.
func RNNGates(op string) int64 { return rnnGates[op] }
