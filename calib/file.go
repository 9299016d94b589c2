package calib

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/internal/safefile"
)

// fileDoc is the YAML form of a Calibration; Parse decodes into it with
// unknown keys rejected.
type fileDoc struct {
	Format   int          `yaml:"format"`
	Source   fileSource   `yaml:"source"`
	Fit      fileFit      `yaml:"fit"`
	Transfer fileTransfer `yaml:"transfer"`
	// Paths is absent in files written before it (every path).
	Paths map[string][]string `yaml:"paths"`
	Cells []fileCell          `yaml:"cells"`
	Bands []fileBand          `yaml:"bands"`
	Hosts []fileHost          `yaml:"hosts"`
}

type fileSource struct {
	GPU          string `yaml:"gpu"`
	Family       string `yaml:"family"`
	Device       string `yaml:"device"`
	Measurements string `yaml:"measurements"`
	Rows         int    `yaml:"rows"`
	Date         string `yaml:"date"`
	Driver       string `yaml:"driver"`
	Runtime      string `yaml:"runtime"`
}

type fileFit struct {
	GPUFactor       float64 `yaml:"gpu_factor"`
	MedianErrBefore float64 `yaml:"median_abs_err_before"`
	MedianErrAfter  float64 `yaml:"median_abs_err_after"`
}

type fileTransfer struct {
	SameFamily  float64 `yaml:"same_family"`
	OtherFamily float64 `yaml:"other_family"`
}

type fileCell struct {
	Class string `yaml:"class"`
	// Op is absent on the cells of every level but class×op and
	// class×op×term: a file with no op cells reads as format 1 always did.
	Op    string `yaml:"op"`
	Bound string `yaml:"bound"`
	Size  string `yaml:"size"`
	// Ridge is absent on every cell but a ridge cell.
	Ridge string `yaml:"ridge"`
	// Shape is absent on every cell but a shape cell.
	Shape string `yaml:"shape"`
	// Precision is absent on every cell but a class×precision cell.
	Precision string  `yaml:"precision"`
	N         int     `yaml:"n"`
	Factor    float64 `yaml:"factor"`
}

type fileBand struct {
	Class     string  `yaml:"class"`
	Precision string  `yaml:"precision"`
	N         int     `yaml:"n"`
	Q10       float64 `yaml:"q10"`
	Q90       float64 `yaml:"q90"`
}

// Write writes c as a commented YAML file. The output depends only on c
// (cells and bands in canonical order, numbers to 4 significant digits),
// so Write of what Parse read back is byte-identical.
func (c *Calibration) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("# onnxcost calibration: what measured calls taught the time model.\n")
	p("# Each term of a kernel's time (compute, latency, memory) is multiplied by\n")
	p("#   gpu_factor x class x class+precision x class+op x class+op+term x class+op+shape\n")
	p("#   x class+term x class+term+size x class+term+ridge\n")
	p("# (cells below; a missing cell is 1; op is the node's ONNX op type, shape its\n")
	p("# GEMM's N x K or its rows' 1 x length, dims no batch size changes; the size\n")
	p("# cells are interpolated over the term's time, never letting it fall as it\n")
	p("# grows; the ridge cells over the kernel's compute time / memory time, the\n")
	p("# compute factor never rising and the memory factor never falling with it)\n")
	p("# on the GPU it was fitted on. gpu_factor is what that GPU's peaks and\n")
	p("# clocks were off by (the mean of its op types), so on any other GPU it, the\n")
	p("# shape, size and ridge cells are dropped and the product of the other cells,\n")
	p("# less a tenth either way (the scatter of a well-modelled kernel), is raised to\n")
	p("# the transfer weight: what was learned about kernels carries, in part.\n")
	p("format: %d\n", FormatVersion)
	p("source:\n")
	s := c.Source
	p("  gpu: %s\n  family: %s\n  device: %s\n  measurements: %s\n  rows: %d\n", quote(s.GPU), quote(s.Family), quote(s.Device), quote(s.Measurements), s.Rows)
	p("  date: %s\n  driver: %s\n  runtime: %s\n", quote(s.Date), quote(s.Driver), quote(s.Runtime))
	p("fit:\n")
	p("  gpu_factor: %s\n", num(c.GPUFactor))
	p("  # median |measured/predicted - 1| over the rows: uncalibrated, and calibrated\n")
	p("  # with each row predicted by a fit on the other %d folds of rows\n", cvFolds-1)
	p("  median_abs_err_before: %s\n  median_abs_err_after: %s\n", num(c.MedianErrBefore), num(c.MedianErrAfter))
	p("transfer:\n")
	p("  # exponent on the cells on another GPU of the same / another family\n")
	p("  same_family: %s\n  other_family: %s\n", num(c.Transfer.SameFamily), num(c.Transfer.OtherFamily))
	writePaths(p, c.Paths)
	writeCells(p, c.Cells)
	writeBands(p, c.Bands)
	writeHosts(p, c.Hosts)
	return bw.Flush()
}

