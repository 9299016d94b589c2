package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// opCount is the arithmetic one output element costs: FLOPs (every
// arithmetic operation, transcendental ones included) and how many of
// those are transcendental (exp, log, tanh, erf, sqrt, pow, trig), which
// run on special-function units and are also reported on their own.
type opCount struct {
	flops, trans float64
	doc          string
}

// opCounts is the one table of per-element counts (FLOPConvention points
// here). Comparisons, selects and bit operations count 1 FLOP like any
// arithmetic operation; pure data movement (Cast) counts 0.
var opCounts = map[string]opCount{
	// Unary.
	"Abs":                   {1, 0, "abs"},
	"Neg":                   {1, 0, "negate"},
	"Relu":                  {1, 0, "max(x,0)"},
	"LeakyRelu":             {2, 0, "compare, multiply"},
	"ThresholdedRelu":       {1, 0, "compare-select"},
	"Elu":                   {3, 1, "compare, exp, subtract, multiply (exp counted once)"},
	"Selu":                  {4, 1, "compare, exp, subtract, 2 multiplies"},
	"Celu":                  {4, 1, "max, min, exp, divide"},
	"Sigmoid":               {3, 1, "exp + add + divide: 1/(1+exp(-x))"},
	"HardSigmoid":           {3, 0, "multiply, add, clip"},
	"HardSwish":             {4, 0, "multiply, add, clip, multiply"},
	"Softplus":              {3, 2, "exp, add, log"},
	"Softsign":              {3, 0, "abs, add, divide"},
	"Mish":                  {5, 3, "softplus (exp, add, log) + tanh + multiply"},
	"Gelu":                  {5, 1, "x*0.5*(1+erf(x/sqrt2)): divide, erf, add, 2 multiplies"},
	"Tanh":                  {1, 1, "tanh"},
	"Exp":                   {1, 1, "exp"},
	"Log":                   {1, 1, "log"},
	"Sqrt":                  {1, 1, "sqrt"},
	"Reciprocal":            {1, 0, "divide"},
	"Ceil":                  {1, 0, "round"},
	"Floor":                 {1, 0, "round"},
	"Round":                 {1, 0, "round"},
	"Sign":                  {1, 0, "compare"},
	"Not":                   {1, 0, "logical not"},
	"BitwiseNot":            {1, 0, "bit not"},
	"Erf":                   {1, 1, "erf"},
	"Sin":                   {1, 1, "sin"},
	"Cos":                   {1, 1, "cos"},
	"Tan":                   {1, 1, "tan"},
	"Asin":                  {1, 1, "asin"},
	"Acos":                  {1, 1, "acos"},
	"Atan":                  {1, 1, "atan"},
	"Sinh":                  {1, 1, "sinh"},
	"Cosh":                  {1, 1, "cosh"},
	"Asinh":                 {1, 1, "asinh"},
	"Acosh":                 {1, 1, "acosh"},
	"Atanh":                 {1, 1, "atanh"},
	"IsNaN":                 {1, 0, "compare"},
	"IsInf":                 {1, 0, "compare"},
	"Shrink":                {2, 0, "compare, add"},
	"Clip":                  {2, 0, "max, min"},
	"Swish":                 {4, 1, "sigmoid (3) + multiply"},
	"Cast":                  {0, 0, "conversion only (data movement)"},
	"CastLike":              {0, 0, "conversion only (data movement)"},
	"QuantizeLinear":        {3, 0, "divide, round-add zero point, saturate"},
	"DequantizeLinear":      {2, 0, "subtract zero point, multiply"},
	"DynamicQuantizeLinear": {5, 0, "min/max reduction (2), divide, round-add, saturate"},
	// Binary (per output element of the broadcast).
	"Add":            {1, 0, "add"},
	"Sub":            {1, 0, "subtract"},
	"Mul":            {1, 0, "multiply"},
	"Div":            {1, 0, "divide"},
	"Pow":            {1, 1, "pow"},
	"Mod":            {1, 0, "modulo"},
	"PRelu":          {2, 0, "compare, multiply"},
	"Equal":          {1, 0, "compare"},
	"Greater":        {1, 0, "compare"},
	"GreaterOrEqual": {1, 0, "compare"},
	"Less":           {1, 0, "compare"},
	"LessOrEqual":    {1, 0, "compare"},
	"And":            {1, 0, "logical"},
	"Or":             {1, 0, "logical"},
	"Xor":            {1, 0, "logical"},
	"BitShift":       {1, 0, "shift"},
	"BitwiseAnd":     {1, 0, "bit op"},
	"BitwiseOr":      {1, 0, "bit op"},
	"BitwiseXor":     {1, 0, "bit op"},
	"Where":          {1, 0, "select"},
	// Variadic: (inputs-1) operations per element, counted in variadicOps.
	"Sum":  {1, 0, "add per extra input"},
	"Max":  {1, 0, "max per extra input"},
	"Min":  {1, 0, "min per extra input"},
	"Mean": {1, 0, "add per extra input, + 1 divide"},
}

