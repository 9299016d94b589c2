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
	if f := uniqueNames(g); f != nil {
		g.nodeNames = f
		return
	}
	defer func() { g.nodeNames = uniqueNames(g) }()
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

// uniqueNames returns the hashes of the names of g's nodes and its
// subgraphs' as a nameFilter, or nil if some node has no name or two share
// one. It keeps 64-bit hashes, not the names: on a 112k-node graph, a map
// of the names was 3.5 MB and a tenth of the time of loading. Equal hashes
// count as a repeat (the slow path then settles it), so a collision costs
// time, never a wrong name.
func uniqueNames(g *Graph) *nameFilter {
	f := newNameFilter(g.NodeCount())
	var add func(g *Graph) bool
	add = func(g *Graph) bool {
		for _, nd := range g.Nodes {
			if nd.Name == "" || !f.add(nd.Name) {
				return false
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
	if !add(g) {
		return nil
	}
	return f
}

// nameFilter is a set of 64-bit hashes of node names: every name the
// nodes of a graph have had since NameNodes, and every name UniqueName
// handed out since (Graph.nodeNames). A name whose hash is not in it is
// no node's, which hasNodeNamed learns without comparing it with every
// node's name: that scan, once per name asked for, read each name of the
// same length, and names point into the model file, whose pages a
// command drops after reading (a fused 112k-node graph read 19 MB back).
// Passes name a node only by UniqueName or by an existing node's name, so
// the set stays complete; Verify checks it.
type nameFilter struct {
	seed  maphash.Seed
	slots []uint64 // open addressing; 0 is empty, a hash has its low bit set
	n     int
}

// newNameFilter returns an empty filter with room for about n names.
func newNameFilter(n int) *nameFilter {
	return &nameFilter{seed: maphash.MakeSeed(), slots: make([]uint64, 1<<bits.Len(uint(2*n)))}
}

func (f *nameFilter) hash(name string) uint64 { return maphash.String(f.seed, name) | 1 }

// add records name, reporting false if its hash was there already.
func (f *nameFilter) add(name string) bool {
	if 2*(f.n+1) > len(f.slots) { // load stays at most one half
		old := f.slots
		f.slots = make([]uint64, 2*len(old))
		for _, h := range old {
			if h != 0 {
				f.insert(h)
			}
		}
	}
	if !f.insert(f.hash(name)) {
		return false
	}
	f.n++
	return true
}

// insert puts h in its slot, reporting false if it was there.
func (f *nameFilter) insert(h uint64) bool {
	mask := uint64(len(f.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch f.slots[i] {
		case 0:
			f.slots[i] = h
			return true
		case h:
			return false
		}
	}
}

// has reports whether name's hash is in f.
func (f *nameFilter) has(name string) bool {
	h := f.hash(name)
	mask := uint64(len(f.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch f.slots[i] {
		case 0:
			return false
		case h:
			return true
		}
	}
}
