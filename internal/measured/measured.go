// Package measured reads the files of testdata/measured: CSV measured on real
// GPUs by scripts/measure_gpu.py, with '#' comment lines saying where and how.
package measured

import (
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Read returns the data rows of the CSV file at path after checking that its
// first non-comment line is header (comma-separated column names). A path
// ending in .gz is read through gzip.
func Read(path, header string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var in io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		in = z
	}
	r := csv.NewReader(in)
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) < 2 || strings.Join(recs[0], ",") != header {
		return nil, fmt.Errorf("%s: want the header %s and at least one row", path, header)
	}
	return recs[1:], nil
}

// Gunzip writes the gzipped file at path into dir under its name without
// ".gz" (the exported models of testdata/saved, the Kineto traces of
// calib/profile/testdata) and returns the new path.
func Gunzip(path, dir string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(path), ".gz"))
	return out, os.WriteFile(out, data, 0o644)
}

// KernelName is a profiled kernel's name without its return type,
// template arguments and parameter list: "sgemm_largek_lds64" for
// "void sgemm_largek_lds64<true, false, 5, …>(float*, …", as the sweeps
// of scripts/measure_gpu.py (--gemm-choices, --conv-choices) record them.
func KernelName(s string) string {
	s = strings.TrimPrefix(s, "void ")
	if i := strings.IndexAny(s, "<("); i > 0 {
		s = s[:i]
	}
	return s
}
