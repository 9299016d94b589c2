// Package measured reads the files of testdata/measured: CSV measured on real
// GPUs by scripts/measure_gpu.py, with '#' comment lines saying where and how.
package measured

import (
	"encoding/csv"
	"fmt"
	"os"
	"strings"
)

// Read returns the data rows of the CSV file at path after checking that its
// first non-comment line is header (comma-separated column names).
func Read(path, header string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
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
