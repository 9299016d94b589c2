// Package gctune sets the garbage collector's target and heap for the
// command line's runs, by the size of the graph they read.
package gctune

import (
	"os"
	"runtime"
	"runtime/debug"

	"github.com/onnxcost/onnxcost/internal/hugeheap"
)

// The collector's target depends on the graph's size, learnt from the
// reader before it allocates (SizeHeap); GOGC, when set, overrides both.
const (
	// gcPercentSmall holds from the start until a graph of bigNodes or
	// more is read. A small model's heap is a few MB, short-lived: each
	// collection there is overhead, and the first ones also fault in the
	// collector's own structures. DenseNet-121's `report` (910 nodes,
	// full weights) took 51–55 ms with 3 collections at the old 50%,
	// 44 ms with 400% or none (perf stat -r 20, 2-core VM).
	gcPercentSmall = 400
	// gcPercent is for a big graph: nearly all of the heap is the model's
	// graph, live to the end, and the default (collect when the heap
	// doubles) lets garbage pile up to the size of that graph. Collecting
	// at +50% keeps the peak nearer the live heap, and the extra
	// collections run on another core: on a 112k-node graph, `shapes`
	// peaked at 143 MB instead of 152 MB, with the same wall time.
	gcPercent = 50
	// bigNodes is where a graph's heap (~1 KB a node through `report`)
	// starts to matter.
	bigNodes = 8192
)

// gcTuned is whether Tune set the target (GOGC unset).
var gcTuned bool

// bigGraph is whether SizeHeap saw a graph of bigNodes or more.
var bigGraph bool

// Tune sets the collector's target for the start of the process.
func Tune() {
	if os.Getenv("GOGC") == "" {
		gcTuned = true
		debug.SetGCPercent(gcPercentSmall)
	}
}

// SizeHeap is ir.ReadOptions.Counted for the command: a graph of bigNodes
// or more gets the big-graph collector target and its heap backed by huge
// pages (hugeheap.Reserve: 2 KiB a node, about twice what the passes and
// the cost model come to — the 112k-node graph peaks at ~125 MB of heap
// in `report` — up to 512 MiB). Reserving for a small graph did not pay:
// it cost DenseNet-121's `report` 3–4 ms.
func SizeHeap(nodes int) {
	if nodes < bigNodes {
		return
	}
	bigGraph = true
	UseGCPercent()
	hugeheap.Reserve(min(int64(nodes)<<11, 512<<20))
}

// UseGCPercent sets the big-graph target (gcPercent): for a big graph, and
// for a process that stays up (`serve`), where the small-model target
// would let garbage grow to five times what is live.
func UseGCPercent() {
	if gcTuned {
		debug.SetGCPercent(gcPercent)
	}
}

// CollectBeforeCost runs a collection between the passes and the cost
// model for a big graph. The passes leave the heap at its most garbage
// (the collector's target is 50% above what is live) and, once the plan
// has moved the surviving nodes (ir.Graph.CompactNodes), the storage the
// reader gave all of them is garbage too; collected now, the cost model's
// allocations reuse it instead of growing the heap. On the 112k-node
// graph of scripts/bench_vs_onnx.sh `report` peaked at 158 MB without
// this collection and 144–145 MB with it (median of 5, /usr/bin/time
// -f %M, 2-core VM), for ~25 ms.
func CollectBeforeCost() {
	if bigGraph {
		runtime.GC()
	}
}

// ReleaseBeforeOutput hands the heap back to the system before a big
// graph's report is written, once the graph itself is garbage. Writing
// reads every printed name back from the model file (19 MB of pages on
// the 112k-node graph), and those pages came on top of a heap sized for
// the graph: 177 MB peak, 158 MB with the heap released first.
func ReleaseBeforeOutput() {
	if bigGraph {
		debug.FreeOSMemory()
	}
}
