package main

import "github.com/onnxcost/onnxcost/cost/render"

// The report's JSON is streamed in chunks of nodes by the writer the
// shapes output uses (see render.WriteChunks).
const nodesPerChunk = render.NodesPerChunk

var (
	chunkCount  = render.ChunkCount
	writeChunks = render.WriteChunks
)
