package ir

import "path/filepath"

// ImportFusedDomain makes the model import domain onnxcost at version 1
// when a node uses it, so ONNX tools (the checker, Netron) treat the fused
// ops as custom ops of a declared domain.
func (m *Model) ImportFusedDomain() {
	if m.Opset(FusedDomain) != 0 {
		return
	}
	for _, n := range m.Graph.Nodes {
		if n.Domain == FusedDomain {
			m.Opsets = append(m.Opsets, OpsetImport{Domain: FusedDomain, Version: 1})
			return
		}
	}
}

// ExternalFiles are the weight files the model (read from path) refers
// to: writing it copies from them, so none may be the output.
func (m *Model) ExternalFiles(path string) []string {
	var files []string
	seen := map[string]bool{}
	for _, v := range m.Graph.Initializers {
		if t := v.Const; t != nil && t.Loc.File != "" && !t.Loc.Missing && !seen[t.Loc.File] {
			seen[t.Loc.File] = true
			files = append(files, filepath.Join(filepath.Dir(path), t.Loc.File))
		}
	}
	return files
}
