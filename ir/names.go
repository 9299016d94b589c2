package ir

import (
	"hash/maphash"
	"math/bits"
	"strconv"
)

// NameNodes gives every unnamed node of g (and its subgraphs) a name, and
// makes duplicate names unique, so reports, diffs and graphs can refer to
// nodes by name. Generated names are "<OpType>_<k>" with k counting per op
// type in topological order, so they are stable for a given file.
func NameNodes(g *Graph) {
	if namesUnique(g) {
		return
	}
	used := make(map[string]bool, g.NodeCount())
	var collect func(g *Graph)
	collect = func(g *Graph) {
		for _, n := range g.Nodes {
			if n.Name != "" {
				used[n.Name] = true
			}
			if n.hasSubgraphs() {
				for _, sg := range n.Subgraphs() {
					collect(sg)
				}
			}
		}
	}
	collect(g)
	seen := map[string]bool{}
	counter := map[string]int{}
	var assign func(g *Graph)
	assign = func(g *Graph) {
		for _, n := range g.Nodes {
			if n.Name == "" || seen[n.Name] {
				base := n.Name
				if base == "" {
					base = n.OpType
				}
				for {
					counter[base]++
					cand := base + "_" + strconv.Itoa(counter[base])
					if !used[cand] && !seen[cand] {
						n.Name = cand
						break
					}
				}
			}
			seen[n.Name] = true
			for _, sg := range n.Subgraphs() {
				assign(sg)
			}
		}
	}
	assign(g)
}

// namesUnique reports whether every node of g and its subgraphs has a name
// and no two share one. It keeps a set of 64-bit hashes of the names, not
// the names: on a 112k-node graph, a map of the names was 3.5 MB and a
// tenth of the time of loading. Equal hashes count as a repeat (the slow
// path then settles it), so a collision costs time, never a wrong name.
func namesUnique(g *Graph) bool {
	n := g.NodeCount()
	size := 1 << bits.Len(uint(2*n)) // load below one half
	set := make([]uint64, size)
	seed := maphash.MakeSeed()
	var add func(g *Graph) bool
	add = func(g *Graph) bool {
		for _, nd := range g.Nodes {
			if nd.Name == "" {
				return false
			}
			h := maphash.String(seed, nd.Name) | 1 // 0 marks an empty slot
			for i := h & uint64(size-1); ; i = (i + 1) & uint64(size-1) {
				if set[i] == 0 {
					set[i] = h
					break
				}
				if set[i] == h {
					return false
				}
			}
			if nd.hasSubgraphs() {
				for _, sg := range nd.Subgraphs() {
					if !add(sg) {
						return false
					}
				}
			}
		}
		return true
	}
	return add(g)
}
