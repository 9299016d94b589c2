package cost

import "github.com/onnxcost/onnxcost/ir"

// Module-scoped lifetimes of an eager PyTorch call. Python holds every
// argument of a call on the caller's stack until the call returns, so a
// tensor handed to a module's forward stays allocated until that module
// returns, however early its last reader inside runs. torchvision's
// ResNet keeps the max-pool output for all of layer1 (`x = self.layer1(x)`
// frees it only when layer1 returns) and a bottleneck's input for its
// whole block (the identity it adds at the end), which is what the
// allocator's peak shows: our H100 ResNet-50 fp32 batch-128 eager call
// peaked at 1,446 MiB, exactly weights + image + that max-pool output +
// three 392 MiB block tensors at the downsample's BatchNorm, where
// last-use freeing gives 1,274.
//
// torch.onnx records which modules called each op (ir.Node.ModulePath:
// the node's name "/layer1/layer1.0/conv1/Conv", or the dynamo exporter's
// metadata). A value made in module path P and read by a node in path C
// was passed as an argument into every module that contains C but not P,
// and the outermost of those returns last: the value lives until that
// module's last node. Nodes without a module path (a graph built op by
// op) keep last-use lifetimes. Locals a forward keeps beyond their last use
// (Python frees a local only when it is rebound or the forward returns)
// are not modelled: the graph does not say which names were rebound.

// scopeHeld extends each buffer's last use to the end of the outermost
// module its value was handed into (see above).
func (l *liveness) scopeHeld() {
	nodes := l.g.Nodes
	paths := make([]string, len(nodes))
	cuts := make([][]int, len(nodes))
	for i, n := range nodes {
		paths[i] = n.ModulePath()
		cuts[i] = scopeCuts(paths[i])
	}
	// ends[i][d-1] is the last node of the run of consecutive nodes from i
	// on that share node i's module path to depth d.
	ends := make([][]int, len(nodes))
	for i := len(nodes) - 1; i >= 0; i-- {
		ends[i] = make([]int, scopeDepth(cuts[i]))
		for d := range ends[i] {
			ends[i][d] = i
			if i+1 < len(nodes) && d < len(ends[i+1]) && sameScope(paths[i], cuts[i], paths[i+1], cuts[i+1], d+1) {
				ends[i][d] = ends[i+1][d]
			}
		}
	}
	pos := make(map[*ir.Node]int, len(nodes))
	for i, n := range nodes {
		pos[n] = i
	}
	for i, n := range nodes {
		if len(ends[i]) == 0 {
			continue
		}
		for _, v := range n.Inputs {
			b := l.bufOf[v].root()
			if b == nil || v.Producer == nil {
				continue
			}
			p, ok := pos[v.Producer]
			if !ok {
				continue
			}
			k := commonScope(paths[p], cuts[p], paths[i], cuts[i])
			if k < len(ends[i]) {
				b.lastUse = max(b.lastUse, ends[i][k])
			}
		}
	}
}

// scopeCuts are where a module path's prefixes end: the positions of its
// slashes, then its length ("/layer1/layer1.0/conv1": 0, 7, 16, 22, so
// depth 3 and prefix 2 is "/layer1/layer1.0"); nil for no path.
func scopeCuts(path string) []int {
	if path == "" {
		return nil
	}
	var cuts []int
	for i := 0; i < len(path); i++ {
		if path[i] == '/' {
			cuts = append(cuts, i)
		}
	}
	return append(cuts, len(path))
}

// scopeDepth is the number of modules in a path.
func scopeDepth(cuts []int) int { return max(len(cuts)-1, 0) }

// sameScope reports whether two paths share their modules to depth d.
func sameScope(a string, ca []int, b string, cb []int, d int) bool {
	if scopeDepth(ca) < d || scopeDepth(cb) < d {
		return false
	}
	return a[:ca[d]] == b[:cb[d]]
}

// commonScope is the depth of the longest module path two paths share.
func commonScope(a string, ca []int, b string, cb []int) int {
	k := 0
	for k < scopeDepth(ca) && k < scopeDepth(cb) && sameScope(a, ca, b, cb, k+1) {
		k++
	}
	return k
}
