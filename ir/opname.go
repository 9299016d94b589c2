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
