package pipeline

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseKeyValues parses the values of a repeatable KEY=N flag (--dim
// NAME=VALUE, --param K=V) into a map; a repeated key takes its last
// value. With sizes, N must be ≥ 0 (a dim size; 0 binds an empty KV
// cache); otherwise any integer is accepted. form is the flag's value as
// help writes it, for the error.
func ParseKeyValues(flag, form string, flags []string, sizes bool) (map[string]int64, error) {
	out := map[string]int64{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want %s", flag, f, form)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch {
		case err != nil && !sizes:
			return nil, fmt.Errorf("%s %q: value must be an integer", flag, f)
		case err != nil || (sizes && n < 0):
			return nil, fmt.Errorf("%s %q: value must be a non-negative integer", flag, f)
		}
		out[k] = n
	}
	return out, nil
}
