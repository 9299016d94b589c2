package train

import (
	"math/rand"
	"reflect"
	"regexp"
	"testing"
	"testing/quick"
)

// TestNumberedModule holds numberedModule to the regexp it replaces.
func TestNumberedModule(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z_][\w.]*\.\d+$`)
	cases := []string{"layer1.0", "h.11", "blocks.3", "encoder.layer.7", "_a.1", "a.", ".1", "1a.1", "a.1b", "a..1", "a-b.1",
		"a.b", "", "a", "a1", "Z_9.x.10", "a.1.", "é.1", "a[.1", "a`.1", "a@.1", "a{.1", "a.1\n", "A.0", "a/b.2", "a.٣"}
	for _, s := range cases {
		if got, want := numberedModule(s), re.MatchString(s); got != want {
			t.Errorf("numberedModule(%q) = %v, the regexp says %v", s, got, want)
		}
	}
	f := func(b []byte) bool { return numberedModule(string(b)) == re.MatchString(string(b)) }
	if err := quick.Check(f, &quick.Config{MaxCount: 20000, Values: func(v []reflect.Value, r *rand.Rand) {
		const alphabet = "aZ_09.-/ "
		b := make([]byte, r.Intn(8))
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		v[0] = reflect.ValueOf(b)
	}}); err != nil {
		t.Error(err)
	}
}
