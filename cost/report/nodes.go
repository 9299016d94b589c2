package report

// FindNode finds a node by name, or the fused node that absorbed it.
func (r *Report) FindNode(name string) *NodeCost {
	for i := range r.Nodes {
		if r.Nodes[i].Name == name {
			return &r.Nodes[i]
		}
	}
	for i := range r.Nodes {
		for _, src := range r.Nodes[i].FusedFrom {
			if src == name {
				return &r.Nodes[i]
			}
		}
	}
	return nil
}