// writePaths writes the classes' compute paths, classes in name order;
// nothing for a calibration read from a file without them.
func writePaths(p func(string, ...any), paths map[string][]string) {
	if paths == nil || !beginSection(p, "paths", len(paths), "{}",
		"compute paths (tensor cores, vector units) each GEMM-like class ran on in",
		"the rows; its cells apply to its kernels on these paths only") {
		return
	}
	for _, class := range sortedKeys(paths) {
		qs := make([]string, len(paths[class]))
		for i, v := range paths[class] {
			qs[i] = quote(v)
		}
		p("  %s: [%s]\n", quote(class), strings.Join(qs, ", "))
	}
}

func writeCells(p func(string, ...any), cells []Cell) {
	if !beginSection(p, "cells", len(cells), "[]",
		"class; op type (absent: any); time term (bound) and size decade of the",
		`term's uncalibrated time ("*": any); ridge (absent: any): the kernel's`,
		"uncalibrated compute time over its memory time, the point the factor is",
		"anchored at; shape (absent: any): the GEMM's N x K or 1 x the row length,",
		"on this GPU only; precision (absent: any): the kernels' precision group,",
		"where the rows held the class in more than one; n: rows whose time the",
		"cell touched; factor: relative to the level above") {
		return
	}
	for _, cl := range cells {
		op, ridge := "", ""
		if cl.Op != "*" {
			op = "op: " + quote(cl.Op) + ", "
		}
		if isRidge(cl.Ridge) {
			ridge = "ridge: " + quote(cl.Ridge) + ", "
		}
		if cl.Shape != "" {
			ridge += "shape: " + quote(cl.Shape) + ", "
		}
		if cl.Precision != "" {
			ridge += "precision: " + quote(cl.Precision) + ", "
		}
		p("  - {class: %s, %sbound: %s, size: %s, %sn: %d, factor: %s}\n", quote(cl.Class), op, quote(cl.Bound), quote(cl.Size), ridge, cl.N, num(cl.Factor))
	}
}

func writeBands(p func(string, ...any), bands []Band) {
	if !beginSection(p, "bands", len(bands), "[]",
		"10th and 90th percentiles of measured/calibrated over held-out rows, by the",
		`class with most of a row's time ("*": every row) and, with precision, its kernels'`,
		"precision group: the 80% interval on this GPU") {
		return
	}
	for _, b := range bands {
		prec := ""
		if b.Precision != "" {
			prec = "precision: " + quote(b.Precision) + ", "
		}
		p("  - {class: %s, %sn: %d, q10: %s, q90: %s}\n", quote(b.Class), prec, b.N, num(b.Q10), num(b.Q90))
	}
}

// beginSection starts the top-level key of one list of the file: with
// no entries (n 0) the key and its empty form, or nothing when empty is
// "" (a section older files lack), and false: nothing more to write;
// otherwise the key and the comment lines that say what its entries hold.
func beginSection(p func(string, ...any), key string, n int, empty string, comment ...string) bool {
	if n == 0 {
		if empty != "" {
			p("%s: %s\n", key, empty)
		}
		return false
	}
	p("%s:\n", key)
	for _, c := range comment {
		p("  # %s\n", c)
	}
	return true
}

