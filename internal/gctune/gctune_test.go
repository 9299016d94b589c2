package gctune

import (
	"runtime/debug"
	"testing"
)

// TestSizeHeap: a small graph keeps the start-up collector target, a big
// one gets the big-graph target; GOGC set by the user (gcTuned false) is
// left alone.
func TestSizeHeap(t *testing.T) {
	saved, savedTuned := debug.SetGCPercent(100), gcTuned
	defer func() { debug.SetGCPercent(saved); gcTuned = savedTuned }()
	for _, c := range []struct {
		tuned bool
		nodes int
		want  int
	}{
		{true, bigNodes - 1, gcPercentSmall},
		{true, bigNodes, gcPercent},
		{false, bigNodes, gcPercentSmall},
	} {
		gcTuned = c.tuned
		debug.SetGCPercent(gcPercentSmall)
		SizeHeap(c.nodes)
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("tuned %v, %d nodes: collector target %d%%, want %d%%", c.tuned, c.nodes, got, c.want)
		}
	}
}
