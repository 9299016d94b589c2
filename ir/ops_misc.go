package ir

// Shape functions for string ops, TfIdfVectorizer, and the training ops of
// the ai.onnx.preview.training domain (optimizers and Gradient).

import "strings"

// trainingDomain is the domain of the ONNX training operators.
const trainingDomain = "ai.onnx.preview.training"

func init() {
	Register(
		&OpSchema{Name: "StringNormalizer", Since: 10, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferStringNormalizer},
		&OpSchema{Name: "StringConcat", Since: 20, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferStringConcat},
		&OpSchema{Name: "StringSplit", Since: 20, MinIn: 1, MaxIn: 1, MinOut: 2, MaxOut: 2, Infer: inferStringSplit},
		&OpSchema{Name: "RegexFullMatch", Since: 20, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferRegexFullMatch},
		&OpSchema{Name: "TfIdfVectorizer", Since: 9, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferTfIdfVectorizer},

		// Optimizers: inputs are R, T, then groups of n tensors; each output
		// group has the type of one input group (outGroups[k]).
		&OpSchema{Domain: trainingDomain, Name: "Adagrad", Since: 1, MinIn: 3, MaxIn: -1, MinOut: 1, MaxOut: -1,
			Infer: optimizerInfer(3, []int{0, 2}), Doc: "inputs R, T, X..., G..., H...; outputs X_new..., H_new..."},
		&OpSchema{Domain: trainingDomain, Name: "Momentum", Since: 1, MinIn: 3, MaxIn: -1, MinOut: 1, MaxOut: -1,
			Infer: optimizerInfer(3, []int{0, 2}), Doc: "inputs R, T, X..., G..., V...; outputs X_new..., V_new..."},
		&OpSchema{Domain: trainingDomain, Name: "Adam", Since: 1, MinIn: 3, MaxIn: -1, MinOut: 1, MaxOut: -1,
			Infer: optimizerInfer(4, []int{0, 2, 3}), Doc: "inputs R, T, X..., G..., V..., H...; outputs X_new..., V_new..., H_new..."},
		&OpSchema{Domain: trainingDomain, Name: "Gradient", Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: -1,
			Infer: inferGradient},
	)
}

// inferStringNormalizer: X is [C] or [1, C] strings. Removing stopwords
// changes C; when X's contents are known the survivors are counted (an
// input that loses every element yields one empty string).
func inferStringNormalizer(c *InferCtx) error {
	x := c.InShape(0)
	stop := c.Node.Attr("stopwords")
	if stop == nil || len(stop.Strings) == 0 || !x.Ranked {
		return c.PassThrough(0, 0)
	}
	if len(x.Dims) < 1 || len(x.Dims) > 2 {
		return c.Errorf("input of rank %d, want [C] or [1, C]", len(x.Dims))
	}
	n := c.Fresh("strings")
	if in := c.In(0); in != nil && in.Const != nil && in.Const.HasData && in.Const.Strings != nil {
		caseSensitive := c.AttrInt("is_case_sensitive", 0) != 0
		drop := map[string]bool{}
		for _, w := range stop.Strings {
			if !caseSensitive {
				w = strings.ToLower(w)
			}
			drop[w] = true
		}
		kept := int64(0)
		for _, s := range in.Const.Strings {
			if !caseSensitive {
				s = strings.ToLower(s)
			}
			if !drop[s] {
				kept++
			}
		}
		n = D(max(kept, 1))
	}
	s := x.Clone()
	s.Dims[len(s.Dims)-1] = n
	return c.SetOut(0, String, s)
}

func inferStringConcat(c *InferCtx) error {
	s, err := BroadcastShapes(c.InShape(0), c.InShape(1))
	if err != nil {
		return c.Errorf("%w", err)
	}
	return c.SetOut(0, String, s)
}

// StringSplit: Y holds the substrings padded to the largest count along a
// new last dim (data-dependent); Z holds each string's count.
func inferStringSplit(c *InferCtx) error {
	x := c.InShape(0)
	y := Unranked()
	if x.Ranked {
		y = RankedShape(append(append([]Dim{}, x.Dims...), c.Fresh("splits"))...)
	}
	if err := c.SetOut(0, String, y); err != nil {
		return err
	}
	return c.SetOut(1, Int64, x.Clone())
}

func inferRegexFullMatch(c *InferCtx) error {
	return c.SetOut(0, Bool, c.InShape(0).Clone())
}

// TfIdfVectorizer: [C] -> [V] or [N, C] -> [N, V], V = max(ngram_indexes)+1.
func inferTfIdfVectorizer(c *InferCtx) error {
	idx, ok := c.AttrInts("ngram_indexes")
	if !ok || len(idx) == 0 {
		return c.Errorf("ngram_indexes is required")
	}
	v := idx[0]
	for _, i := range idx {
		v = max(v, i)
	}
	width := D(v + 1)
	x := c.InShape(0)
	switch {
	case !x.Ranked:
		return c.SetOut(0, Float32, Unranked())
	case len(x.Dims) == 1:
		return c.SetOut(0, Float32, RankedShape(width))
	case len(x.Dims) == 2:
		return c.SetOut(0, Float32, RankedShape(x.Dims[0], width))
	}
	return c.Errorf("input of rank %d, want 1 or 2", len(x.Dims))
}

// optimizerInfer builds the shape function of an optimizer whose inputs
// after R and T are inGroups groups of n tensors, and whose output group k
// has the types of input group outGroups[k].
func optimizerInfer(inGroups int, outGroups []int) func(c *InferCtx) error {
	return func(c *InferCtx) error {
		rest := c.NumIn() - 2
		if rest <= 0 || rest%inGroups != 0 {
			return c.Errorf("%d tensor inputs after R and T, want a multiple of %d", rest, inGroups)
		}
		n := rest / inGroups
		if len(c.Node.Outputs) != n*len(outGroups) {
			return c.Errorf("%d outputs, want %d", len(c.Node.Outputs), n*len(outGroups))
		}
		for k, g := range outGroups {
			for i := 0; i < n; i++ {
				if err := c.PassThrough(k*n+i, 2+g*n+i); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// Gradient's i-th output is the gradient with respect to its i-th input
// (the xs attribute lists them first), so it has that input's type.
func inferGradient(c *InferCtx) error {
	if len(c.Node.Outputs) > c.NumIn() {
		return c.Errorf("%d outputs for %d inputs", len(c.Node.Outputs), c.NumIn())
	}
	for i := range c.Node.Outputs {
		if err := c.PassThrough(i, i); err != nil {
			return err
		}
	}
	return nil
}
