package render

import (
	"fmt"
	"strings"
)

// Clean makes a model-supplied string (node, op or tensor name) safe to
// print on one line of a terminal or CI log: control characters and Unicode
// line separators become visible escapes. Without it a node named
// "x\n::error::pwned" would start a new log line that GitHub Actions reads
// as a workflow command.
func Clean(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0xfeff
}
