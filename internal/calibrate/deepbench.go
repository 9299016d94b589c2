package calibrate

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
)

// This file reads Baidu DeepBench result sheets (exported from the
// published .xlsx files to CSV, one "=== SHEET name N rows" line before
// each sheet) into measured kernels, the ground truth the time model is
// calibrated against.

// BenchKind is the kernel family of a DeepBench row.
type BenchKind string

const (
	BenchGEMM BenchKind = "gemm"
	BenchConv BenchKind = "conv"
	BenchRNN  BenchKind = "rnn"
)

// BenchPrecision is the arithmetic a sheet declares, before it is mapped to
// a compute path of a particular GPU (see benchPrecisionPath).
type BenchPrecision string

const (
	BenchFP32 BenchPrecision = "fp32"
	// BenchFP16 is fp16 storage with fp16 or mixed math ("FP16 ip, Mixed
	// math" on T4: tensor cores).
	BenchFP16 BenchPrecision = "fp16"
	// BenchPseudoFP16 is fp16 storage with fp32 multiply and add (P100's
	// "Psuedo FP16" sheet): fp16 bytes, fp32 compute rate.
	BenchPseudoFP16 BenchPrecision = "pseudo_fp16"
	// BenchINT8 is int8 multiply with 32-bit accumulation (inference sheets).
	BenchINT8 BenchPrecision = "int8"
)

// BenchRow is one measured forward kernel.
type BenchRow struct {
	File      string // base name of the CSV
	Line      int    // 1-based line in the CSV, for error messages and the split
	Sheet     string
	Kind      BenchKind
	Precision BenchPrecision

	// GEMM: C[M×N] = op(A)[M×K]·op(B)[K×N].
	M, N, K        int64
	TransA, TransB bool

	// Convolution (NCHW): input W×H×C, batch Batch, K filters of R×S
	// (height×width), padding and strides per axis.
	W, H, C, Batch, Filters int64
	R, S                    int64
	PadH, PadW              int64
	StrideH, StrideW        int64
	Algo                    string // cuDNN forward algorithm when recorded

	// RNN: Cell is "vanilla", "lstm" or "gru"; input size equals Hidden
	// (DeepBench's convention).
	Cell     string
	Hidden   int64
	Steps    int64
	RNNBatch int64

	TimeS float64 // measured forward time

	// Backward times, 0 where the sheet has none (N/A, empty): BwdDataS is
	// the gradient with respect to the layer's input ("wrt inputs"),
	// BwdWeightS with respect to its parameters ("wrt parameters", "wrt
	// weights"). Sheets that time only the whole backward ("Time
	// Backward": MI25, P100's pseudo-fp16 RNNs) set BwdS instead.
	BwdDataS, BwdWeightS, BwdS float64
}

// RNNOp is the ONNX op of a recurrent row's cell.
func (r BenchRow) RNNOp() string {
	switch r.Cell {
	case "lstm":
		return "LSTM"
	case "gru":
		return "GRU"
	}
	return "RNN"
}

// Conv is a convolution row's geometry as the time model takes it.
func (r BenchRow) Conv() perf.ConvGeom {
	return perf.ConvGeom{N: r.Batch, C: r.C, H: r.H, W: r.W, K: r.Filters, R: r.R, S: r.S,
		PadH: r.PadH, PadW: r.PadW, StrideH: r.StrideH, StrideW: r.StrideW}
}

// BenchDrop records a data row the parser skipped and why.
type BenchDrop struct {
	File   string
	Line   int
	Reason string
}

// BenchFile is one parsed CSV.
type BenchFile struct {
	Name    string
	GPU     string // "GPU Model" from the Specs sheet, as written
	Rows    []BenchRow
	Dropped []BenchDrop
}

// section is the table a data row belongs to.
type section struct {
	kind   BenchKind
	cell   string
	skip   string         // non-empty: rows are dropped with this reason
	cols   map[string]int // normalised header name -> column
	header bool           // cols has been read
}

