package main

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
	"text/tabwriter"
)

// TestColumnsMatchTabwriter: the column writer must give tabwriter's bytes
// for any mix of line shapes (cells per line vary, as input, node and
// output lines of `shapes` do, and as nested subgraph lines do), with
// multi-byte runes and special bytes (which go through tabwriter itself).
func TestColumnsMatchTabwriter(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"", "a", "bb", "relu_1", "héllo", "→x", "with\ttab", "x\xffy", "some longer cell text"}
	for trial := 0; trial < 500; trial++ {
		var lines [][]string
		var want bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
		for l := rng.Intn(12); l >= 0; l-- {
			cells := make([]string, 1+rng.Intn(5))
			for k := range cells {
				cells[k] = words[rng.Intn(len(words))]
				if trial%2 == 0 && strings.ContainsAny(cells[k], "\t\xff") {
					cells[k] = "plain"
				}
			}
			lines = append(lines, cells)
			tw.Write([]byte(strings.Join(cells, "\t") + "\n"))
		}
		tw.Flush()
		var got bytes.Buffer
		err := writeColumns(&got, func(add func(cells ...string)) {
			for _, l := range lines {
				add(l...)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("trial %d:\ngot\n%q\nwant\n%q", trial, got.String(), want.String())
		}
	}
}
