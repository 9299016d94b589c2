package ir

import (
	"strconv"
	"unicode/utf8"
)

// maxQuoted bounds, in bytes, a model string that a message quotes. A
// node name or op type is the model's to choose, and a hostile file makes
// one 100 kB long: the message should still name it recognizably, not
// carry it whole.
const maxQuoted = 200

// QuoteName is strconv.Quote of a string read from a model, cut to about
// maxQuoted bytes with "…" and the full length when longer.
func QuoteName(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(cutName(s)) + " (" + strconv.Itoa(len(s)) + " bytes)"
}

// cutName is s cut at a UTF-8 boundary to at most maxQuoted bytes and
// "…" when longer, for a string a message shows unquoted (an op type).
func cutName(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
