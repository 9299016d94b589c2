// Package collective reads published NCCL all-reduce timings (Vidur and
// APEX+, testdata/) and fits the all-reduce model of cost/perf
// (AllReduceFit) to them, with a fixed hold-out.
package collective

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Kind is the link an all-reduce runs over, as hwdb's GPU.PeerBW picks it.
type Kind string

const (
	NVLink Kind = "nvlink"
	PCIe   Kind = "pcie"
)

// Row is one measured all-reduce.
type Row struct {
	Source string // file, relative to the data folder
	GPU    string // the hwdb entry the node's GPUs are priced as
	Kind   Kind
	N      int
	Bytes  float64
	TimeS  float64
	// Holdout rows never enter the fit: every 4th size of a group, or a
	// whole group kept only as a check.
	Holdout bool
}

// Group is the (file, GPU count, dtype) series a row belongs to.
func (r Row) Group() string { return fmt.Sprintf("%s N=%d", r.Source, r.N) }

// vidurFile is one Vidur network profile and how its nodes are priced.
type vidurFile struct {
	path string
	gpu  string
	kind Kind
	// ns are the one-node GPU counts used; the other rows (several nodes,
	// or a bridged pair hwdb has no link figure for) are skipped.
	ns []int
	// check keeps the whole file out of the fit.
	check bool
}

// vidurFiles: the DGX boards are NVSwitch nodes (hwdb's SXM entries); the
// "pairwise NVLink" nodes are 4 PCIe cards bridged in pairs (A100 80GB
// PCIe; H100 NVL, priced as hwdb's H100 PCIe, the same Gen5 host link), so
// 4 GPUs ring over PCIe. Their 2-GPU rows run over the bridge, which
// hwdb's PCIe entries do not carry, and are left out. The 2024-05 A100
// profile re-measures the HEAD A100 pairwise node and is kept as a check.
// Left out: the 2024-05 h100 file (the same blob as HEAD's H100 pairwise)
// and the A40 node, whose 2-GPU bridged pair reaches 5 GB/s, a tenth of the
// bridge, so its NCCL ran without peer-to-peer and prices no hwdb link.
var vidurFiles = []vidurFile{
	{path: "vidur/HEAD/data/profiling/network/a100_dgx/all_reduce.csv", gpu: "A100-SXM4-80GB", kind: NVLink, ns: []int{2, 4, 8}},
	{path: "vidur/HEAD/data/profiling/network/h100_dgx/all_reduce.csv", gpu: "H100-SXM5-80GB", kind: NVLink, ns: []int{2, 4, 8}},
	{path: "vidur/HEAD/data/profiling/network/a100_pairwise_nvlink/all_reduce.csv", gpu: "A100-PCIe-80GB", kind: PCIe, ns: []int{4}},
	{path: "vidur/HEAD/data/profiling/network/h100_pairwise_nvlink/all_reduce.csv", gpu: "H100-PCIe-80GB", kind: PCIe, ns: []int{4}},
	{path: "vidur/e2d00e9a/data/profiling/a100/all_reduce.csv", gpu: "A100-PCIe-80GB", kind: PCIe, ns: []int{4}, check: true},
}

// apexFiles: APEX+ profiles one HGX node of each GPU (NVSwitch).
var apexFiles = []struct{ path, gpu string }{
	{"apex_plus/profile/comm/H100-SXM-80GB/all_reduce.csv", "H100-SXM5-80GB"},
	{"apex_plus/profile/comm/H200-SXM-141GB/all_reduce.csv", "H200-SXM-141GB"},
}

// Load reads every file under dir (testdata/ here, or the shared data
// folder, whose layout it copies) and marks the hold-out.
func Load(dir string) ([]Row, error) {
	var rows []Row
	for _, f := range vidurFiles {
		r, err := loadVidur(dir, f)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	for _, f := range apexFiles {
		r, err := loadApex(dir, f.path, f.gpu)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	markHoldout(rows)
	return rows, nil
}

func readCSV(dir, path string) ([][]string, map[string]int, error) {
	f, err := os.Open(filepath.Join(dir, path))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	var recs [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		recs = append(recs, rec)
	}
	return recs, col, nil
}

func field(path string, rec []string, col map[string]int, name string) (float64, error) {
	i, ok := col[name]
	if !ok || i >= len(rec) {
		return 0, fmt.Errorf("%s: no column %q", path, name)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(rec[i]), 64)
	if err != nil {
		return 0, fmt.Errorf("%s: column %q: %w", path, name, err)
	}
	return v, nil
}

// loadVidur keeps one-node all_reduce rows; the time is the median of the
// three samples (each a median over 11 kernels), in ms.
func loadVidur(dir string, f vidurFile) ([]Row, error) {
	recs, col, err := readCSV(dir, f.path)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, rec := range recs {
		if c, ok := col["collective"]; !ok || c >= len(rec) || rec[c] != "all_reduce" {
			continue
		}
		var v [4]float64
		for i, name := range []string{"num_workers", "devices_per_node", "size", "time_stats.all_reduce.median"} {
			if v[i], err = field(f.path, rec, col, name); err != nil {
				return nil, err
			}
		}
		n := int(v[0])
		if v[1] != v[0] || !contains(f.ns, n) || v[2] <= 0 || v[3] <= 0 {
			continue
		}
		rows = append(rows, Row{Source: f.path, GPU: f.gpu, Kind: f.kind, N: n, Bytes: v[2], TimeS: v[3] * 1e-3, Holdout: f.check})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no one-node all_reduce rows", f.path)
	}
	return rows, nil
}

// loadApex reads size in KiB (truncated) and the mean time in µs; the
// size-0 rows (under 1 KiB, size unknown) are skipped. fp16 and fp32
// rows are both kept: the wire carries bytes.
func loadApex(dir, path, gpu string) ([]Row, error) {
	recs, col, err := readCSV(dir, path)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, rec := range recs {
		var v [4]float64
		for i, name := range []string{"num_nodes", "num_gpus_per_node", "size(kb)", "time(us)"} {
			if v[i], err = field(path, rec, col, name); err != nil {
				return nil, err
			}
		}
		if v[0] != 1 || v[2] <= 0 || v[3] <= 0 {
			continue
		}
		dtype := ""
		if c, ok := col["dtype"]; ok && c < len(rec) {
			dtype = rec[c]
		}
		rows = append(rows, Row{Source: path + " " + dtype, GPU: gpu, Kind: NVLink, N: int(v[1]), Bytes: v[2] * 1024, TimeS: v[3] * 1e-6})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	return rows, nil
}

func contains(s []int, n int) bool {
	for _, v := range s {
		if v == n {
			return true
		}
	}
	return false
}

// markHoldout holds out every 4th size (the 4th, 8th, ...) of each
// group, in size order.
func markHoldout(rows []Row) {
	groups := map[string][]int{}
	for i, r := range rows {
		groups[r.Group()] = append(groups[r.Group()], i)
	}
	for _, idx := range groups {
		sort.SliceStable(idx, func(a, b int) bool { return rows[idx[a]].Bytes < rows[idx[b]].Bytes })
		for k, i := range idx {
			if k%4 == 3 {
				rows[i].Holdout = true
			}
		}
	}
}