// variadicOps apply their operation (inputs-1) times per output element.
var variadicOps = map[string]bool{"Sum": true, "Max": true, "Min": true, "Mean": true}

func init() {
	for op := range opCounts {
		RegisterRule("", op, elementwiseRule)
	}
}

// elementwiseRule: one kernel, opCounts[op] per output element, every
// input read once (broadcast inputs at their own, smaller size).
func elementwiseRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	cnt := opCounts[n.OpType]
	out := c.Numel(n.Out(0))
	ops := cnt.flops
	if variadicOps[n.OpType] {
		present := 0
		for _, in := range n.Inputs {
			if in != nil {
				present++
			}
		}
		ops = float64(max(present-1, 0))
		if n.OpType == "Mean" {
			ops++
		}
	}
	e.FLOPs = ops * out
	e.Transcendentals = cnt.trans * out
	return e, nil
}

// OpCount returns the per-element FLOPs and transcendentals of an
// elementwise op from the table, for fused rules that sum their parts.
func OpCount(op string) (flops, transcendentals float64, ok bool) {
	c, ok := opCounts[op]
	return c.flops, c.trans, ok
}

func init() { RegisterRule("", "RotaryEmbedding", rotaryRule) }

// rotaryRule (ONNX opset 23 RotaryEmbedding): each rotated channel is
// x·cos ± x_pair·sin, 2 multiplies and 1 add; channels past
// rotary_embedding_dim (rot, default the head size) pass through.
//
//	rotated = numel(X)·rot/head;  flops = 3·rotated
//
// Bytes: X read and Y written once, position_ids read, and from each of
// the cos and sin caches the rows the tokens use, tokens·rot/2 elements
// (the whole cache when it is smaller): a decode step reads one row of a
// long cache, not all of it.
func rotaryRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := NodeEstimate{Launches: 1, Class: perf.ClassElementwise}
	x, ok := c.Dims(n.In(0))
	var tokens, head float64
	switch {
	case ok && len(x) == 4: // [B, H, S, head]
		tokens, head = x[0]*x[2], x[3]
	case ok && len(x) == 3: // [B, S, H·head]
		tokens, head = x[0]*x[1], x[2]/float64(max(n.AttrInt("num_heads", 1), 1))
	}
	if tokens == 0 || head == 0 {
		c.ReadWrite(n, &e) // unknown layout: every input once
		return e, nil
	}
	rot := float64(n.AttrInt("rotary_embedding_dim", 0))
	if rot <= 0 || rot > head {
		rot = head
	}
	e.FLOPs = 3 * c.Numel(n.In(0)) * rot / head
	c.Read(n, &e, 0, 3)
	for _, cache := range []*ir.Value{n.In(1), n.In(2)} {
		if cache != nil {
			c.param(cache, &e)
			e.BytesRead += min(c.Numel(cache), tokens*rot/2) * c.elemBytes(cache)
		}
	}
	c.Write(n, &e)
	return e, nil
}
