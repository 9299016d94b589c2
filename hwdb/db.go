package hwdb

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// DB is a set of GPUs that can be listed and looked up by name or alias.
// The zero DB is empty; use Builtin or WithUserFile.
type DB struct {
	entries []*dbEntry          // sorted by name
	index   map[string]*dbEntry // normalized name or alias -> entry
}

// dbEntry is one GPU of a DB, known by its name and aliases before its
// figures are: the built-in ones are decoded on first use (builtin.go).
type dbEntry struct {
	name    string
	aliases []string
	gpu     func() (*GPU, error)
}

// decoded wraps GPUs already parsed as entries.
func decoded(gpus []*GPU) []*dbEntry {
	es := make([]*dbEntry, len(gpus))
	for i, g := range gpus {
		es[i] = &dbEntry{g.Name, g.Aliases, func() (*GPU, error) { return g, nil }}
	}
	return es
}

// Builtin returns the embedded database. The error is non-nil only if the
// embedded data is broken, which the package tests rule out.
func Builtin() (*DB, error) { return builtin() }

// WithUserFile returns the built-in database plus the GPUs of a user spec
// file (YAML or JSON, see LoadFile). A user entry with a built-in name
// replaces that entry; a user alias that a built-in GPU also uses moves to
// the user's GPU.
func WithUserFile(path string) (*DB, error) {
	user, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	return withUser(user, path)
}

// WithUserData is WithUserFile for a file's contents, named name in
// messages and sources (the browser holds a file the user chose, with no
// path to open).
func WithUserData(name string, data []byte) (*DB, error) {
	user, err := ParseData(name, data)
	if err != nil {
		return nil, err
	}
	return withUser(user, name)
}

// withUser is the built-in database with user's GPUs, from file origin,
// over it.
func withUser(user []*GPU, origin string) (*DB, error) {
	b, err := builtin()
	if err != nil {
		return nil, err
	}
	return newDB(b.entries, decoded(user), origin+": ")
}

// newDB indexes base entries overlaid with user entries; origin ("FILE: ")
// prefixes its errors, which only a user's entries can cause.
func newDB(base, user []*dbEntry, origin string) (*DB, error) {
	byName := map[string]*dbEntry{}
	for _, e := range base {
		byName[normalize(e.name)] = e
	}
	for _, e := range user {
		byName[normalize(e.name)] = e
	}
	db := &DB{index: map[string]*dbEntry{}}
	for k, e := range byName {
		db.entries = append(db.entries, e)
		db.index[k] = e
	}
	sort.Slice(db.entries, func(i, j int) bool { return db.entries[i].name < db.entries[j].name })
	isUser := map[*dbEntry]bool{}
	for _, e := range user {
		isUser[e] = true
	}
	// Built-in aliases first, then the user's, which may take over a
	// built-in alias (a user's "a100" is their measured A100) but never a
	// GPU's name.
	aliasOwner := map[string]*dbEntry{}
	for _, pass := range []bool{false, true} {
		for _, e := range db.entries {
			if isUser[e] != pass {
				continue
			}
			for _, a := range e.aliases {
				k := normalize(a)
				if owner, ok := db.index[k]; ok && owner != e && aliasOwner[k] == nil {
					// A user's GPU named like a built-in alias ("A100")
					// is what that name means now.
					if !pass && isUser[owner] {
						continue
					}
					return nil, fmt.Errorf("%salias %q of %s is the name of GPU %s", origin, a, e.name, owner.name)
				}
				if prev := aliasOwner[k]; prev != nil && prev != e && isUser[prev] == isUser[e] {
					return nil, fmt.Errorf("%salias %q claimed by both %s and %s", origin, a, prev.name, e.name)
				}
				aliasOwner[k] = e
				db.index[k] = e
			}
		}
	}
	return db, nil
}

// All returns copies of every GPU, sorted by name. A built-in entry that
// does not decode is a broken build (TestBuiltinData decodes every
// one), so it panics rather than return a short list.
func (db *DB) All() []*GPU {
	out := make([]*GPU, len(db.entries))
	for i, e := range db.entries {
		g, err := e.gpu()
		if err != nil {
			panic(fmt.Sprintf("hwdb: GPU %s: %v", e.name, err))
		}
		out[i] = g.Clone()
	}
	return out
}

// cloneAll copies every entry of a database, so that callers cannot edit
// the database's own.
func cloneAll[T interface{ Clone() T }](xs []T) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = x.Clone()
	}
	return out
}

// Lookup finds a GPU by name or alias, ignoring case, '-', '_' and spaces,
// and returns a copy. An unknown name gives an error suggesting the closest
// names.
func (db *DB) Lookup(name string) (*GPU, error) {
	if e, ok := db.index[normalize(name)]; ok {
		g, err := e.gpu() // a built-in entry's error names it
		if err != nil {
			return nil, err
		}
		return g.Clone(), nil
	}
	msg := fmt.Sprintf("unknown GPU %q", name)
	if s := db.suggest(name, 3); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, ", ") + "?"
	}
	return nil, fmt.Errorf("%s (onnxcost gpus lists all)", msg)
}

// All returns the built-in GPUs, sorted by name (nil if the embedded data
// is broken; see Builtin).
func All() []*GPU { return builtinAll(builtin) }

// Lookup finds a built-in GPU by name or alias (see DB.Lookup).
func Lookup(name string) (*GPU, error) { return builtinLookup(builtin, name) }

// builtinAll and builtinLookup serve the package-level functions over an
// embedded database (GPUs, runtime profiles), which load parses once.
func builtinAll[T any, DB interface{ All() []T }](load func() (DB, error)) []T {
	db, err := load()
	if err != nil {
		return nil
	}
	return db.All()
}

func builtinLookup[T any, DB interface{ Lookup(string) (T, error) }](load func() (DB, error), name string) (T, error) {
	db, err := load()
	if err != nil {
		var zero T
		return zero, err
	}
	return db.Lookup(name)
}

// normalize folds case and drops '-', '_' and spaces, so "A100 SXM4 80GB",
// "a100-sxm4-80gb" and "A100_SXM4_80GB" are one key.
func normalize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '-' || r == '_' || unicode.IsSpace(r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// suggest returns up to n GPU names close to the query. Closeness is the
// edit distance from the query to the best-matching beginning of a name or
// alias (so "A100X" is one edit from "a100..." names), then the distance
// to the whole key, then the name.
func (db *DB) suggest(query string, n int) []string {
	q := normalize(query)
	if q == "" {
		return nil
	}
	type cand struct {
		name          string
		prefix, whole int
	}
	best := map[*dbEntry]cand{}
	for k, e := range db.index {
		p, w := prefixDistance(q, k)
		c, ok := best[e]
		if !ok || p < c.prefix || (p == c.prefix && w < c.whole) {
			best[e] = cand{e.name, p, w}
		}
	}
	limit := max(1, len([]rune(q))/4)
	var cs []cand
	for _, c := range best {
		if c.prefix <= limit {
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.prefix != b.prefix {
			return a.prefix < b.prefix
		}
		if a.whole != b.whole {
			return a.whole < b.whole
		}
		return a.name < b.name
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// prefixDistance returns the Levenshtein distance from q to the closest
// prefix of key, and to key as a whole.
func prefixDistance(q, key string) (prefix, whole int) {
	a, b := []rune(q), []rune(key)
	// prev[j] = distance(a[:i], b[:j]) for the previous i.
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	prefix = prev[0]
	for _, d := range prev {
		prefix = min(prefix, d)
	}
	return prefix, prev[len(b)]
}
