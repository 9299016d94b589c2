package hwdb

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SpecHash identifies the exact figures a report was computed with: the
// first 12 hex digits of the SHA-256 of the GPU's JSON form. encoding/json
// writes map keys sorted, so the form is canonical.
func SpecHash(g *GPU) string {
	b, err := json.Marshal(g)
	if err != nil { // only NaN/Inf, which validation rules out
		return "invalid"
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:12]
}

// WriteTable writes one aligned line per GPU: the figures that decide most
// estimates. A dash means the GPU has no such path.
func WriteTable(w io.Writer, gpus []*GPU) error {
	rows := [][]string{{"NAME", "ARCH", "SMS", "FP32", "FP16-TC", "INT8-TC", "MEM-GiB", "BW-GB/s", "L2-MiB", "TDP-W"}}
	for _, g := range gpus {
		rows = append(rows, []string{
			g.Name, g.Arch, strconv.Itoa(g.SMs),
			num(g.Peak[FP32] / tera), num(g.Peak[FP16Tensor] / tera), num(g.Peak[INT8Tensor] / tera),
			num(g.MemBytes / gib), num(g.MemBW / giga), num(g.L2Bytes / mib), num(g.TDPWatts),
		})
	}
	if _, err := io.WriteString(w, align(rows, 2)); err != nil {
		return err
	}
	_, err := io.WriteString(w, "Peaks in dense TFLOPS (TOPS for int8); TC = tensor/matrix cores.\n")
	return err
}

