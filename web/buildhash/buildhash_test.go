package buildhash

import (
	"bytes"
	"testing"
)

// TestGoTokens: comments and layout leave a file's fingerprint alone;
// code, string contents and compiler directives change it.
func TestGoTokens(t *testing.T) {
	const base = "package p\n\n// F does a thing.\nfunc F() int { return 1 }\n"
	same := []string{
		"package p\n\n// F does another thing, said at more length.\nfunc F() int { return 1 }\n",
		"package p\nfunc F()   int {\treturn 1 }\n",
		"package p\n/* block */ func F() int { return 1 } // trailing\n",
	}
	differ := []string{
		"package p\n\n// F does a thing.\nfunc F() int { return 2 }\n",
		"package p\n\n//go:embed x.txt\nfunc F() int { return 1 }\n",
		"package p\n\n// F does a thing.\nfunc G() int { return 1 }\n",
	}
	want := goTokens([]byte(base))
	for _, s := range same {
		if !bytes.Equal(goTokens([]byte(s)), want) {
			t.Errorf("a comment or layout change moved the fingerprint:\n%s", s)
		}
	}
	for _, s := range differ {
		if bytes.Equal(goTokens([]byte(s)), want) {
			t.Errorf("a change that builds other code kept the fingerprint:\n%s", s)
		}
	}
}
