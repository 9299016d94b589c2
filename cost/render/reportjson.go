package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/onnxcost/onnxcost/cost/report"
)

// WriteReportJSON writes r exactly as an indented json.Encoder with HTML
// left unescaped does (writeJSON), but streams its nodes: each chunk of rows is encoded into a
// reused buffer and written in order (writeChunks). Encoding the whole
// report at once held it twice, compact and then indented, each grown by
// doubling: on a 112k-node LLaMA-shaped graph (42 MB of JSON) `report
// --format json` peaked 40 MB above the text report (about 220 MB
// resident instead of 180 MB). cmd/onnxcost's TestReportJSONStreamed holds it
// to writeJSON's bytes.
func WriteReportJSON(w io.Writer, r *report.Report) error {
	if len(r.Nodes) == 0 {
		return writeJSON(w, r)
	}
	head := *r
	head.Nodes = []report.NodeCost{}
	var hb bytes.Buffer
	if err := writeJSON(&hb, &head); err != nil {
		return err
	}
	// Newlines inside strings are escaped, and the other "nodes" keys (in
	// totals and unsupported_ops) are nested deeper: the marker can only
	// be the report's own list.
	const marker = "\n  \"nodes\": [],\n"
	before, after, ok := bytes.Cut(hb.Bytes(), []byte(marker))
	if !ok {
		return fmt.Errorf("report: no %q in the JSON written", marker)
	}
	// Every number of a report is finite (cost.Analyze sanitizes them),
	// so encoding a row cannot fail; were one to, nothing more is written
	// and the error returned.
	var (
		once   sync.Once
		rowErr error
	)
	if _, err := w.Write(before); err != nil {
		return err
	}
	chunks := ChunkCount(len(r.Nodes))
	sw := &stopWriter{w: w}
	err := WriteChunks(sw, chunks, NodesPerChunk*reportJSONBytesPerNode, func(k int, b []byte) []byte {
		buf := bytes.NewBuffer(b)
		if k == 0 {
			buf.WriteString("\n  \"nodes\": [")
		}
		enc := json.NewEncoder(buf)
		// An entry of nodes[] sits two levels deep.
		enc.SetIndent("    ", "  ")
		enc.SetEscapeHTML(false)
		lo := k * NodesPerChunk
		for i := lo; i < min(lo+NodesPerChunk, len(r.Nodes)); i++ {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString("\n    ")
			if err := enc.Encode(&r.Nodes[i]); err != nil {
				once.Do(func() { rowErr = fmt.Errorf("report: node %q: %w", r.Nodes[i].Name, err) })
				sw.stop.Store(true)
				return b[:0]
			}
			buf.Truncate(buf.Len() - 1) // Encode's newline
		}
		if k == chunks-1 {
			buf.WriteString("\n  ],\n")
			buf.Write(after)
		}
		return buf.Bytes()
	})
	if sw.stop.Load() {
		return rowErr
	}
	return err
}

// stopWriter writes to w until stop is set, then fails every write (so
// writeChunks writes nothing after a chunk that could not be encoded:
// chunk k is written only after its formatting returned).
type stopWriter struct {
	w    io.Writer
	stop atomic.Bool
}

func (s *stopWriter) Write(p []byte) (int, error) {
	if s.stop.Load() {
		return 0, errStopped
	}
	return s.w.Write(p)
}

// errStopped is stopWriter's error once stopped.
var errStopped = errors.New("stopped after an encoding error")

// reportJSONBytesPerNode is what a report row takes in JSON, for sizing
// chunk buffers: an LLM's fused rows (the 112k-node graph of
// BenchmarkScaleStages: 1.5 kB) with a margin.
const reportJSONBytesPerNode = 2048

// writeJSON writes v indented by two spaces, HTML left unescaped: the
// form of every JSON output of the command line.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
