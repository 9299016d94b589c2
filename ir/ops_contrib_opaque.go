package ir

// onnxruntime's opaque nodes: EPContext (an execution provider's compiled
// engine embedded in, or referenced from, the model: QNN, TensorRT,
// OpenVINO and VitisAI context models) and Snpe (a Qualcomm SNPE DLC).
// What they compute is inside a binary blob, not in the graph, so their
// outputs take the types the file declares for them (graph outputs or
// value_info; a context model onnxruntime writes declares them) and an
// undeclared one is refused; they have no cost rule (cost.NoCostRule):
// the rest of the model is still costed, and the report says what is
// left out.

func init() {
	ms := "com.microsoft"
	Register(
		&OpSchema{Domain: ms, Name: "EPContext", Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: -1,
			Infer: inferOpaque, Doc: "ONNX Runtime contrib op: an execution provider's precompiled engine; outputs as the file declares them"},
		&OpSchema{Domain: ms, Name: "Snpe", Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: -1,
			Infer: inferOpaque, Doc: "ONNX Runtime contrib op: a Qualcomm SNPE DLC; outputs as the file declares them"},
	)
}

// inferOpaque gives each output its declared type, refusing an output
// the file declares no tensor type for: what the engine computes is not
// in the graph, so nothing else can say.
func inferOpaque(c *InferCtx) error {
	for i, o := range c.Node.Outputs {
		if o == nil {
			continue
		}
		d := o.Declared
		if d == nil {
			d = o.valueInfo()
		}
		if d == nil || d.Kind != TensorValue || d.DType == Undefined || !d.Shape.Ranked {
			return c.Errorf("output %q has no declared tensor type and shape; what the engine computes is not in the graph", o.Name)
		}
		if err := c.SetOut(i, d.DType, d.Shape.Clone()); err != nil {
			return err
		}
	}
	return nil
}
