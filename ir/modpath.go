package ir

import "strings"

// The module path of a node: which nn.Module calls of the exported
// PyTorch program ran it. The eager runtime's host cost (a module's op
// pays more dispatch than a bare op), eager memory (a module's argument
// lives until the module returns) and activation checkpointing (repeated
// blocks) all need it. PyTorch's two ONNX exporters record it differently:
//
//   - the TorchScript exporter (torch.onnx.export before PyTorch 2.9's
//     default changed) names the node after it: "/layer1/layer1.0/conv1/Conv"
//     is op Conv called from module layer1.0's conv1;
//   - the dynamo exporter (torch.onnx.export(dynamo=True), the default
//     since) names nodes "node_conv2d" and puts the path in the node's
//     metadata_props: pkg.torch.onnx.name_scopes holds the repr of a
//     Python list of cumulative module paths, the root's "" first and the
//     node's own name last (['', 'layer1', 'layer1.0', 'layer1.0.conv1',
//     'conv2d']).
//
// Both are read into one form, the modules from the outermost in, joined
// by "/" after a leading "/": "/layer1/layer1.0/conv1" and
// "/layer1/layer1.0/layer1.0.conv1". The components differ between the
// two, but within one model they are consistent, and every use compares
// paths of one model by prefix.

// NameScopesKey is the metadata_props key of the dynamo exporter's
// module path.
const NameScopesKey = "pkg.torch.onnx.name_scopes"

// ModulePathKey is the metadata_props key under which a written model
// keeps the module path a pass gave a node (SetModulePath), in this
// package's form ("/layer1/layer1.0"): a fused node's name is one of its
// members' and a dynamo export's new node has no name_scopes, so without
// it `onnxcost optimize`'s output would lose the paths its passes
// inherited, and checkpoint blocks, eager memory and module dispatch of
// the re-read model would differ from the original's.
const ModulePathKey = "onnxcost.module_path"

// ModulePath is the module path of n ("" for a node called from no
// module): the one a pass gave it (SetModulePath), else the one a written
// plan kept (ModulePathKey), else the exporter's, from metadata_props or
// from the node's name (see above).
func (n *Node) ModulePath() string {
	if n.extra != nil && n.extra.moduleSet {
		return n.extra.module
	}
	if p, ok := n.keptModulePath(); ok {
		return p
	}
	return n.exportedModulePath()
}

// keptModulePath is the ModulePathKey entry, when it holds a path ("" or
// starting with "/"; anything else is ignored).
func (n *Node) keptModulePath() (string, bool) {
	for _, kv := range n.Metadata() {
		if kv.Key == ModulePathKey && (kv.Value == "" || kv.Value[0] == '/') {
			return kv.Value, true
		}
	}
	return "", false
}

// exportedModulePath is the exporter's module path of n: its name_scopes
// entry, else its name's.
func (n *Node) exportedModulePath() string {
	for _, kv := range n.Metadata() {
		if kv.Key == NameScopesKey {
			return scopesPath(kv.Value)
		}
	}
	return NamePath(n.Name)
}

// metadataToWrite is n's metadata_props as a file keeps them: with the
// module path a pass gave n under ModulePathKey (replacing an older one)
// where it differs from the exporter's, so that reading the file back
// gives every node the module path it has now.
func (n *Node) metadataToWrite() []KeyValue {
	md := n.Metadata()
	if n.extra == nil || !n.extra.moduleSet {
		return md
	}
	out := make([]KeyValue, 0, len(md)+1)
	for _, kv := range md {
		if kv.Key != ModulePathKey {
			out = append(out, kv)
		}
	}
	if p := n.extra.module; p != n.exportedModulePath() {
		out = append(out, KeyValue{Key: ModulePathKey, Value: p})
	}
	return out
}

// SetModulePath gives n a module path of its own, as a pass does for a
// node it made in place of others (ReplaceNodes: their common path).
func (n *Node) SetModulePath(p string) {
	n.editExtra(func(e *nodeExtra) { e.module, e.moduleSet = p, true })
}

// NamePath is the module path a TorchScript-exported node name carries:
// "/layer1/layer1.0/conv1/Conv" → "/layer1/layer1.0/conv1"; "" for a name
// with no module before the op ("/Add", "Conv_12", "node_add").
func NamePath(name string) string {
	if len(name) < 2 || name[0] != '/' {
		return ""
	}
	i := strings.LastIndexByte(name, '/')
	if i <= 0 {
		return ""
	}
	return name[:i]
}

// scopesPath turns the dynamo exporter's name_scopes list into a module
// path; "" when it holds no module or is not a list of quoted strings.
func scopesPath(list string) string {
	items, ok := pyStrings(list)
	if !ok || len(items) < 3 {
		return ""
	}
	var b strings.Builder
	for _, s := range items[1 : len(items)-1] {
		if s == "" || strings.Contains(s, "/") {
			return ""
		}
		b.WriteByte('/')
		b.WriteString(s)
	}
	return b.String()
}

// pyStrings reads the repr of a Python list of strings: ['a', "b"].
// Escapes are taken as the escaped byte (module paths have none).
func pyStrings(s string) ([]string, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	var out []string
	rest := strings.TrimSpace(s[1 : len(s)-1])
	for rest != "" {
		q := rest[0]
		if q != '\'' && q != '"' {
			return nil, false
		}
		var b strings.Builder
		i := 1
		for ; i < len(rest) && rest[i] != q; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
			}
			b.WriteByte(rest[i])
		}
		if i >= len(rest) {
			return nil, false
		}
		out = append(out, b.String())
		rest = strings.TrimSpace(rest[i+1:])
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return nil, false
		}
		rest = strings.TrimSpace(rest[1:])
	}
	return out, true
}

// commonModulePath is the longest module path all of nodes share.
func commonModulePath(nodes []*Node) string {
	common, first := "", true
	for _, m := range nodes {
		p := m.ModulePath()
		if first {
			common, first = p, false
			continue
		}
		for common != "" && p != common && !strings.HasPrefix(p, common+"/") {
			common = NamePath(common)
		}
	}
	return common
}
