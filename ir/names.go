package ir

import "strconv"

// NameNodes gives every unnamed node of g (and its subgraphs) a name, and
// makes duplicate names unique, so reports, diffs and graphs can refer to
// nodes by name. Generated names are "<OpType>_<k>" with k counting per op
// type in topological order, so they are stable for a given file.
func NameNodes(g *Graph) {
	used := make(map[string]bool, g.NodeCount())
	clash := false // an unnamed node or a repeated name
	var collect func(g *Graph)
	collect = func(g *Graph) {
		for _, n := range g.Nodes {
			if n.Name == "" || used[n.Name] {
				clash = true
			} else {
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
	if !clash {
		return // every name is already unique
	}
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
