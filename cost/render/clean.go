package render

import (
	"fmt"
	"strings"
	"unicode/utf8"
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
	return string(appendClean(nil, s))
}

// appendClean appends Clean(s) to b.
func appendClean(b []byte, s string) []byte {
	if !strings.ContainsFunc(s, unsafeRune) {
		return append(b, s...)
	}
	for _, r := range s {
		if unsafeRune(r) {
			b = fmt.Appendf(b, `\u%04x`, r)
			continue
		}
		b = utf8.AppendRune(b, r)
	}
	return b
}

func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0xfeff
}
