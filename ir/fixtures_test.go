package ir_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// The real-model fixtures are exported from PyTorch by
// scripts/export_fixtures.py, weights stripped: each NAME.onnx keeps every
// initializer's dims and dtype but its data lives in a NAME.onnx.data that
// is not committed. Next to it, NAME.shapes.json holds what
// onnx.shape_inference (onnx 1.12, data_prop on) says of every graph
// input, output, initializer and value_info entry. Regenerate both with the
// script; there is no -update flag because the reference comes from Python.

const fixtureDir = "../testdata/models"

// Size budget for the committed fixtures: graph-only files stay small.
const (
	maxFixtureBytes      = 512 << 10       // one .onnx
	maxFixtureTotalBytes = 3<<20 + 512<<10 // all of testdata/models (DenseNet-121 took it past 3 MiB)
)

// refTensor is one entry of NAME.shapes.json. Shape is nil when onnx did
// not know the rank; a dim is a float64 (dim_value), a string (dim_param)
// or nil (unknown).
type refTensor struct {
	DType string `json:"dtype"`
	Shape *[]any `json:"shape"`
}

func fixtureFiles(t *testing.T) []string {
	t.Helper()
	return fixtureGlob(t, "*.onnx", "fixtures")
}

// fixtureGlob lists the fixture files matching pattern, sorted; none is a
// failure naming what (they come from scripts/export_fixtures.py, and a
// test that loops over nothing would pass without checking anything).
func fixtureGlob(t *testing.T, pattern, what string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixtureDir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no %s in %s: run scripts/export_fixtures.py", what, fixtureDir)
	}
	sort.Strings(files)
	return files
}

func fixtureName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".onnx")
}

func loadRefShapes(t *testing.T, path string) map[string]refTensor {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string]refTensor
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return ref
}

// TestFixtureFiles checks that fixtures and reference shapes come in
// pairs, that no weight file was committed, and that the files stay small.
func TestFixtureFiles(t *testing.T) {
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	have := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		total += info.Size()
		have[e.Name()] = true
		if strings.HasSuffix(e.Name(), ".data") {
			t.Errorf("%s: weight data must not be committed (fixtures are graph-only)", e.Name())
		}
		if strings.HasSuffix(e.Name(), ".onnx") && info.Size() > maxFixtureBytes {
			t.Errorf("%s: %d bytes, over the %d-byte budget for a graph-only fixture", e.Name(), info.Size(), maxFixtureBytes)
		}
	}
	for _, f := range fixtureFiles(t) {
		if !have[fixtureName(f)+".shapes.json"] {
			t.Errorf("%s has no %s.shapes.json", filepath.Base(f), fixtureName(f))
		}
	}
	for name := range have {
		if base, ok := strings.CutSuffix(name, ".shapes.json"); ok && !have[base+".onnx"] {
			t.Errorf("%s has no %s.onnx", name, base)
		}
	}
	if total > maxFixtureTotalBytes {
		t.Errorf("testdata/models holds %d bytes, over the %d budget", total, maxFixtureTotalBytes)
	}
}

// TestFixturesGraphOnly reads every fixture and checks that the missing
// weight file is no error and that every large initializer kept its dims
// and dtype while its data is marked missing.
func TestFixturesGraphOnly(t *testing.T) {
	for _, path := range fixtureFiles(t) {
		name := fixtureName(path)
		t.Run(name, func(t *testing.T) {
			m, err := ir.ReadFile(path, ir.ReadOptions{})
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			ref := loadRefShapes(t, filepath.Join(fixtureDir, name+".shapes.json"))
			missing := 0
			for _, v := range m.Graph.Initializers {
				c := v.Const
				if c == nil {
					t.Errorf("initializer %q has no tensor", v.Name)
					continue
				}
				r, ok := ref[v.Name]
				if !ok {
					t.Errorf("initializer %q is not in the reference", v.Name)
					continue
				}
				if want := refDims(r); !equalInts(c.Dims, want) || c.DType.String() != r.DType {
					t.Errorf("initializer %q: %s %v, want %s %v", v.Name, c.DType, c.Dims, r.DType, want)
				}
				if c.Loc.File != "" {
					if !c.Loc.Missing {
						t.Errorf("initializer %q: data file %q should be missing", v.Name, c.Loc.File)
					}
					missing++
				}
			}
			if missing == 0 {
				t.Errorf("no initializer refers to external data: the fixture is not graph-only")
			}
		})
	}
}