// unprintable reports whether r cannot be shown as itself on one line
// of a terminal or in a YAML scalar: invalid UTF-8, a control character,
// anything else unicode does not call printable (the space is printable).
func unprintable(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || !unicode.IsPrint(r)
}

// quote writes s as a YAML double-quoted scalar. Characters that could
// not round-trip (invalid UTF-8, control characters) become '?'.
func quote(s string) string {
	clean := strings.Map(func(r rune) rune {
		if unprintable(r) {
			return '?'
		}
		return r
	}, s)
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range clean {
		if r == '"' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

// Load reads and checks a calibration file.
func Load(path string) (*Calibration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("calibration %s: %v", path, safefile.Reason(err))
	}
	return Parse(path, data)
}

// Parse decodes and checks a calibration file's contents; name is used
// in errors and recorded as the calibration's Path. Unknown keys, values
// of the wrong type, factors outside [1/20, 20] and unknown classes,
// bounds or sizes are errors of one line naming the file.
func Parse(name string, data []byte) (*Calibration, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("calibration %s: %s", name, oneLine(fmt.Sprintf(format, a...)))
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var doc fileDoc
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fail("empty file")
		}
		return nil, fail("%v", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fail("more than one YAML document")
	}
	if doc.Format != FormatVersion {
		return nil, fail("format %d, this onnxcost reads format %d", doc.Format, FormatVersion)
	}
	c, err := fromDoc(&doc)
	if err != nil {
		return nil, fail("%v", err)
	}
	c.Path = name
	return c, nil
}

// yamlTypeName is the Go type yaml.v3 names in its errors, which means
// nothing to a reader of the file.
var yamlTypeName = regexp.MustCompile(` in type calib\.\w+`)

func oneLine(s string) string {
	s = yamlTypeName.ReplaceAllString(s, "")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

func fromDoc(d *fileDoc) (*Calibration, error) {
	s := d.Source
	if s.GPU == "" {
		return nil, errors.New("source.gpu is empty: a calibration must say which GPU it was fitted on")
	}
	if s.Rows < 0 {
		return nil, fmt.Errorf("source.rows %d is negative", s.Rows)
	}
	c := &Calibration{
		Source:          Source(s),
		GPUFactor:       d.Fit.GPUFactor,
		MedianErrBefore: d.Fit.MedianErrBefore,
		MedianErrAfter:  d.Fit.MedianErrAfter,
		Transfer:        TransferWeights(d.Transfer),
	}
	if err := checkFactor("fit.gpu_factor", c.GPUFactor); err != nil {
		return nil, err
	}
	for _, e := range []struct {
		key string
		v   float64
	}{{"fit.median_abs_err_before", c.MedianErrBefore}, {"fit.median_abs_err_after", c.MedianErrAfter}} {
		if !(e.v >= 0) || math.IsInf(e.v, 0) {
			return nil, fmt.Errorf("%s %g is not a non-negative number", e.key, e.v)
		}
	}
	for _, e := range []struct {
		key string
		v   float64
	}{{"transfer.same_family", c.Transfer.SameFamily}, {"transfer.other_family", c.Transfer.OtherFamily}} {
		if !(e.v >= 0 && e.v <= 1) {
			return nil, fmt.Errorf("%s %g is outside [0, 1]", e.key, e.v)
		}
	}
	var err error
	if c.Paths, err = pathsFromDoc(d.Paths); err != nil {
		return nil, err
	}
	if c.Cells, err = cellsFromDoc(d.Cells); err != nil {
		return nil, err
	}
	if c.Bands, err = bandsFromDoc(d.Bands); err != nil {
		return nil, err
	}
	if c.Hosts, err = hostsFromDoc(d.Hosts); err != nil {
		return nil, err
	}
	return c, nil
}

func checkFactor(key string, f float64) error {
	if !(f >= 1.0/maxFactor && f <= maxFactor) {
		return fmt.Errorf("%s %g is outside [1/%d, %d]: a factor that far off means the time model, not a kernel, is wrong", key, f, maxFactor, maxFactor)
	}
	return nil
}

var knownClasses = []perf.KernelClass{perf.ClassGEMM, perf.ClassConv, perf.ClassWinograd, perf.ClassRNN,
	perf.ClassAttention, perf.ClassElementwise, perf.ClassReduction, perf.ClassData}

var knownBounds = []string{"compute", "memory", "latency", "launch"}

func knownClass(s string) bool { return slices.Contains(knownClasses, perf.KernelClass(s)) }

// opName is what an ONNX op type may be in a file: an identifier (the
// ONNX spec's op names, onnxcost's fused ops), at most 64 characters.
var opName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// gemmShape is a shape cell's shape: N x K, positive integers.
var gemmShape = regexp.MustCompile(`^[1-9][0-9]{0,11}x[1-9][0-9]{0,11}$`)

// validOp reports whether op can key a class×op cell.
func validOp(op string) bool { return opName.MatchString(op) }

// pathsFromDoc checks the paths map: GEMM-like classes (the only ones
// Fit restricts), each with known paths, none twice; they come back
// sorted.
func pathsFromDoc(m map[string][]string) (map[string][]string, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string][]string, len(m))
	for class, ps := range m {
		if !knownClass(class) || !perf.KernelClass(class).GEMMLike() {
			return nil, fmt.Errorf("paths: %q is not a GEMM-like kernel class (want one of %v)", class, gemmLikeClasses())
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("paths.%s: no compute path (omit the class for every path)", class)
		}
		seen := map[string]bool{}
		for _, v := range ps {
			if !slices.Contains(computePaths, v) {
				return nil, fmt.Errorf("paths.%s: unknown compute path %q (want one of %s)", class, v, strings.Join(computePaths, ", "))
			}
			if seen[v] {
				return nil, fmt.Errorf("paths.%s: %q twice", class, v)
			}
			seen[v] = true
		}
		out[class] = slices.Sorted(slices.Values(ps))
	}
	return out, nil
}

