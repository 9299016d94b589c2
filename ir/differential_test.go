package ir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// onnxSummary is the per-model summary printed by scripts/onnx_summary.py
// (python onnx, the reference decoder) and computed here from the Go
// reader; the differential test requires them to be equal.
type onnxSummary struct {
	Path      string            `json:"path"`
	Error     string            `json:"error,omitempty"`
	IRVersion int64             `json:"ir_version"`
	Nodes     int               `json:"nodes"`
	Ops       map[string]int    `json:"ops"`
	Domains   []string          `json:"domains"`
	Opsets    map[string]int64  `json:"opsets"`
	Attrs     int               `json:"attrs"`
	Inits     map[string]string `json:"inits"`
	Inputs    map[string]string `json:"inputs"`
	Outputs   map[string]string `json:"outputs"`
	Functions []string          `json:"functions"`
}

// goSummary computes the summary from a model read by ReadFile.
func goSummary(path string, m *Model) onnxSummary {
	s := onnxSummary{Path: path, IRVersion: m.IRVersion, Ops: map[string]int{}, Opsets: map[string]int64{},
		Inits: map[string]string{}, Inputs: map[string]string{}, Outputs: map[string]string{}, Domains: []string{}, Functions: []string{}}
	domains := map[string]bool{}
	var walk func(g *Graph)
	walk = func(g *Graph) {
		for _, n := range g.Nodes {
			s.Nodes++
			s.Ops[n.Domain+"::"+n.OpType]++
			domains[n.Domain] = true
			s.Attrs += len(n.Attrs)
			if len(n.FusedFrom) > 0 {
				s.Attrs++ // the fused_from attribute in the file
			}
			for _, sg := range n.Subgraphs() {
				walk(sg)
			}
		}
	}
	walk(m.Graph)
	for _, f := range m.Functions {
		walk(f.Body)
		s.Functions = append(s.Functions, f.Domain+"::"+f.Name)
	}
	for d := range domains {
		s.Domains = append(s.Domains, d)
	}
	sortStrings(s.Domains)
	sortStrings(s.Functions)
	for _, o := range m.Opsets {
		s.Opsets[o.Domain] = o.Version
	}
	for _, v := range m.Graph.Initializers {
		s.Inits[v.Name] = strconv.Itoa(int(v.Const.DType)) + ":" + intsText(v.Const.Dims)
	}
	for _, v := range m.Graph.Inputs {
		s.Inputs[v.Name] = summaryType(v.Declared)
	}
	for _, v := range m.Graph.Outputs {
		s.Outputs[v.Name] = summaryType(v.Declared)
	}
	return s
}

func sortStrings(xs []string) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// summaryType renders a declared type as the python script does.
func summaryType(t *TypeInfo) string {
	if t == nil {
		return "tensor:0:?"
	}
	kind := map[ValueKind]string{TensorValue: "tensor", SequenceValue: "seq", OptionalValue: "opt", MapValue: "map", SparseTensorValue: "sparse"}[t.Kind]
	shape := "?"
	if t.Shape.Ranked {
		parts := make([]string, len(t.Shape.Dims))
		for i, d := range t.Shape.Dims {
			parts[i] = d.String()
			if strings.HasPrefix(d.Sym, "?unk_") {
				parts[i] = "?"
			}
		}
		shape = "[" + strings.Join(parts, ",") + "]"
	}
	return fmt.Sprintf("%s:%d:%s", kind, t.DType, shape)
}

// TestDifferentialPythonONNX compares the Go reader with python onnx on
// every conformance model and fixture, running the python script once.
func TestDifferentialPythonONNX(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import onnx").Run(); err != nil {
		t.Skip("/usr/bin/python3 cannot import onnx (install python3-onnx): " + err.Error())
	}
	paths := append(append(conformanceModelsOrNone(), fixtureModels()...), featureModels()...)
	cmd := exec.Command("/usr/bin/python3", "../scripts/onnx_summary.py")
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\n"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("onnx_summary.py: %v\n%s", err, stderr.String())
	}
	ref := map[string]onnxSummary{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var s onnxSummary
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("bad summary line: %v", err)
		}
		ref[s.Path] = s
	}
	compared := 0
	defer func() { t.Logf("compared %d of %d models with python onnx", compared, len(paths)) }()
	for _, p := range paths {
		want, ok := ref[p]
		if !ok {
			t.Errorf("%s: no python summary", p)
			continue
		}
		m, err := ReadFile(p, ReadOptions{})
		if want.Error != "" {
			if err == nil {
				t.Logf("%s: python onnx fails (%s), Go reads it", p, want.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: python onnx reads it, Go fails: %v", p, err)
			continue
		}
		compared++
		got := goSummary(p, m)
		norm(&want)
		norm(&got)
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("%s: summaries differ\n go: %s\n py: %s", p, g, w)
		}
	}
}

// norm makes empty and nil collections compare equal.
func norm(s *onnxSummary) {
	if s.Ops == nil {
		s.Ops = map[string]int{}
	}
	if s.Opsets == nil {
		s.Opsets = map[string]int64{}
	}
	if s.Inits == nil {
		s.Inits = map[string]string{}
	}
	if s.Inputs == nil {
		s.Inputs = map[string]string{}
	}
	if s.Outputs == nil {
		s.Outputs = map[string]string{}
	}
	if s.Domains == nil {
		s.Domains = []string{}
	}
	if s.Functions == nil {
		s.Functions = []string{}
	}
}
