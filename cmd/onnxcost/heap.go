package main

import (
	"os"
	"runtime/debug"

	"github.com/onnxcost/onnxcost/internal/hugeheap"
)

// The collector's target depends on the graph's size, learnt from the
// reader before it allocates (sizeHeap); GOGC, when set, overrides both.
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

// gcTuned is whether tuneGC set the target (GOGC unset).
var gcTuned bool

// tuneGC sets the collector's target for the start of the process.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		gcTuned = true
		debug.SetGCPercent(gcPercentSmall)
	}
}

// sizeHeap is ir.ReadOptions.Counted for the command: a graph of bigNodes
// or more gets the big-graph collector target and its heap backed by huge
// pages (hugeheap.Reserve: 2 KiB a node, about twice what the passes and
// the cost model come to — the 112k-node graph peaks at ~125 MB of heap
// in `report` — up to 512 MiB). Reserving for a small graph did not pay:
// it cost DenseNet-121's `report` 3–4 ms.
func sizeHeap(nodes int) {
	if nodes < bigNodes {
		return
	}
	useGCPercent()
	hugeheap.Reserve(min(int64(nodes)<<11, 512<<20))
}

// useGCPercent sets the big-graph target (gcPercent): for a big graph, and
// for a process that stays up (`serve`), where the small-model target
// would let garbage grow to five times what is live.
func useGCPercent() {
	if gcTuned {
		debug.SetGCPercent(gcPercent)
	}
}
