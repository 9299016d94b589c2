package ir

import "fmt"

// LatestOpset is the newest ai.onnx opset released (ONNX 1.22). A model
// importing a later one was written for operators this table cannot know:
// a runtime refuses it, and so does inference. Versions between the
// newest op rule here (23) and this one exist, and their ops are priced
// by the latest rule the table has.
const LatestOpset = 27

// checkOpsetImports refuses an ai.onnx import no runtime accepts: version
// 0 or below (versions start at 1; reading it as "no import" would cost
// the model at DefaultOpset) or one past LatestOpset. Other domains
// version their ops independently and are held only to their ops' ranges
// (checkOpsetRange).
func checkOpsetImports(m *Model) error {
	for _, o := range m.Opsets {
		if o.Domain != "" && o.Domain != "ai.onnx" {
			continue
		}
		switch {
		case o.Version < 1:
			return fmt.Errorf("the model imports %s opset %d; opset versions start at 1", domainName(o.Domain), o.Version)
		case o.Version > LatestOpset:
			return fmt.Errorf("the model imports %s opset %d, newer than the newest opset known here (%d)", domainName(o.Domain), o.Version, LatestOpset)
		}
	}
	return nil
}

// checkNumeric is the type constraint of the arithmetic ops (MatMul,
// Gemm, Conv, Add, Sum, ...): every operand is a number. Shape rules take
// the output dtype from the inputs and never look further, so without it
// a MatMul of strings gets a string output and a price. Undefined (not
// yet known) passes.
func checkNumeric(c *InferCtx) error {
	for i, v := range c.Node.Inputs {
		if v == nil || v.Kind != TensorValue {
			continue
		}
		if v.DType == String || v.DType == Bool {
			return c.Errorf("input %d %s is a %s tensor; %s takes numbers", i, QuoteName(v.Name), v.DType, cutName(c.Node.OpType))
		}
	}
	return nil
}

// numericThen is check (nil for none) preceded by checkNumeric, for the
// Check field of an arithmetic op with operand checks of its own.
func numericThen(check func(*InferCtx) error) func(*InferCtx) error {
	if check == nil {
		return checkNumeric
	}
	return func(c *InferCtx) error {
		if err := checkNumeric(c); err != nil {
			return err
		}
		return check(c)
	}
}

// numeric gives an arithmetic op built by a table (binaryOps,
// variadicOps) the numeric operand constraint.
func (s *OpSchema) numeric() *OpSchema {
	s.Check = numericThen(s.Check)
	return s
}
