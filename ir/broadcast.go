package ir

import "fmt"

// BroadcastShapes applies numpy (multidirectional) broadcasting. An
// unranked input makes the result unranked. A symbolic dim broadcast
// against 1 stays symbolic; two different symbols broadcast to the first
// (ONNX shape inference does the same: the model promises they agree).
func BroadcastShapes(shapes ...Shape) (Shape, error) {
	rank := 0
	for _, s := range shapes {
		if !s.Ranked {
			return Unranked(), nil
		}
		if len(s.Dims) > rank {
			rank = len(s.Dims)
		}
	}
	out := make([]Dim, rank)
	for i := range out {
		out[i] = D(1)
	}
	for _, s := range shapes {
		off := rank - len(s.Dims)
		for i, d := range s.Dims {
			o := out[off+i]
			switch {
			case d.Is(1):
			case o.Is(1):
				out[off+i] = d
			case d.IsKnown() && o.IsKnown() && d.Value != o.Value:
				return Shape{}, fmt.Errorf("shapes %s do not broadcast", shapeList(shapes))
			case !o.IsKnown() && d.IsKnown():
				out[off+i] = d // a number is more informative than a symbol
			}
		}
	}
	return RankedShape(out...), nil
}

func shapeList(shapes []Shape) string {
	s := ""
	for i, sh := range shapes {
		if i > 0 {
			s += ", "
		}
		s += sh.String()
	}
	return s
}
