package ir

import (
	"strings"
	"testing"
)

// TestModulePath: the module path from a TorchScript export's node name;
// the dynamo exporter's name_scopes metadata wins over the name, and a
// path a pass set wins over both.
func TestModulePath(t *testing.T) {
	for name, want := range map[string]string{
		"/layer1/layer1.0/conv1/Conv": "/layer1/layer1.0/conv1",
		"/h.0/Add":                    "/h.0",
		"/Add":                        "",
		"Conv_12":                     "",
		"node_conv2d":                 "",
		"":                            "",
	} {
		if got := NamePath(name); got != want {
			t.Errorf("NamePath(%q) = %q, want %q", name, got, want)
		}
	}
	for list, want := range map[string]string{
		"['', 'layer1', 'layer1.0', 'layer1.0.conv1', 'conv2d']": "/layer1/layer1.0/layer1.0.conv1",
		`["", "h.0", "add"]`:      "/h.0",
		"['', 'add']":             "", // called from the root's forward
		"['']":                    "",
		"[]":                      "",
		"['', 'a', 'b'":           "", // not a list
		"['', 'a' 'b', 'c']":      "",
		"['', 'a/b', 'c']":        "", // a slash would split a module
		"['', 'it\\'s', 'op']":    "/it's",
		"not a list":              "",
		"['', '', 'x']":           "",
		"['', 'a', 'b',]":         "/a", // Python's trailing comma
		"  ['', 'enc', 'x']  ":    "/enc",
		"['', \"enc\", 'x', 'y']": "/enc/x",
	} {
		if got := scopesPath(list); got != want {
			t.Errorf("scopesPath(%q) = %q, want %q", list, got, want)
		}
	}
	n := &Node{Name: "/stem/conv/Conv"}
	if got := n.ModulePath(); got != "/stem/conv" {
		t.Errorf("from the name: %q", got)
	}
	n.SetMetadata([]KeyValue{{Key: "other", Value: "x"}, {Key: NameScopesKey, Value: "['', 'body', 'body.0', 'conv2d']"}})
	if got := n.ModulePath(); got != "/body/body.0" {
		t.Errorf("metadata over the name: %q", got)
	}
	n.SetModulePath("/set")
	if got := n.ModulePath(); got != "/set" {
		t.Errorf("set over metadata: %q", got)
	}
}

// TestReplaceNodesInheritsModulePath: a node a pass makes in place of
// others takes the module path they share when it has none of its own
// (a dynamo export's nodes, named without their modules); one that names
// its own keeps it.
func TestReplaceNodesInheritsModulePath(t *testing.T) {
	scopes := func(list string) []KeyValue { return []KeyValue{{Key: NameScopesKey, Value: list}} }
	for _, c := range []struct {
		name, want string
	}{
		{"fused_0", "/block/block.0"},
		{"/mine/Fused", "/mine"},
	} {
		g := NewGraph("g")
		x, _ := g.NewValue("x")
		g.AddInput(x)
		a, _ := g.NewValue("a")
		y, _ := g.NewValue("y")
		g.AddOutput(y)
		conv := &Node{Name: "node_conv2d", OpType: "Conv", Inputs: []*Value{x}, Outputs: []*Value{a}}
		conv.SetMetadata(scopes("['', 'block', 'block.0', 'block.0.conv', 'conv2d']"))
		relu := &Node{Name: "node_relu", OpType: "Relu", Inputs: []*Value{a}, Outputs: []*Value{y}}
		relu.SetMetadata(scopes("['', 'block', 'block.0', 'block.0.act', 'relu']"))
		for _, n := range []*Node{conv, relu} {
			if err := g.AddNode(n); err != nil {
				t.Fatal(err)
			}
		}
		fused := &Node{Name: c.name, OpType: "FusedConv", Inputs: []*Value{x}, Outputs: []*Value{y}}
		if err := g.ReplaceNodes([]*Node{conv, relu}, fused); err != nil {
			t.Fatal(err)
		}
		if got := fused.ModulePath(); got != c.want {
			t.Errorf("fused node %q: module path %q, want %q", c.name, got, c.want)
		}
	}
}

// TestModulePathWritten: a path a pass set is written under ModulePathKey
// only where the exporter's would differ, replaces one written earlier
// (one entry, the newest), wins over name_scopes when read back, and a
// value that is not a path is ignored.
func TestModulePathWritten(t *testing.T) {
	keys := func(kv []KeyValue) (out []string) {
		for _, e := range kv {
			out = append(out, e.Key+"="+e.Value)
		}
		return out
	}
	n := &Node{Name: "/stem/conv/Conv"}
	n.SetModulePath("/stem/conv")
	if md := n.metadataToWrite(); len(md) != 0 {
		t.Errorf("a path equal to the name's was written: %v", keys(md))
	}
	n.SetMetadata([]KeyValue{{Key: NameScopesKey, Value: "['', 'body', 'conv2d']"}, {Key: ModulePathKey, Value: "/old"}})
	n.SetModulePath("/new")
	md := n.metadataToWrite()
	if got := strings.Join(keys(md), " "); got != NameScopesKey+"=['', 'body', 'conv2d'] "+ModulePathKey+"=/new" {
		t.Errorf("written metadata %q", got)
	}
	back := &Node{Name: n.Name}
	back.SetMetadata(md)
	if got := back.ModulePath(); got != "/new" {
		t.Errorf("read back: %q, want /new", got)
	}
	back.SetMetadata([]KeyValue{{Key: ModulePathKey, Value: "not a path"}})
	if got := back.ModulePath(); got != "/stem/conv" {
		t.Errorf("a bad %s value: %q, want the name's /stem/conv", ModulePathKey, got)
	}
}

// FuzzScopesPath: any metadata value gives a path or "", never a panic,
// and a path it gives is one ModulePath consumers can split.
func FuzzScopesPath(f *testing.F) {
	for _, s := range []string{"['', 'a', 'a.0', 'x']", `["", "b", "y"]`, "['\\']", "[']", "[", "", "['', 'a', 'b',]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := scopesPath(s)
		if p != "" && (p[0] != '/' || p[len(p)-1] == '/' || strings.Contains(p, "//")) {
			t.Errorf("scopesPath(%q) = %q: not a module path", s, p)
		}
	})
}
