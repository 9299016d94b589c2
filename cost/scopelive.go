package cost

import (
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

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
// torch.onnx records which modules called each op in the node's name
// ("/layer1/layer1.0/conv1/Conv": the module path, then the op;
// report.ModuleScoped). A value made in scope P and read by a node in
// scope C was passed as an argument into every module that contains C but
// not P, and the outermost of those returns last: the value lives until
// that module's last node. Names without scopes (a graph built op by op)
// keep last-use lifetimes. Locals a forward keeps beyond their last use
// (Python frees a local only when it is rebound or the forward returns)
// are not modelled: the graph does not say which names were rebound.

// scopeHeld extends each buffer's last use to the end of the outermost
// module its value was handed into (see above).
func (l *liveness) scopeHeld() {
	nodes := l.g.Nodes
	cuts := make([][]int, len(nodes))
	for i, n := range nodes {
		cuts[i] = scopeCuts(n.Name)
	}
	// ends[i][d-1] is the last node of the run of consecutive nodes from i
	// on that share node i's module path to depth d.
	ends := make([][]int, len(nodes))
	for i := len(nodes) - 1; i >= 0; i-- {
		ends[i] = make([]int, scopeDepth(cuts[i]))
		for d := range ends[i] {
			ends[i][d] = i
			if i+1 < len(nodes) && d < len(ends[i+1]) && sameScope(nodes[i].Name, cuts[i], nodes[i+1].Name, cuts[i+1], d+1) {
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
			k := commonScope(nodes[p].Name, cuts[p], n.Name, cuts[i])
			if k < len(ends[i]) {
				b.lastUse = max(b.lastUse, ends[i][k])
			}
		}
	}
}

// scopeCuts are the positions of the slashes in an exporter's node name
// ("/layer1/layer1.0/conv1/Conv": 0, 7, 16, 22), nil for a name without
// a module scope.
func scopeCuts(name string) []int {
	if !report.ModuleScoped(name) {
		return nil
	}
	var cuts []int
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			cuts = append(cuts, i)
		}
	}
	return cuts
}

// scopeDepth is the number of modules in a name's path (the last part is
// the op).
func scopeDepth(cuts []int) int { return max(len(cuts)-1, 0) }

// sameScope reports whether two names share their module path to depth d.
func sameScope(a string, ca []int, b string, cb []int, d int) bool {
	if scopeDepth(ca) < d || scopeDepth(cb) < d {
		return false
	}
	return a[:ca[d]] == b[:cb[d]]
}

// commonScope is the depth of the longest module path two names share.
func commonScope(a string, ca []int, b string, cb []int) int {
	k := 0
	for k < scopeDepth(ca) && k < scopeDepth(cb) && sameScope(a, ca, b, cb, k+1) {
		k++
	}
	return k
}
