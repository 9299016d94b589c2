package sweep

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxListLen bounds a value list, so a typo like 1..1e18 cannot start a
// sweep that never ends.
const MaxListLen = 4096

// ParseList parses a value list: a comma list of positive integers
// ("1,8,32"), a range "a..b" meaning the powers of two from a to b (a and
// b powers of two, a ≤ b: "1..1024"), or a mix of both ("1..8,12"). The
// values come back sorted and without repeats, so the same list always
// gives the same rows in the same order.
func ParseList(s string) ([]int64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty list")
	}
	set := map[int64]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if a, b, ok := strings.Cut(part, ".."); ok {
			lo, err := positive(a)
			if err != nil {
				return nil, fmt.Errorf("range %q: %w", part, err)
			}
			hi, err := positive(b)
			if err != nil {
				return nil, fmt.Errorf("range %q: %w", part, err)
			}
			if lo > hi {
				return nil, fmt.Errorf("range %q: start exceeds end", part)
			}
			if lo&(lo-1) != 0 || hi&(hi-1) != 0 {
				return nil, fmt.Errorf("range %q: a..b steps in powers of two, so a and b must be powers of two", part)
			}
			for v := lo; v <= hi && v > 0; v *= 2 {
				set[v] = true
			}
			continue
		}
		v, err := positive(part)
		if err != nil {
			return nil, err
		}
		set[v] = true
		if len(set) > MaxListLen {
			return nil, fmt.Errorf("more than %d values", MaxListLen)
		}
	}
	out := make([]int64, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sortInts(out)
	return out, nil
}

func positive(s string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive integer", strings.TrimSpace(s))
	}
	return v, nil
}

func sortInts(v []int64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}
