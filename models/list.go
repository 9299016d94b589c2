package models

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ListEntry is one entry of the JSON listing (`zoo --format json`).
type ListEntry struct {
	Name   string      `json:"name"`
	Doc    string      `json:"doc"`
	Params []ListParam `json:"params"`
}

// ListParam is a parameter of a ListEntry.
type ListParam struct {
	Name    string `json:"name"`
	Default int64  `json:"default"`
	Doc     string `json:"doc"`
}

// Listing is entries as the JSON listing gives them.
func Listing(entries []Entry) []ListEntry {
	out := make([]ListEntry, 0, len(entries))
	for _, e := range entries {
		j := ListEntry{Name: e.Name, Doc: e.Doc, Params: []ListParam{}}
		for _, p := range e.Params {
			j.Params = append(j.Params, ListParam(p))
		}
		out = append(out, j)
	}
	return out
}

// WriteList writes the text listing of entries: each name and what it
// is, its parameters with their defaults and, for a single entry, what
// each parameter means.
func WriteList(w io.Writer, entries []Entry) error {
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "%-12s %s\n", e.Name, e.Doc)
		var ps []string
		for _, p := range e.Params {
			ps = append(ps, p.Name+"="+strconv.FormatInt(p.Default, 10))
		}
		fmt.Fprintf(&b, "%-12s params: %s\n", "", strings.Join(ps, " "))
		if len(entries) == 1 {
			for _, p := range e.Params {
				fmt.Fprintf(&b, "%-12s   %-10s %s\n", "", p.Name, p.Doc)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