// refDims returns the dims of a fully known reference shape (initializers).
func refDims(r refTensor) []int64 {
	if r.Shape == nil {
		return nil
	}
	dims := make([]int64, 0, len(*r.Shape))
	for _, d := range *r.Shape {
		f, ok := d.(float64)
		if !ok {
			return nil
		}
		dims = append(dims, int64(f))
	}
	return dims
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// shapeTally counts one fixture's comparison.
type shapeTally struct {
	compared int // tensors named in the reference
	matched  int // same dtype and, dim by dim, the same shape
	knewMore int // equal where onnx knew, and ours settled a dim onnx left unknown
	differs  []string
}

// TestFixtureShapes runs onnxcost's shape inference on every fixture with
// no bindings and compares every tensor onnx.shape_inference described.
// Where onnx knows a dim (a number, or a symbol of a graph input) ours must
// be the same; where onnx left it unknown (no value, or a name the exporter
// invented for a dim it could not compute) ours is accepted and counted.
func TestFixtureShapes(t *testing.T) {
	var summary []string
	for _, path := range fixtureFiles(t) {
		name := fixtureName(path)
		t.Run(name, func(t *testing.T) {
			ref := loadRefShapes(t, filepath.Join(fixtureDir, name+".shapes.json"))
			m, err := ir.ReadFile(path, ir.ReadOptions{})
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if err := ir.InlineFunctions(m); err != nil {
				t.Fatalf("inline functions: %v", err)
			}
			res, err := ir.InferShapes(m, ir.InferOptions{})
			if err != nil {
				t.Fatalf("infer: %v", err)
			}
			if len(res.UnknownOps) > 0 {
				t.Errorf("ops with no shape rule: %s", strings.Join(res.UnknownOps, ", "))
			}
			tally := compareFixtureShapes(m.Graph, ref)
			for _, d := range tally.differs {
				t.Error(d)
			}
			line := fmt.Sprintf("%-20s compared %4d  matched %4d  onnx knew less %3d  differ %3d",
				name, tally.compared, tally.matched, tally.knewMore, len(tally.differs))
			t.Log(line)
			summary = append(summary, line)
		})
	}
	t.Log("per fixture:\n" + strings.Join(summary, "\n"))
}

// compareFixtureShapes compares the inferred values of g with ref, in
// name order so that messages are stable.
func compareFixtureShapes(g *ir.Graph, ref map[string]refTensor) shapeTally {
	inputSyms := graphInputSymbols(g)
	names := make([]string, 0, len(ref))
	for n := range ref {
		names = append(names, n)
	}
	sort.Strings(names)
	var tally shapeTally
	for _, n := range names {
		r := ref[n]
		tally.compared++
		v := g.Local(n)
		if v == nil {
			tally.differs = append(tally.differs, fmt.Sprintf("%s: not in our graph", n))
			continue
		}
		op := "initializer"
		if v.Producer != nil {
			op = v.Producer.OpType
		} else if !v.IsInitializer {
			op = "graph input"
		}
		ours := fmt.Sprintf("%s %s", v.DType, v.Shape)
		theirs := fmt.Sprintf("%s %s", r.DType, refShapeText(r))
		if v.DType.String() != r.DType {
			tally.differs = append(tally.differs, fmt.Sprintf("%s (%s): ours %s, onnx %s: dtype differs", n, op, ours, theirs))
			continue
		}
		more, why := compareShape(v.Shape, r, inputSyms)
		switch {
		case why != "":
			tally.differs = append(tally.differs, fmt.Sprintf("%s (%s): ours %s, onnx %s: %s", n, op, ours, theirs, why))
		case more:
			tally.knewMore++
		default:
			tally.matched++
		}
	}
	return tally
}

// compareShape returns why ours disagrees with the reference ("" when it
// does not), and whether ours settled something the reference left open.
func compareShape(ours ir.Shape, r refTensor, inputSyms map[string]bool) (more bool, why string) {
	if r.Shape == nil {
		return ours.Ranked, ""
	}
	if !ours.Ranked {
		return false, "ours is unranked"
	}
	if len(ours.Dims) != len(*r.Shape) {
		return false, "rank differs"
	}
	for i, rd := range *r.Shape {
		od := ours.Dims[i]
		switch x := rd.(type) {
		case float64:
			if !od.Is(int64(x)) {
				return false, fmt.Sprintf("dim %d: ours %s, onnx %d", i, od, int64(x))
			}
		case string:
			if !inputSyms[x] {
				// A name the exporter made up for a dim it could not
				// compute (e.g. "MatMullogits_dim_1"): onnx does not know it.
				more = more || !isFreshDim(od)
				continue
			}
			if od.Sym != x {
				return false, fmt.Sprintf("dim %d: ours %s, onnx %s", i, od, x)
			}
		default: // unknown to onnx
			more = more || !isFreshDim(od)
		}
	}
	return more, ""
}

// isFreshDim tells a dim inference could not settle ("?nonzero_0").
func isFreshDim(d ir.Dim) bool { return strings.HasPrefix(d.Sym, "?") }

// graphInputSymbols collects the dim_param names of the graph inputs: the
// only symbols the reference and our inference can both know by name.
func graphInputSymbols(g *ir.Graph) map[string]bool {
	syms := map[string]bool{}
	for _, in := range g.Inputs {
		if in.Declared == nil {
			continue
		}
		for _, d := range in.Declared.Shape.Dims {
			if !d.IsKnown() {
				syms[d.Sym] = true
			}
		}
	}
	return syms
}

func refShapeText(r refTensor) string {
	if r.Shape == nil {
		return "unranked"
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, d := range *r.Shape {
		if i > 0 {
			b.WriteByte(',')
		}
		switch x := d.(type) {
		case float64:
			fmt.Fprintf(&b, "%d", int64(x))
		case string:
			b.WriteString(x)
		default:
			b.WriteByte('?')
		}
	}
	b.WriteByte(']')
	return b.String()
}

// runRef is NAME.run.json: the shape every tensor really had when
// scripts/export_fixtures.py executed the graph-only model on numpy with
// the graph inputs' symbols bound to Bindings (stripped weights run as
// zeros; no float value of these models feeds a shape computation).
type runRef struct {
	Bindings map[string]int64 `json:"bindings"`
	Tensors  map[string]struct {
		DType string  `json:"dtype"`
		Shape []int64 `json:"shape"`
	} `json:"tensors"`
}

// TestFixtureRunShapes checks inference against execution where onnx's own
// inference gives up: with the same bindings, every tensor's inferred dtype
// and shape must equal the executed one exactly.
func TestFixtureRunShapes(t *testing.T) {
	runs := fixtureGlob(t, "*.run.json", "*.run.json")
	var summary []string
	for _, runPath := range runs {
		name := strings.TrimSuffix(filepath.Base(runPath), ".run.json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(runPath)
			if err != nil {
				t.Fatal(err)
			}
			var ref runRef
			if err := json.Unmarshal(data, &ref); err != nil {
				t.Fatalf("%s: %v", runPath, err)
			}
			m, err := ir.ReadFile(filepath.Join(fixtureDir, name+".onnx"), ir.ReadOptions{})
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if err := ir.InlineFunctions(m); err != nil {
				t.Fatalf("inline functions: %v", err)
			}
			if _, err := ir.InferShapes(m, ir.InferOptions{Bindings: ref.Bindings}); err != nil {
				t.Fatalf("infer: %v", err)
			}
			names := make([]string, 0, len(ref.Tensors))
			for n := range ref.Tensors {
				names = append(names, n)
			}
			sort.Strings(names)
			matched, differ := 0, 0
			for _, n := range names {
				r := ref.Tensors[n]
				want := ir.KnownShape(r.Shape...)
				v := m.Graph.Local(n)
				if v == nil {
					t.Errorf("%s: not in our graph", n)
					differ++
					continue
				}
				if v.DType.String() != r.DType || !v.Shape.Equal(want) {
					op := "input"
					if v.Producer != nil {
						op = v.Producer.OpType
					}
					t.Errorf("%s (%s): ours %s %s, executed %s %s", n, op, v.DType, v.Shape, r.DType, want)
					differ++
					continue
				}
				matched++
			}
			line := fmt.Sprintf("%-20s bindings %v  compared %4d  matched %4d  differ %3d", name, ref.Bindings, len(names), matched, differ)
			t.Log(line)
			summary = append(summary, line)
		})
	}
	t.Log("per fixture:\n" + strings.Join(summary, "\n"))
}
