package render

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/onnxcost/onnxcost/ir"
)

// Output of a large graph (`shapes`, its table and its JSON) is formatted
// in chunks of nodes on up to GOMAXPROCS goroutines and written in chunk
// order, so the bytes are those of a serial run. On the 2-core machine
// (shared with other jobs), for the 112k-node graph of
// BenchmarkScaleStages, best of 4 runs at -cpu 1 and -cpu 2: the table
// took 68 ms on one goroutine and 45 ms on two, the JSON 37 and 23 ms.

// NodesPerChunk is how many top-level nodes (with their subgraphs) make a
// chunk: about 50 KB of table or 150 KB of JSON on an LLM, small enough
// that the few chunk buffers in flight stay in cache and cost little to
// fault in, large enough that handing chunks over costs nothing.
const NodesPerChunk = 256

// tableBytesPerNode is what a node takes in a table of WriteRows, for
// sizing chunk buffers (see WriteChunks): that of an LLM's node in the
// shapes table (the 112k-node graph of BenchmarkScaleStages: 190) with a
// margin.
const tableBytesPerNode = 256

// ChunkCount is the number of chunks for n top-level nodes (at least one,
// so that a graph without nodes still has its header written).
func ChunkCount(n int) int { return max(1, (n+NodesPerChunk-1)/NodesPerChunk) }

// ChunkNodes returns the top-level nodes of chunk k.
func ChunkNodes(nodes []*ir.Node, k int) []*ir.Node {
	lo := min(k*NodesPerChunk, len(nodes))
	return nodes[lo:min(lo+NodesPerChunk, len(nodes))]
}

// chunkWorkers is how many goroutines work on n chunks.
func chunkWorkers(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n)) }

// ForChunks calls work(k) for every chunk k in [0, n), concurrently, and
// returns when all are done. A panic in work is raised again in the
// caller's goroutine (see crew).
func ForChunks(n int, work func(k int)) {
	workers := chunkWorkers(n)
	if workers == 1 {
		for k := 0; k < n; k++ {
			work(k)
		}
		return
	}
	startCrew(workers, n, func(c *crew) {
		for k, ok := c.claim(); ok; k, ok = c.claim() {
			work(k)
		}
	}).wait()
}

// WriteChunks writes format(k, buf) for every chunk k in [0, n) to w in
// order of k, formatting chunks concurrently into a few reused buffers
// (format appends to buf, which it gets empty, and returns it). The
// buffers start with capacity size, what a chunk is expected to take:
// append grows a large slice by a quarter at a time, so a buffer grown
// from nothing to 150 KB had allocated 750 KB on the way (B/op of
// BenchmarkScaleStages/shapes-json). It returns the first write error;
// after one, nothing more is written. A panic in format is raised again in
// the caller's goroutine, as in ForChunks.
func WriteChunks(w io.Writer, n, size int, format func(k int, buf []byte) []byte) error {
	out := chunkWriter{w: w, buf: make([]byte, 0, size)}
	workers := chunkWorkers(n)
	if workers == 1 {
		for k := 0; k < n; k++ {
			out.buf = format(k, out.buf)
			out.flush()
		}
		return out.err
	}
	// Two buffers per worker: one being formatted, one formatted and
	// waiting for the writer. A worker takes a free buffer before it
	// claims a chunk, so the lowest chunk not yet written is always either
	// claimed by a worker that holds a buffer or free to claim, and the
	// writer never waits forever. The chunks claimed and not yet written
	// hold a buffer each, so chunk k+len(free) is claimed only after chunk
	// k is written, and they can share ready[k%len(ready)].
	free := make(chan []byte, 2*workers)
	free <- out.buf
	for len(free) < cap(free) {
		free <- make([]byte, 0, size)
	}
	ready := make([]chan []byte, cap(free))
	for k := range ready {
		ready[k] = make(chan []byte, 1)
	}
	c := startCrew(workers, n, func(c *crew) {
		for {
			var buf []byte
			select {
			case buf = <-free:
			case <-c.done:
				return
			}
			k, ok := c.claim()
			if !ok {
				return
			}
			ready[k%len(ready)] <- format(k, buf[:0])
		}
	})
	for k := 0; k < n; k++ {
		select {
		case out.buf = <-ready[k%len(ready)]:
		case <-c.done: // chunk k may never come: its worker panicked
			c.wait()
		}
		out.flush()
		free <- out.buf
	}
	c.wait()
	return out.err
}

// chunkWriter writes what is gathered in buf, keeping the first write
// error (after which it writes nothing more).
type chunkWriter struct {
	w   io.Writer
	buf []byte
	err error
}

// flush writes buf, and returns the first write error.
func (c *chunkWriter) flush() error {
	if c.err == nil && len(c.buf) > 0 {
		_, c.err = c.w.Write(c.buf)
	}
	c.buf = c.buf[:0]
	return c.err
}

// crew is a group of goroutines that claim chunks in order, and carry
// the first panic of any of them back to the goroutine that waits for
// them, where the caller may recover it (a panic in another goroutine
// would end the process with a trace).
type crew struct {
	n     int // chunks to claim
	next  atomic.Int64
	wg    sync.WaitGroup
	once  sync.Once
	done  chan struct{} // closed at the first panic
	value any           // the first panic's
}

// startCrew runs body on workers goroutines.
func startCrew(workers, n int, body func(c *crew)) *crew {
	c := &crew{n: n, done: make(chan struct{})}
	c.wg.Add(workers)
	for range workers {
		go func() {
			defer c.wg.Done()
			defer c.catch()
			body(c)
		}()
	}
	return c
}

// claim returns the next chunk no one has claimed, if any is left.
func (c *crew) claim() (k int, ok bool) {
	k = int(c.next.Add(1) - 1)
	return k, k < c.n
}

// catch, deferred in a worker, records its panic.
func (c *crew) catch() {
	if r := recover(); r != nil {
		c.once.Do(func() {
			c.value = r
			close(c.done)
		})
	}
}

// wait returns when every worker has, and raises the first panic again.
func (c *crew) wait() {
	c.wg.Wait()
	select {
	case <-c.done:
		panic(c.value)
	default:
	}
}