// gemmLikeClasses are the knownClasses a paths map may name.
func gemmLikeClasses() []perf.KernelClass {
	return slices.DeleteFunc(slices.Clone(knownClasses), func(c perf.KernelClass) bool { return !c.GEMMLike() })
}

func cellsFromDoc(fc []fileCell) ([]Cell, error) {
	cells := make([]Cell, 0, len(fc))
	seen := map[string]bool{}
	for i, f := range fc {
		at := fmt.Sprintf("cells[%d]", i)
		if !knownClass(f.Class) {
			return nil, fmt.Errorf("%s: unknown kernel class %q (want one of %v)", at, f.Class, knownClasses)
		}
		if f.Bound != "*" && !slices.Contains(knownBounds, f.Bound) {
			return nil, fmt.Errorf("%s: unknown bound %q (want \"*\" or one of %v)", at, f.Bound, knownBounds)
		}
		if f.Size != "*" && sizeRank(f.Size) == 0 {
			return nil, fmt.Errorf("%s: unknown size %q (want \"*\" or one of %s)", at, f.Size, sizeNames())
		}
		if f.Bound == "*" && f.Size != "*" {
			return nil, fmt.Errorf("%s: a size cell needs a bound (bound \"*\" with size %q)", at, f.Size)
		}
		if f.Op == "" {
			f.Op = "*"
		}
		if f.Op != "*" && !validOp(f.Op) {
			return nil, fmt.Errorf("%s: op %q is not an ONNX op type (want \"*\" or an identifier)", at, f.Op)
		}
		if f.Op != "*" && f.Size != "*" {
			return nil, fmt.Errorf("%s: size cells are per class and term, not per op (op %q with size %q)", at, f.Op, f.Size)
		}
		if f.Ridge == "" {
			f.Ridge = "*"
		}
		if err := checkRidgeCell(f); err != nil {
			return nil, fmt.Errorf("%s: %v", at, err)
		}
		if f.Shape != "" && (!gemmShape.MatchString(f.Shape) || f.Op == "*" || f.Bound != "*" || f.Size != "*" || f.Ridge != "*") {
			return nil, fmt.Errorf("%s: shape %q: a shape cell is an op's GEMM of N x K (\"768x3072\"), with an op, bound and size \"*\" and no ridge", at, f.Shape)
		}
		if f.Precision != "" && (!slices.Contains(precisionGroups, f.Precision) || f.Op != "*" || f.Bound != "*" || f.Size != "*" || f.Ridge != "*" || f.Shape != "") {
			return nil, fmt.Errorf("%s: precision %q: a precision cell is a class's kernels of one precision group (one of %s), with op, bound and size \"*\" and no ridge or shape", at, f.Precision, strings.Join(precisionGroups, ", "))
		}
		if f.N < 0 {
			return nil, fmt.Errorf("%s: n %d is negative", at, f.N)
		}
		if err := checkFactor(at+".factor", f.Factor); err != nil {
			return nil, err
		}
		c := Cell(f)
		key := c.key()
		if seen[key] {
			return nil, fmt.Errorf("%s: a second cell for %s", at, key)
		}
		seen[key] = true
		cells = append(cells, c)
	}
	slices.SortStableFunc(cells, cellCompare)
	return cells, nil
}