// num formats a figure compactly: up to 4 significant digits, a dash for 0.
func num(x float64) string {
	if x == 0 {
		return "-"
	}
	if x >= 1000 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// align left-aligns the first `text` columns and right-aligns the rest.
func align(rows [][]string, text int) string {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < text {
				b.WriteString(c)
				if i < len(r)-1 {
					b.WriteString(pad)
				}
			} else {
				b.WriteString(pad + c)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// detailRow is one figure of WriteDetail: its JSON name, display label,
// value in display units, and unit.
type detailRow struct {
	json, label string
	value       float64
	unit        string
}

// WriteDetail writes every figure of g with its unit and source, then the
// notes, for `onnxcost gpus show`.
func WriteDetail(w io.Writer, g *GPU) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  (%s %s", g.Name, g.Vendor, g.Arch)
	if g.Year > 0 {
		fmt.Fprintf(&b, ", %d", g.Year)
	}
	b.WriteString(")\n")
	if len(g.Aliases) > 0 {
		fmt.Fprintf(&b, "aliases: %s\n", strings.Join(g.Aliases, ", "))
	}
	fmt.Fprintf(&b, "spec hash: %s\n\n", SpecHash(g))

	unitsLabel := "SMs"
	if strings.EqualFold(g.Vendor, "AMD") {
		unitsLabel = "CUs"
	}
	usable := defaultUsable(g)
	rows := []detailRow{
		{"sms", unitsLabel, float64(g.SMs), ""},
		{"base_clock_mhz", "base clock", g.BaseClockMHz, "MHz"},
		{"boost_clock_mhz", "boost clock", g.BoostClockMHz, "MHz"},
		{"sustained_clock_mhz", "sustained clock", g.SustainedClockMHz, "MHz"},
		{"min_sm_clock_mhz", "min SM clock", g.MinSMClockMHz, "MHz"},
		{"mem_clock_mhz", "memory clock", g.MemClockMHz, "MHz"},
	}
	for _, p := range Precisions {
		unit := "TFLOPS"
		if p == INT8 || p == INT8Tensor {
			unit = "TOPS"
		}
		rows = append(rows, detailRow{"peak_flops." + string(p), "peak " + string(p), g.Peak[p] / tera, unit})
	}
	rows = append(rows,
		detailRow{"mem_bytes", "memory", g.MemBytes / gib, "GiB"},
		detailRow{"cuda_mem_bytes", "memory CUDA reports", g.CUDAMemBytes / gib, "GiB"},
		detailRow{usableKey, "usable memory", usable / gib, "GiB"},
		detailRow{"mem_bw", "memory bandwidth", g.MemBW / giga, "GB/s"},
		detailRow{"stream_eff", "stream efficiency", g.StreamEff, "of bandwidth"},
		detailRow{"stream_rw_eff", "read-write stream", g.StreamRWEff, "of stream"},
		detailRow{"vector_gemm_scale", "CUDA-core GEMM time", g.VectorGEMMScale, "x"},
		detailRow{"vector_conv_scale", "CUDA-core conv time", g.VectorConvScale, "x"},
		detailRow{"l2_bytes", "L2 cache", g.L2Bytes / mib, "MiB"},
		detailRow{"l2_bw", "L2 bandwidth", g.L2BW / giga, "GB/s"},
		detailRow{"l2_partitions", "L2 partitions", float64(g.L2Partitions), ""},
		detailRow{"tdp_w", "TDP", g.TDPWatts, "W"},
		detailRow{"min_power_w", "min power limit", g.MinPowerW, "W"},
		detailRow{"max_power_w", "max power limit", g.MaxPowerW, "W"},
		detailRow{"idle_w", "idle power", g.IdleWatts, "W"},
		detailRow{"mem_pj_per_byte", "memory energy", g.MemPJPerByte, "pJ/B"},
		detailRow{"launch_s", "launch overhead", g.LaunchS / usec, "us"},
		detailRow{"pcie_gen", "PCIe generation", float64(g.PCIeGen), ""},
		detailRow{"pcie_bw", "PCIe per direction", g.PCIeBW / giga, "GB/s"},
		detailRow{"nvlink_gen", "NVLink generation", float64(g.NVLinkGen), ""},
		detailRow{"nvlink_bw", "NVLink per direction", g.NVLinkBW / giga, "GB/s"},
		detailRow{"nvlink_domain", "NVLink domain", float64(g.NVLinkDomain), "GPUs"},
	)
	usableSrc := usableSource(g)
	table := [][]string{{"FIGURE", "VALUE", "UNIT", "SOURCE"}}
	for _, r := range rows {
		if r.value == 0 {
			continue
		}
		src := g.Sources[r.json]
		if r.json == usableKey {
			src = usableSrc
		}
		if src == "" {
			src = "(no source)"
		}
		table = append(table, []string{r.label, num(r.value), r.unit, src})
	}
	// Value right-aligned between text columns: align's rule is "first n
	// columns are text", so lay out label | value | unit+source by hand.
	labelW, valW, unitW := 0, 0, 0
	for _, r := range table {
		labelW = max(labelW, len(r[0]))
		valW = max(valW, len(r[1]))
		unitW = max(unitW, len(r[2]))
	}
	for _, r := range table {
		fmt.Fprintf(&b, "%-*s  %*s  %-*s  %s\n", labelW, r[0], valW, r[1], unitW, r[2], r[3])
	}
	if len(g.Notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range g.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// usableKey names the computed "usable memory" row of WriteDetail, which
// has no figure of its own in the database.
const usableKey = "usable memory"

// defaultUsable is the memory one process's tensors can occupy under the
// default runtime: what CUDA reports less that runtime's floor (CUDA
// context and library workspaces), the limit the memory-fit verdict and
// sweep --find-max-batch compare a model's peak with (0 when the runtime
// is missing, which drops the row).
func defaultUsable(g *GPU) float64 {
	rt, err := LookupRuntime(DefaultRuntime)
	if err != nil {
		return 0
	}
	return g.UsableMem(rt.MemoryFloor())
}

// usableSource says how defaultUsable was reached.
func usableSource(g *GPU) string {
	rt, err := LookupRuntime(DefaultRuntime)
	if err != nil {
		return ""
	}
	from := "memory CUDA reports"
	if g.CUDAMemBytes <= 0 {
		from = "nominal memory (no CUDA figure known)"
	}
	return fmt.Sprintf("derived: %s less the %s runtime's floor, %s MiB (CUDA context %s + workspace %s MiB; onnxcost gpus runtimes): what the memory-fit verdict compares a model's peak with",
		from, rt.Name, num(rt.MemoryFloor()/mib), num(rt.ContextBytes/mib), num(rt.WorkspaceBytes/mib))
}
