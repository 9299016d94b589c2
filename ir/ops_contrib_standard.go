package ir

import "fmt"

// com.microsoft ops that are a standard op under ONNX Runtime's domain:
// its quantizer writes com.microsoft QuantizeLinear and DequantizeLinear
// for 16-bit and 4-bit QDQ models (and with UseQDQContribOps), and older
// exporters wrote Trilu, GatherND, Pad and GridSample there before ONNX
// had them. Each is inferred by the standard op's rule at the ONNX opset
// whose semantics it has (ContribOperators.md): Q/DQ as opset 21 (int16,
// uint16, int4, uint4 and per-axis scales), Trilu 14, GatherND 11, Pad 11
// (pads an input), GridSample 16.

// msStandardOpset is the ONNX opset each com.microsoft twin is read at.
var msStandardOpset = map[string]int64{
	"QuantizeLinear": 21, "DequantizeLinear": 21, "Trilu": 14, "GatherND": 11, "Pad": 11, "GridSample": 16,
}

// MSStandardOpset is the ONNX opset at which the com.microsoft twin of a
// standard op is read (0: op has no twin).
func MSStandardOpset(op string) int64 { return msStandardOpset[op] }

func init() {
	ms := "com.microsoft"
	doc := "ONNX Runtime contrib op: the standard op of the same name (read at ONNX opset %d)"
	twin := func(s *OpSchema, check, infer func(*InferCtx) error) *OpSchema {
		v := msStandardOpset[s.Name]
		s.Domain, s.Since = ms, 1
		s.Check, s.Infer = atOpset(v, check), atOpset(v, infer)
		s.Doc = fmt.Sprintf(doc, v)
		return s
	}
	Register(
		twin(&OpSchema{Name: "QuantizeLinear", MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1}, checkQuantParams, inferQuantize),
		twin(&OpSchema{Name: "DequantizeLinear", MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1}, checkQuantParams, inferDequantize),
		twin(&OpSchema{Name: "Trilu", Family: FamilyData, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: 1}, checkTrilu, inferDataType),
		twin(&OpSchema{Name: "GatherND", Family: FamilyData, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1}, checkGatherND, inferGatherND),
		twin(&OpSchema{Name: "Pad", Family: FamilyData, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1}, nil, inferPad),
		twin(&OpSchema{Name: "GridSample", MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1}, checkGridSample, inferGridSample),
	)
}

// atOpset runs f with the context's opset set to v: a twin's rule reads
// the opset of the semantics it has, not com.microsoft's version 1.
func atOpset(v int64, f func(*InferCtx) error) func(*InferCtx) error {
	if f == nil {
		return nil
	}
	return func(c *InferCtx) error {
		saved := c.Opset
		c.Opset = v
		err := f(c)
		c.Opset = saved
		return err
	}
}