// ParseDeepBench reads one DeepBench CSV export. It keeps forward times of
// dense GEMM, convolution and RNN rows; sparse GEMM and all-reduce sections
// are skipped whole, and rows without a positive time are listed in
// Dropped. It returns an error only when the input is not CSV at all.
func ParseDeepBench(name string, rd io.Reader) (*BenchFile, error) {
	bf := &BenchFile{Name: name}
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	var (
		sheet  string
		prec   = BenchFP32
		inSpec bool
		sec    *section
		line   int
	)
	for sc.Scan() {
		line++
		text := sc.Text()
		if rest, ok := strings.CutPrefix(text, "=== SHEET "); ok {
			sheet = sheetName(rest)
			inSpec = strings.EqualFold(sheet, "Specs")
			prec = sheetPrecision(sheet)
			sec = nil
			continue
		}
		fields, err := csv.NewReader(strings.NewReader(text)).Read()
		if err == io.EOF {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if inSpec {
			if len(fields) >= 2 && strings.EqualFold(fields[0], "GPU Model") {
				bf.GPU = fields[1]
			}
			continue
		}
		if fields[0] != "" {
			sec = newSection(fields)
			continue
		}
		if sec == nil || allEmpty(fields) {
			continue
		}
		if !sec.header {
			// The header is on the title line for most tables; for
			// "Convolution" it may be the next line.
			if hasField(fields, "W") || hasPrefixField(fields, "w (") {
				sec.cols = headerCols(fields)
				sec.header = true
			}
			continue
		}
		if sec.skip != "" {
			continue
		}
		if isNote(fields) {
			bf.Dropped = append(bf.Dropped, BenchDrop{File: name, Line: line, Reason: "note or stray cell, not a measurement"})
			continue
		}
		row, reason := sec.parse(fields)
		if reason != "" {
			bf.Dropped = append(bf.Dropped, BenchDrop{File: name, Line: line, Reason: reason})
			continue
		}
		row.File, row.Line, row.Sheet = name, line, sheet
		row.Precision = prec
		if prec == BenchINT8 && row.Kind == BenchRNN {
			// "Sparse Ops, RNN: single precision" on the inference sheets.
			row.Precision = BenchFP32
		}
		bf.Rows = append(bf.Rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return bf, nil
}

// sheetName strips the trailing "N rows" from a sheet title.
func sheetName(s string) string {
	f := strings.Fields(s)
	if len(f) >= 2 && f[len(f)-1] == "rows" {
		f = f[:len(f)-2]
	}
	return strings.Join(f, " ")
}

// sheetPrecision maps a sheet title to the arithmetic it measured.
func sheetPrecision(sheet string) BenchPrecision {
	s := strings.ToLower(sheet)
	switch {
	case strings.Contains(s, "psuedo fp16") || strings.Contains(s, "pseudo fp16"):
		return BenchPseudoFP16
	case strings.Contains(s, "fp16"):
		return BenchFP16
	case strings.Contains(s, "mixed precision"):
		return BenchINT8 // "GEMM, Conv: Int8 multiplication, 32 bit accumulation"
	}
	return BenchFP32
}

// newSection starts the table named by a title line.
func newSection(fields []string) *section {
	title := strings.ToLower(fields[0])
	s := &section{}
	switch {
	case strings.HasPrefix(title, "dense matrix"):
		s.kind = BenchGEMM
	case strings.HasPrefix(title, "sparse matrix"):
		s.skip = "sparse GEMM (out of scope)"
	case strings.HasPrefix(title, "convolution"):
		s.kind = BenchConv
	case strings.HasPrefix(title, "recurrent"):
		s.kind = BenchRNN
		switch {
		case strings.Contains(title, "lstm"):
			s.cell = "lstm"
		case strings.Contains(title, "gru"):
			s.cell = "gru"
		default:
			s.cell = "vanilla"
		}
	case strings.HasPrefix(title, "all-reduce"):
		s.skip = "all-reduce (not a kernel)"
	default:
		return nil // "Precision", notes and other labels
	}
	if len(fields) > 2 && !allEmpty(fields[1:]) {
		s.cols = headerCols(fields)
		s.header = true
	}
	return s
}

// headerCols maps normalised column names to indexes: lower case, text in
// parentheses dropped, spaces collapsed ("K  (number of filters)" -> "k",
// "S (Filter width)" -> "s", "Time Forward (msec) " -> "time forward").
// The first occurrence of a name wins.
func headerCols(fields []string) map[string]int {
	cols := map[string]int{}
	for i, f := range fields {
		n := strings.ToLower(f)
		if j := strings.Index(n, "("); j >= 0 {
			n = n[:j]
		}
		n = strings.Join(strings.Fields(n), " ")
		if n == "" {
			continue
		}
		if _, dup := cols[n]; !dup {
			cols[n] = i
		}
	}
	return cols
}

// isNote reports a line that carries no sizes: a footnote ("* = ...") or
// a stray spreadsheet cell, recognised by its first two non-empty cells
// not both being numbers.
func isNote(fields []string) bool {
	nums := 0
	for _, f := range fields {
		if f == "" {
			continue
		}
		if _, err := strconv.ParseFloat(f, 64); err == nil {
			nums++
		}
	}
	return nums < 2
}

func allEmpty(fields []string) bool {
	for _, f := range fields {
		if f != "" {
			return false
		}
	}
	return true
}

func hasField(fields []string, v string) bool {
	for _, f := range fields {
		if f == v {
			return true
		}
	}
	return false
}

func hasPrefixField(fields []string, p string) bool {
	for _, f := range fields {
		if strings.HasPrefix(strings.ToLower(f), p) {
			return true
		}
	}
	return false
}

// parse reads one data row of the section; a non-empty reason means the
// row is dropped.
func (s *section) parse(f []string) (BenchRow, string) {
	var r BenchRow
	r.Kind = s.kind
	var bad string
	num := func(names ...string) int64 {
		for _, n := range names {
			if i, ok := s.cols[n]; ok && i < len(f) {
				v, err := strconv.ParseFloat(f[i], 64)
				if err != nil || v < 0 || v > 1e9 || v != math.Trunc(v) {
					bad = fmt.Sprintf("column %q is %q, not a size", n, f[i])
					return 0
				}
				return int64(v)
			}
		}
		bad = fmt.Sprintf("no column %q", names[0])
		return 0
	}
	ms := func(names ...string) float64 {
		for _, n := range names {
			if i, ok := s.cols[n]; ok {
				if i >= len(f) || f[i] == "" {
					return -1
				}
				v, err := strconv.ParseFloat(f[i], 64)
				if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
					return -1
				}
				return v
			}
		}
		return -1
	}
	var t float64
	switch s.kind {
	case BenchGEMM:
		r.M, r.N, r.K = num("m"), num("n"), num("k")
		r.TransA = s.str(f, "a transpose") == "T"
		r.TransB = s.str(f, "b transpose") == "T"
		t = ms("time")
	case BenchConv:
		r.W, r.H, r.C = num("w"), num("h"), num("c")
		r.Batch, r.Filters = num("n"), num("k")
		r.R, r.S = num("r"), num("s")
		r.PadH, r.PadW = num("pad_h"), num("pad_w")
		r.StrideH, r.StrideW = num("vertical stride"), num("horizontal stride")
		r.Algo = s.str(f, "forward algorithm")
		t = ms("forward")
		r.BwdDataS, r.BwdWeightS = msPos(ms("wrt inputs")), msPos(ms("wrt parameters"))
		if bad == "" && (r.StrideH == 0 || r.StrideW == 0 || r.Conv().P() <= 0 || r.Conv().Q() <= 0) {
			bad = "convolution geometry gives no output"
		}
	case BenchRNN:
		r.Cell = s.cell
		r.Hidden = num("hidden units", "hidden", "input")
		r.RNNBatch = num("n")
		r.Steps = num("timesteps")
		t = ms("time forward")
		r.BwdDataS, r.BwdWeightS = msPos(ms("time backward wrt inputs")), msPos(ms("time backward wrt weights"))
		r.BwdS = msPos(ms("time backward"))
	}
	if bad != "" {
		return r, bad
	}
	if t <= 0 {
		return r, "no forward time recorded"
	}
	r.TimeS = t * 1e-3
	return r, ""
}

// msPos is a time cell in milliseconds as seconds, 0 when absent (ms
// gives -1 for an empty or non-numeric cell).
func msPos(v float64) float64 {
	if v <= 0 {
		return 0
	}
	return v * 1e-3
}

func (s *section) str(f []string, name string) string {
	if i, ok := s.cols[name]; ok && i < len(f) {
		return f[i]
	}
	return ""
}