func isRidge(s string) bool { return ridgeRank(s) > 0 }

// checkRidgeCell checks a cell's ridge: "*", or a bucket on a
// class×term cell of the compute or memory term (ridgeTerm: the rule
// that keeps a calibrated term monotone knows no other term, op or size).
func checkRidgeCell(f fileCell) error {
	if f.Ridge == "*" {
		return nil
	}
	if !isRidge(f.Ridge) {
		names := make([]string, len(ridgeBuckets))
		for i, b := range ridgeBuckets {
			names[i] = b.name
		}
		return fmt.Errorf("unknown ridge %q (want \"*\" or one of %s)", f.Ridge, strings.Join(names, ", "))
	}
	if f.Op != "*" || f.Size != "*" || !ridgeTerm(f.Bound) {
		return fmt.Errorf("a ridge cell is per class and the compute or memory term, with op and size \"*\" (ridge %q, bound %q)", f.Ridge, f.Bound)
	}
	return nil
}

func sizeNames() string {
	names := make([]string, len(sizeBuckets))
	for i, b := range sizeBuckets {
		names[i] = b.name
	}
	return strings.Join(names, ", ")
}

func bandsFromDoc(fb []fileBand) ([]Band, error) {
	bands := make([]Band, 0, len(fb))
	seen := map[string]bool{}
	for i, f := range fb {
		at := fmt.Sprintf("bands[%d]", i)
		if f.Class != "*" && !knownClass(f.Class) {
			return nil, fmt.Errorf("%s: unknown kernel class %q", at, f.Class)
		}
		if f.Precision != "" && (f.Class == "*" || !slices.Contains(precisionGroups, f.Precision)) {
			return nil, fmt.Errorf("%s: precision %q must be one of %s, on a band of one class", at, f.Precision, strings.Join(precisionGroups, ", "))
		}
		key := f.Class + " " + f.Precision
		if seen[key] {
			return nil, fmt.Errorf("%s: a second band for class %q precision %q", at, f.Class, f.Precision)
		}
		seen[key] = true
		if f.N < 0 {
			return nil, fmt.Errorf("%s: n %d is negative", at, f.N)
		}
		if err := checkFactor(at+".q10", f.Q10); err != nil {
			return nil, err
		}
		if err := checkFactor(at+".q90", f.Q90); err != nil {
			return nil, err
		}
		if f.Q10 > f.Q90 {
			return nil, fmt.Errorf("%s: q10 %g above q90 %g", at, f.Q10, f.Q90)
		}
		bands = append(bands, Band(f))
	}
	slices.SortStableFunc(bands, func(a, b Band) int { return cmp.Or(cmpStr(a.Class, b.Class), cmpStr(a.Precision, b.Precision)) })
	return bands, nil
}
