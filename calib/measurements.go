package calib

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/internal/safefile"
)

// Measurement is one row of a measurements table: one measured call.
type Measurement struct {
	// Model is the model's path, resolved against the table's folder
	// when the table gives it relative.
	Model     string
	MeasuredS float64
	Batch     int64            // 0 when the row does not say
	DType     string           // "" when the row does not say
	Dims      map[string]int64 // symbolic dimension bindings; nil when none
	Runtime   string           // "" when the row does not say
	// Train says the row is one training step, not an inference call;
	// Optimizer is the step's optimizer as written ("" is the default).
	Train     bool
	Optimizer string
	// Warm says the call was timed back to back with itself (a benchmark
	// loop, a CUDA graph of repeats): it is priced as `--warm` prices it,
	// its operands finding in L2 what the call before left there.
	Warm bool
	Line int // the row's line in the table
}

// measurementColumns are the columns a table may have; model and ms are
// required.
var measurementColumns = []string{"model", "ms", "batch", "dtype", "dims", "runtime", "train", "warm"}

// ReadMeasurements reads a measurements table: a header row naming
// columns model and ms (milliseconds per call) and optionally batch,
// dtype, dims ("name=v;name=v"), runtime, train and warm, then one
// measured call per row. train marks a training step (`--train`): an
// optimizer's name (`--optimizer`), or yes/true/1 for the default one;
// empty, no/false/0 is an inference call. warm yes/true/1 marks a call
// timed back to back with itself (`--warm`); empty, no/false/0 one timed
// cold. Lines starting with # are comments. Any problem is an error of
// one line naming the file and line.
func ReadMeasurements(path string) ([]Measurement, error) {
	ms, _, err := ReadTable(path)
	return ms, err
}

// ReadTable reads a measurements table once: its rows (ReadMeasurements)
// and the provenance its comment lines give (ReadTableProvenance), the
// provenance checked first, so that a malformed "# sms:" line is named
// before any row is priced.
func ReadTable(path string) ([]Measurement, Provenance, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("measurements %s: %v", path, safefile.Reason(err))
	}
	prov, err := tableProvenance(path, data)
	if err != nil {
		return nil, Provenance{}, err
	}
	ms, err := readMeasurements(path, bytes.NewReader(data))
	return ms, prov, err
}

func readMeasurements(path string, r io.Reader) ([]Measurement, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("measurements %s: empty file (want a header row: model,ms[,batch,dtype,dims,runtime,train,warm])", path)
	}
	if err != nil {
		return nil, csvError(path, err)
	}
	col, err := measurementHeader(header)
	if err != nil {
		line, _ := cr.FieldPos(0)
		return nil, fmt.Errorf("measurements %s:%d: %v", path, line, err)
	}
	dir := filepath.Dir(path)
	var out []Measurement
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(path, err)
		}
		line, _ := cr.FieldPos(0)
		m, err := parseMeasurement(rec, col, dir)
		if err != nil {
			return nil, fmt.Errorf("measurements %s:%d: %v", path, line, err)
		}
		m.Line = line
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("measurements %s: no rows after the header", path)
	}
	return out, nil
}

func csvError(path string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("measurements %s:%d: %v", path, pe.Line, pe.Err)
	}
	return fmt.Errorf("measurements %s: %v", path, err)
}

// measurementHeader maps each known column to its index (−1: absent).
func measurementHeader(header []string) (map[string]int, error) {
	col := map[string]int{}
	for _, c := range measurementColumns {
		col[c] = -1
	}
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		j, known := col[name]
		switch {
		case !known:
			return nil, fmt.Errorf("unknown column %q (want %s)", h, strings.Join(measurementColumns, ", "))
		case j >= 0:
			return nil, fmt.Errorf("column %q given twice", name)
		}
		col[name] = i
	}
	for _, req := range []string{"model", "ms"} {
		if col[req] < 0 {
			return nil, fmt.Errorf("no %q column (the header must name model and ms)", req)
		}
	}
	return col, nil
}

func parseMeasurement(rec []string, col map[string]int, dir string) (Measurement, error) {
	field := func(name string) string {
		if i := col[name]; i >= 0 && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var m Measurement
	m.Model = field("model")
	if m.Model == "" {
		return m, errors.New("empty model path")
	}
	// zoo:NAME?k=v is a model onnxcost builds (pipeline.IsZoo), not a
	// file: it stays as written.
	if !filepath.IsAbs(m.Model) && !strings.HasPrefix(m.Model, "zoo:") {
		m.Model = filepath.Join(dir, m.Model)
	}
	ms, err := strconv.ParseFloat(field("ms"), 64)
	if err != nil || !(ms > 0) || math.IsInf(ms, 0) {
		return m, fmt.Errorf("ms %q is not a positive number of milliseconds", field("ms"))
	}
	m.MeasuredS = ms / 1e3
	if s := field("batch"); s != "" {
		if m.Batch, err = strconv.ParseInt(s, 10, 64); err != nil || m.Batch <= 0 {
			return m, fmt.Errorf("batch %q is not a positive integer", s)
		}
	}
	m.DType = strings.ToLower(field("dtype"))
	m.Runtime = field("runtime")
	if m.Dims, err = parseDims(field("dims")); err != nil {
		return m, err
	}
	if m.Train, m.Optimizer, err = parseTrain(field("train")); err != nil {
		return m, err
	}
	if m.Warm, err = parseYesNo("warm", field("warm")); err != nil {
		return m, err
	}
	return m, nil
}

// parseYesNo reads a yes/no column: yes, true or 1; no, false, 0 or empty.
func parseYesNo(column, s string) (bool, error) {
	switch strings.ToLower(s) {
	case "", "no", "false", "0":
		return false, nil
	case "yes", "true", "1":
		return true, nil
	}
	return false, fmt.Errorf("%s %q is not yes or no", column, s)
}

// optimizerName is the shape of an optimizer's name in the train column;
// which names exist is the training model's (pipeline.CheckTrain), checked
// where the row is priced.
var optimizerName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// parseTrain reads the train column: whether the row is a training step,
// and its optimizer ("" for the default).
func parseTrain(s string) (train bool, optimizer string, err error) {
	if yes, err := parseYesNo("train", s); err == nil {
		return yes, "", nil
	}
	v := strings.ToLower(s)
	if !optimizerName.MatchString(v) {
		return false, "", fmt.Errorf("train %q is not yes/no or an optimizer's name", s)
	}
	return true, v, nil
}

// parseDims reads "name=v;name=v" into bindings; "" gives nil.
func parseDims(s string) (map[string]int64, error) {
	if s == "" {
		return nil, nil
	}
	dims := map[string]int64{}
	for part := range strings.SplitSeq(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if !ok || name == "" {
			return nil, fmt.Errorf("dims %q: %q is not name=value", s, part)
		}
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("dims %q: %s=%q is not a positive integer", s, name, val)
		}
		if _, dup := dims[name]; dup {
			return nil, fmt.Errorf("dims %q: %s given twice", s, name)
		}
		dims[name] = v
	}
	return dims, nil
}
