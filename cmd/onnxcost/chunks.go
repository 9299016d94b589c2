package main

import "github.com/onnxcost/onnxcost/cost/render"

// The report's JSON is streamed in chunks of nodes (render.WriteReportJSON).
var nodesPerChunk, writeReportJSON = render.NodesPerChunk, render.WriteReportJSON
