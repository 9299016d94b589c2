package hwdb

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// canonical is the list of names other packages rely on.
var canonical = []string{"P4", "P40", "P100-PCIe-16GB", "P100-SXM2-16GB", "V100-PCIe-16GB",
	"V100-SXM2-16GB", "V100-SXM2-32GB", "T4", "A10", "A30", "A100-SXM4-40GB", "A100-SXM4-80GB",
	"A100-PCIe-40GB", "A100-PCIe-80GB", "L4", "L40S", "H100-SXM5-80GB", "H100-PCIe-80GB",
	"H200-SXM-141GB", "B200", "RTX-4090", "MI250X", "MI300X", "GTX-1080-Ti", "Titan-X-Pascal",
	"Titan-Xp", "Titan-X-Maxwell", "M40", "MI25", "A40", "RTX-A6000", "RTX-3090", "V100-PCIe-32GB", "P100-PCIe-12GB"}

func mustBuiltin(t *testing.T) *DB {
	t.Helper()
	db, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func mustGPU(t *testing.T, name string) *GPU {
	t.Helper()
	g, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// near reports whether a and b agree to within rel (relative).
func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }

func TestBuiltinHasCanonicalNames(t *testing.T) {
	db := mustBuiltin(t)
	var names []string
	for _, g := range db.All() {
		names = append(names, g.Name)
	}
	if !slices.IsSorted(names) {
		t.Errorf("All() not sorted by name: %v", names)
	}
	for _, n := range canonical {
		if !slices.Contains(names, n) {
			t.Errorf("built-in database lacks %s", n)
		}
	}
}

// Every entry has every required figure, a source for each figure it has,
// and no source for a figure it lacks.
func TestBuiltinComplete(t *testing.T) {
	for _, g := range All() {
		if g.Vendor == "" || g.Arch == "" || g.SMs <= 0 || g.BoostClockMHz <= 0 ||
			g.Peak[FP32] <= 0 || g.MemBytes <= 0 || g.MemBW <= 0 || g.L2Bytes <= 0 ||
			g.TDPWatts <= 0 || g.IdleWatts <= 0 || g.LaunchS <= 0 || g.Year == 0 {
			t.Errorf("%s: missing a required figure: %+v", g.Name, g)
		}
		have := figureNames(g)
		for _, f := range have {
			if strings.TrimSpace(g.Sources[f]) == "" {
				t.Errorf("%s: %s has no source", g.Name, f)
			}
		}
		for f := range g.Sources {
			if !slices.Contains(have, f) {
				t.Errorf("%s: source for absent figure %s", g.Name, f)
			}
		}
		for p, x := range g.Peak {
			if !knownPrecision(p) || !(x > 0) || math.IsInf(x, 0) {
				t.Errorf("%s: bad peak %s = %g", g.Name, p, x)
			}
		}
	}
}

// Vendors headline 2:4-sparse tensor figures; the database must hold the
// dense ones (half the sparse headline).
func TestNoSparseHeadlines(t *testing.T) {
	cases := []struct {
		gpu    string
		p      Precision
		sparse float64 // vendor headline, TFLOPS
	}{
		{"H100-SXM5-80GB", FP16Tensor, 1979},
		{"H100-SXM5-80GB", BF16Tensor, 1979},
		{"H100-SXM5-80GB", FP8Tensor, 3958},
		{"H100-SXM5-80GB", TF32Tensor, 989},
		{"H100-SXM5-80GB", INT8Tensor, 3958},
		{"H100-PCIe-80GB", FP16Tensor, 1513},
		{"H200-SXM-141GB", FP8Tensor, 3958},
		{"A100-SXM4-80GB", FP16Tensor, 624},
		{"A100-SXM4-80GB", TF32Tensor, 312},
		{"A100-SXM4-80GB", INT8Tensor, 1248},
		{"A30", FP16Tensor, 330},
		{"A10", FP16Tensor, 250},
		{"L4", FP16Tensor, 242},
		{"L4", FP8Tensor, 485},
		{"L40S", FP16Tensor, 733},
		{"L40S", FP8Tensor, 1466},
		{"RTX-4090", FP16Tensor, 330.4},
		{"B200", FP16Tensor, 4500},
		{"B200", FP8Tensor, 9000},
		{"MI300X", FP16Tensor, 2614.9},
		{"MI300X", FP8Tensor, 5229.8},
	}
	for _, c := range cases {
		got := mustGPU(t, c.gpu).Peak[c.p] / tera
		want := c.sparse / 2 // dense = sparse headline / 2
		if near(got, c.sparse, 0.02) || !near(got, want, 0.02) {
			t.Errorf("%s %s = %g TFLOPS, want dense %g (sparse headline %g)", c.gpu, c.p, got, want, c.sparse)
		}
	}
}

func TestBandwidths(t *testing.T) {
	cases := map[string]float64{ // datasheet GB/s
		"A100-SXM4-80GB": 2039, "A100-SXM4-40GB": 1555, "A100-PCIe-80GB": 1935,
		"H100-SXM5-80GB": 3350, "H100-PCIe-80GB": 2000, "H200-SXM-141GB": 4800,
		"T4": 320, "V100-SXM2-16GB": 900, "P100-PCIe-16GB": 732, "L4": 300,
		"MI300X": 5300, "B200": 8000, "GTX-1080-Ti": 484, "M40": 288,
	}
	for name, gbps := range cases {
		if got := mustGPU(t, name).MemBW; !near(got, gbps*giga, 0.005) {
			t.Errorf("%s mem_bw = %g B/s, want %g GB/s", name, got, gbps)
		}
	}
	for _, g := range All() {
		// No GPU here exceeds 10 TB/s or falls below 100 GB/s; a figure out
		// of that range is a unit slip (MB/s, TB/s).
		if g.MemBW < 100*giga || g.MemBW > 10000*giga {
			t.Errorf("%s mem_bw %g B/s out of range", g.Name, g.MemBW)
		}
		if g.L2BW != 0 && g.L2BW <= g.MemBW {
			t.Errorf("%s L2 bandwidth %g not above DRAM %g", g.Name, g.L2BW, g.MemBW)
		}
	}
}

func TestPeakOrdering(t *testing.T) {
	for _, g := range All() {
		p := g.Peak
		chain := []Precision{INT8Tensor, FP16Tensor, TF32Tensor}
		if p[FP8Tensor] > 0 {
			chain = []Precision{FP8Tensor, FP16Tensor, TF32Tensor}
		}
		prev := Precision("")
		for _, c := range chain {
			if p[c] == 0 {
				continue
			}
			if prev != "" && p[prev] < p[c] {
				t.Errorf("%s: %s %g below %s %g", g.Name, prev, p[prev], c, p[c])
			}
			prev = c
		}
		if p[FP16Tensor] > 0 && p[FP16Tensor] < p[FP32] {
			t.Errorf("%s: fp16 tensor below fp32", g.Name)
		}
		if p[BF16Tensor] > 0 && p[BF16Tensor] != p[FP16Tensor] {
			t.Errorf("%s: bf16 tensor %g differs from fp16 tensor %g", g.Name, p[BF16Tensor], p[FP16Tensor])
		}
		if p[FP64] > p[FP32] {
			t.Errorf("%s: fp64 above fp32", g.Name)
		}
	}
}

// TestHalfVectorRates: an NVIDIA board with half-precision tensor cores
// also gives its vector (non-tensor) FP16 and, where it has BF16 tensor
// cores, BF16 rate. Without one, every softmax, norm and pointwise kernel
// of a half-precision model fell back to the FP32 rate with a warning on
// each report (L4, L40S, RTX 4090, A10, A30), though those boards run
// half vectors at least as fast.
func TestHalfVectorRates(t *testing.T) {
	for _, g := range All() {
		p := g.Peak
		if g.Vendor != "NVIDIA" || p[FP16Tensor] == 0 {
			continue
		}
		if p[FP16] < p[FP32] {
			t.Errorf("%s: vector fp16 %g below fp32 %g (or missing)", g.Name, p[FP16], p[FP32])
		}
		if p[BF16Tensor] > 0 && p[BF16] < p[FP32] {
			t.Errorf("%s: vector bf16 %g below fp32 %g (or missing)", g.Name, p[BF16], p[FP32])
		}
	}
}

// The FP32 peak must match SMs x lanes x 2 FLOP/FMA x boost clock for the
// architecture's lanes per SM/CU, within 3%: this catches a wrong SM count,
// clock or peak.
func TestPeakMatchesClock(t *testing.T) {
	skip := map[string]string{
		"B200": "80 TFLOPS FP32 at 148 SMs needs 2.1 GHz, above the 1965 MHz reported max clock; conflicting public figures",
	}
	for _, g := range All() {
		if why, ok := skip[g.Name]; ok {
			t.Logf("%s skipped: %s", g.Name, why)
			continue
		}
		lanes := g.Peak[FP32] / (float64(g.SMs) * 2 * g.BoostClockMHz * 1e6) // FP32 lanes per SM
		if !near(lanes, 64, 0.03) && !near(lanes, 128, 0.03) {
			t.Errorf("%s: fp32 peak implies %.1f lanes per SM (want 64 or 128)", g.Name, lanes)
		}
	}
}

func TestLookupAliases(t *testing.T) {
	cases := map[string]string{
		"a100": "A100-SXM4-80GB", "A100 SXM4 80GB": "A100-SXM4-80GB", "a100_sxm4_80gb": "A100-SXM4-80GB",
		"h100": "H100-SXM5-80GB", "v100": "V100-SXM2-16GB", "p100": "P100-PCIe-16GB",
		"4090": "RTX-4090", "h200": "H200-SXM-141GB", "t4": "T4", "Titan Xp": "Titan-Xp",
		"a100-pcie": "A100-PCIe-80GB", "mi300x": "MI300X", "1080ti": "GTX-1080-Ti",
		"3090": "RTX-3090", "a6000": "RTX-A6000", "a40": "A40", "v100-pcie-32gb": "V100-PCIe-32GB",
		"p100-12gb": "P100-PCIe-12GB",
	}
	for in, want := range cases {
		if g := mustGPU(t, in); g.Name != want {
			t.Errorf("Lookup(%q) = %s, want %s", in, g.Name, want)
		}
	}
}

func TestLookupUnknown(t *testing.T) {
	_, err := Lookup("A100X")
	want := `unknown GPU "A100X"; did you mean A100-SXM4-80GB, A100-PCIe-80GB`
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "(onnxcost gpus lists all)") {
		t.Errorf("Lookup(A100X) error = %v, want prefix %q", err, want)
	}
	_, err = Lookup("zzzz")
	if err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Lookup(zzzz) error = %v, want no suggestion", err)
	}
}

// Lookup hands out copies: changing one must not change the database.
func TestLookupReturnsCopy(t *testing.T) {
	g := mustGPU(t, "T4")
	g.MemBW = 1
	g.Peak[FP32] = 1
	if again := mustGPU(t, "T4"); again.MemBW == 1 || again.Peak[FP32] == 1 {
		t.Error("Lookup result aliases the database")
	}
}

func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const measuredYAML = `# measured ceilings on our A100 box
- name: A100-lab
  base: A100-SXM4-80GB
  aliases: [lab]
  mem_bw_gbps: 1790
  peak_tflops:
    fp16_tensor: 270
  launch_us: 4.5
  sources:
    mem_bw_gbps: "BabelStream triad, 2024-05-01"
- name: TinyGPU
  vendor: Acme
  arch: Toy
  sms: 4
  boost_clock_mhz: 1000
  peak_tflops: {fp32: 1.5}
  mem_gib: 2
  mem_bw_gbps: 100
  l2_mib: 1
  tdp_w: 30
  launch_us: 5
`

func TestLoadFileMeasured(t *testing.T) {
	path := writeTemp(t, "gpus.yaml", measuredYAML)
	gpus, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 2 {
		t.Fatalf("got %d GPUs, want 2", len(gpus))
	}
	lab, base := gpus[0], mustGPU(t, "A100-SXM4-80GB")
	if lab.MemBW != 1790*giga || lab.Peak[FP16Tensor] != 270*tera || lab.LaunchS != 4.5*usec {
		t.Errorf("overrides not applied: bw %g fp16 %g launch %g", lab.MemBW, lab.Peak[FP16Tensor], lab.LaunchS)
	}
	if lab.Peak[FP32] != base.Peak[FP32] || lab.SMs != base.SMs || lab.Sources["peak_flops.fp32"] != base.Sources["peak_flops.fp32"] {
		t.Error("figures not set in the file should be the base's, with the base's sources")
	}
	if lab.Sources["mem_bw"] != "BabelStream triad, 2024-05-01" {
		t.Errorf("mem_bw source = %q", lab.Sources["mem_bw"])
	}
	// A figure without a source in a user file is sourced to its line.
	if want := path + ":7"; lab.Sources["peak_flops.fp16_tensor"] != "user file "+want {
		t.Errorf("fp16 tensor source = %q, want user file %s", lab.Sources["peak_flops.fp16_tensor"], want)
	}
	if slices.Contains(lab.Aliases, "a100") {
		t.Error("derived entry inherited its base's aliases")
	}

	db, err := WithUserFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := db.Lookup("lab"); err != nil || g.Name != "A100-lab" {
		t.Errorf("user alias: %v %v", g, err)
	}
	if g, err := db.Lookup("a100"); err != nil || g.Name != "A100-SXM4-80GB" {
		t.Errorf("built-in alias lost: %v %v", g, err)
	}
	if n := len(db.All()); n != len(All())+2 {
		t.Errorf("db has %d GPUs, want built-ins + 2", n)
	}
}

// A user entry with a built-in name replaces it, and may take a built-in
// alias.
func TestWithUserFileOverride(t *testing.T) {
	path := writeTemp(t, "t4.yaml", "- name: t4\n  base: T4\n  aliases: [a100]\n  mem_bw_gbps: 250\n")
	db, err := WithUserFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := db.Lookup("T4")
	if err != nil || g.MemBW != 250*giga {
		t.Fatalf("T4 not overridden: %+v %v", g, err)
	}
	if g, _ := db.Lookup("a100"); g.Name != "t4" {
		t.Errorf("user alias a100 -> %s, want the user's t4", g.Name)
	}
	if len(db.All()) != len(All()) {
		t.Error("override added an entry instead of replacing")
	}
}

// TestUserNameTakesBuiltinAlias: a user's GPU named like a built-in's
// alias (their lab "A100") is what the name means from then on. The file
// was refused, blaming the built-in entry ("alias "a100" of
// A100-SXM4-80GB is the name of GPU A100") without naming the file; found
// by FuzzGPUFile.
func TestUserNameTakesBuiltinAlias(t *testing.T) {
	db, err := WithUserData("lab.yaml", []byte("- name: A100\n  base: A100-SXM4-80GB\n  mem_bw_gbps: 1790\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g, err := db.Lookup("a100"); err != nil || g.Name != "A100" || g.MemBW != 1790*giga {
		t.Errorf("a100 -> %v (%v), want the user's A100", g, err)
	}
	if g, err := db.Lookup("A100-SXM4-80GB"); err != nil || g.MemBW == 1790*giga {
		t.Errorf("the built-in A100-SXM4-80GB changed or went: %v %v", g, err)
	}
	// An alias of the user's that names another GPU is still refused,
	// and the message names the file.
	_, err = WithUserData("lab.yaml", []byte("- name: X\n  base: T4\n  aliases: [A100-SXM4-80GB]\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "lab.yaml: alias") {
		t.Errorf("error %v, want one naming lab.yaml", err)
	}
}

// `gpus --format json` output loads back unchanged.
func TestLoadFileJSONRoundTrip(t *testing.T) {
	orig := []*GPU{mustGPU(t, "T4"), mustGPU(t, "A100-PCIe-80GB"), mustGPU(t, "A40")}
	for _, indent := range []string{"  ", "\t"} {
		b, err := json.MarshalIndent(orig, "", indent)
		if err != nil {
			t.Fatal(err)
		}
		// Renamed so the user's copy can sit beside the built-ins.
		body := strings.ReplaceAll(string(b), `"name": "T4"`, `"name": "T4-copy"`)
		body = strings.ReplaceAll(body, `"name": "A100-PCIe-80GB"`, `"name": "A100-copy"`)
		body = strings.ReplaceAll(body, `"name": "A40"`, `"name": "A40-copy"`)
		gpus, err := LoadFile(writeTemp(t, "gpus.json", body))
		if err != nil {
			t.Fatalf("indent %q: %v", indent, err)
		}
		for i, g := range gpus {
			g.Name = orig[i].Name
			if SpecHash(g) != SpecHash(orig[i]) {
				a, _ := json.Marshal(g)
				c, _ := json.Marshal(orig[i])
				t.Errorf("round trip changed %s:\n got %s\nwant %s", g.Name, a, c)
			}
		}
	}
}

func TestLoadFileErrors(t *testing.T) {
	valid := "  vendor: Acme\n  arch: Toy\n  sms: 4\n  boost_clock_mhz: 1000\n  peak_tflops: {fp32: 1}\n" +
		"  mem_gib: 2\n  mem_bw_gbps: 100\n  l2_mib: 1\n  tdp_w: 30\n  launch_us: 5\n"
	cases := []struct{ name, body, want string }{
		{"unknown field", "- name: X\n" + valid + "  mem_bandwidth: 3\n", `:12: unknown field "mem_bandwidth"`},
		{"unknown precision", "- name: X\n" + valid + "  peak_flops: {fp4_tensor: 9}\n", `:12: unknown precision "fp4_tensor"`},
		{"negative", "- name: X\n" + valid + "  idle_w: -3\n", ":12: idle_w must be positive"},
		{"quoted number", "- name: X\n" + valid + "  idle_w: \"3\"\n", ":12: idle_w must be a number"},
		{"nan", "- name: X\n" + valid + "  idle_w: .nan\n", ":12: idle_w must be positive"},
		{"missing", "- name: X\n  vendor: Acme\n  arch: Toy\n", "mem_bw_gbps is required"},
		{"two spellings", "- name: X\n" + valid + "  mem_bw: 1e11\n", ":12: mem_bw given twice"},
		{"duplicate name", "- name: X\n" + valid + "- name: x\n" + valid, "defined twice"},
		{"unknown base", "- name: X\n  base: A100Z\n", `did you mean A100`},
		{"base loop", "- name: X\n  base: Y\n- name: Y\n  base: X\n", "loops"},
		{"bad source key", "- name: X\n" + valid + "  sources: {bandwidth: here}\n", `"bandwidth" is not a figure`},
		{"source for absent", "- name: X\n" + valid + "  sources: {idle_w: here}\n", "source given for idle_w"},
		{"idle above tdp", "- name: X\n" + valid + "  idle_w: 40\n", "idle power 40 W not below TDP"},
		{"memory energy per bit as bytes", "- name: X\n" + valid + "  mem_pj_per_byte: 31000\n", "memory energy 31000 pJ/B is not a per-byte figure"},
		{"stream efficiency as a percentage", "- name: X\n" + valid + "  stream_eff: 90\n", "stream efficiency 90 is not a fraction of the memory bandwidth"},
		{"read-write stream efficiency over 1", "- name: X\n" + valid + "  stream_rw_eff: 1.1\n", "read-write stream efficiency 1.1 is not a share of the stream efficiency"},
		{"vector GEMM scale as a percentage", "- name: X\n" + valid + "  vector_gemm_scale: 89\n", "vector GEMM scale 89 is outside 0.5-2"},
		{"vector convolution scale too small", "- name: X\n" + valid + "  vector_conv_scale: 0.3\n", "vector convolution scale 0.3 is outside 0.5-2"},
		{"launch in seconds", "- name: X\n" + strings.Replace(valid, "launch_us: 5", "launch_us: 5000", 1), "over 1 ms"},
		{"alias is a name", "- name: X\n" + valid + "  aliases: [t4]\n", `alias "t4" of X is the name of GPU T4`},
		{"min power above max", "- name: X\n" + valid + "  min_power_w: 40\n  max_power_w: 35\n", "min power limit 40 W above max power limit 35 W"},
		{"min power above tdp", "- name: X\n" + valid + "  min_power_w: 40\n", "min power limit 40 W above the default limit (TDP) 30 W"},
		{"idle at min power", "- name: X\n" + valid + "  idle_w: 20\n  min_power_w: 20\n", "idle power 20 W not below the min power limit 20 W"},
		{"max power below tdp", "- name: X\n" + valid + "  max_power_w: 20\n", ":12: X: max power limit 20 W below the default limit (TDP) 30 W"},
		{"min clock above boost", "- name: X\n" + valid + "  min_sm_clock_mhz: 1200\n", "min SM clock 1200 MHz above"},
		// A figure set here against one inherited from the base: the
		// message points at the entry (line 2), not at line 0.
		{"boost below the base's min clock", "# lab board\n- name: X\n  base: A100-SXM4-80GB\n  boost_clock_mhz: 100\n", "bad.yaml:2: X: min SM clock 210 MHz above"},
		{"tensor path below the vector path", "- name: X\n  base: P100-PCIe-16GB\n  peak_tflops: {fp16_tensor: 0.5}\n", "bad.yaml:3: X: peak fp16_tensor 0.5 TFLOPS below the vector path's fp16"},
		{"tdp below the base's idle", "# lab board\n- name: X\n  base: A100-SXM4-80GB\n  tdp_w: 50\n", "bad.yaml:2: X: idle power"},
		{"pcie both directions", "- name: X\n" + valid + "  pcie_gen: 4\n  pcie_gbps: 64\n", "PCIe bandwidth 64 GB/s exceeds one direction of PCIe gen 4"},
		{"nvlink both directions", "- name: X\n" + valid + "  nvlink_gen: 3\n  nvlink_gbps: 600\n", "NVLink bandwidth 600 GB/s exceeds one direction of NVLink gen 3"},
		{"nvlink without domain", "- name: X\n" + valid + "  nvlink_gen: 3\n  nvlink_gbps: 300\n", "nvlink_gbps and nvlink_domain go together"},
		{"nvlink domain of one", "- name: X\n" + valid + "  nvlink_gen: 3\n  nvlink_gbps: 300\n  nvlink_domain: 1\n", "nvlink_domain 1 must be 2..576"},
		{"pcie without gen", "- name: X\n" + valid + "  pcie_gbps: 31.5\n", "pcie_gen and pcie_gbps go together"},
		{"unknown pcie gen", "- name: X\n" + valid + "  pcie_gen: 9\n  pcie_gbps: 31.5\n", "unknown PCIe generation 9"},
		{"fractional gen", "- name: X\n" + valid + "  pcie_gen: 4.5\n  pcie_gbps: 31.5\n", "pcie_gen must be a whole number"},
		{"null required", "- name: X\n  base: T4\n  tdp_w: null\n", "tdp_w is required and cannot be null"},
		{"not a list", "just text\n", "expected a list"},
		{"empty", "", "no GPU entries"},
		{"syntax", "- name: [\n", "yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeTemp(t, "bad.yaml", c.body)
			_, err := WithUserFile(path)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestSpecHash(t *testing.T) {
	g := &GPU{Name: "X", Vendor: "Acme", Arch: "Toy", SMs: 4, BoostClockMHz: 1000,
		Peak: map[Precision]float64{FP32: 1e12, FP16Tensor: 8e12}, MemBytes: 2 * gib, MemBW: 100 * giga,
		L2Bytes: mib, TDPWatts: 30, LaunchS: 5 * usec, Sources: map[string]string{"mem_bw": "a", "sms": "b"}}
	h := SpecHash(g)
	// Pinned so an accidental change to the JSON form (and so to every
	// report's spec hash) shows up here.
	if h != "f11493f494e6" {
		t.Errorf("SpecHash = %s; pinned value changed", h)
	}
	c := g.Clone()
	c.Peak = map[Precision]float64{FP16Tensor: 8e12, FP32: 1e12} // other insertion order
	if SpecHash(c) != h {
		t.Error("SpecHash depends on map order")
	}
	c.MemBW++
	if SpecHash(c) == h {
		t.Error("SpecHash ignores a figure")
	}
	for _, g := range All() {
		if s := SpecHash(g); len(s) != 12 || SpecHash(g) != s {
			t.Errorf("%s: hash %q", g.Name, s)
		}
	}
}

func TestJSONForm(t *testing.T) {
	b, err := json.Marshal(All())
	if err != nil {
		t.Fatal(err)
	}
	var arr []map[string]any
	if err := json.Unmarshal(b, &arr); err != nil {
		t.Fatal(err)
	}
	if len(arr) != len(All()) {
		t.Fatalf("got %d objects", len(arr))
	}
	for _, o := range arr {
		if _, ok := o["name"].(string); !ok {
			t.Errorf("object without name: %v", o)
		}
	}
}

// checkGolden compares what write writes with testdata/file (-update
// rewrites the file).
func checkGolden(t *testing.T, file string, write func(w io.Writer) error) {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", file), b.Bytes(), *update)
}

func TestWriteTableGolden(t *testing.T) {
	checkGolden(t, "table.golden", func(w io.Writer) error { return WriteTable(w, All()) })
}

func TestWriteDetailGolden(t *testing.T) {
	for _, name := range []string{"T4", "A100-PCIe-80GB", "MI300X", "A40"} {
		checkGolden(t, "detail_"+name+".golden", func(w io.Writer) error { return WriteDetail(w, mustGPU(t, name)) })
	}
}

// A derived entry drops an inherited figure with null: the figure and its
// source go, the rest stays the base's.
func TestLoadFileNullDropsInherited(t *testing.T) {
	path := writeTemp(t, "pcie.yaml", "- name: A100-box\n  base: A100-SXM4-80GB\n  max_power_w: null\n  nvlink_gbps: null\n  nvlink_gen: null\n  nvlink_domain: null\n")
	gpus, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, base := gpus[0], mustGPU(t, "A100-SXM4-80GB")
	if g.MaxPowerW != 0 || g.NVLinkBW != 0 || g.NVLinkGen != 0 {
		t.Errorf("null did not drop: max power %g, nvlink %g gen %d", g.MaxPowerW, g.NVLinkBW, g.NVLinkGen)
	}
	for _, f := range []string{"max_power_w", "nvlink_bw", "nvlink_gen", "nvlink_domain"} {
		if _, ok := g.Sources[f]; ok {
			t.Errorf("source of dropped %s kept", f)
		}
	}
	if g.MinPowerW != base.MinPowerW || g.PCIeBW != base.PCIeBW || g.Sources["min_power_w"] != base.Sources["min_power_w"] {
		t.Error("figures not nulled should stay the base's")
	}
}

// Built-in data must source every figure it sets, new fields included.
func TestBuiltinParseNeedsSources(t *testing.T) {
	body := "- name: X\n  vendor: Acme\n  arch: Toy\n  sms: 4\n  boost_clock_mhz: 1000\n  peak_tflops: {fp32: 1}\n" +
		"  mem_gib: 2\n  mem_bw_gbps: 100\n  l2_mib: 1\n  tdp_w: 30\n  launch_us: 5\n  pcie_gen: 4\n  pcie_gbps: 31.5\n" +
		"  sources:\n    sms, boost_clock_mhz, peak_tflops.fp32, mem_gib, mem_bw_gbps, l2_mib, tdp_w, launch_us, pcie_gen: here\n"
	_, err := parse([]byte(body), parseOptions{origin: "b.yaml", builtin: true})
	if err == nil || !strings.Contains(err.Error(), "X: pcie_bw has no source") {
		t.Errorf("error = %v, want pcie_bw has no source", err)
	}
}

// The interconnect, power and clock figures of the entries the multi-GPU
// and energy work rely on, against their datasheets (per direction).
func TestInterconnectAndPowerFigures(t *testing.T) {
	cases := []struct {
		gpu                string
		nvlink, pcie       float64 // GB/s per direction
		minPower, maxPower float64
	}{
		{"A100-SXM4-80GB", 300, 31.51, 100, 400},
		{"A100-SXM4-40GB", 300, 31.51, 100, 400},
		{"A100-PCIe-80GB", 0, 31.51, 150, 300},
		{"H100-SXM5-80GB", 450, 63.02, 200, 700},
		{"H200-SXM-141GB", 450, 63.02, 200, 700},
		{"V100-SXM2-32GB", 150, 15.76, 150, 300},
		{"B200", 900, 0, 0, 0},
		{"A40", 56.25, 31.51, 100, 300},
		{"L40S", 0, 31.51, 100, 350},
		{"T4", 0, 15.76, 60, 70},
		{"L4", 0, 31.51, 40, 72},
		{"RTX-A6000", 56.25, 31.51, 100, 300},
	}
	for _, c := range cases {
		g := mustGPU(t, c.gpu)
		if !near(g.NVLinkBW, c.nvlink*giga, 1e-9) || !near(g.PCIeBW, c.pcie*giga, 1e-9) ||
			g.MinPowerW != c.minPower || g.MaxPowerW != c.maxPower {
			t.Errorf("%s: nvlink %g pcie %g power %g-%g, want %g %g %g-%g", c.gpu, g.NVLinkBW/giga, g.PCIeBW/giga,
				g.MinPowerW, g.MaxPowerW, c.nvlink, c.pcie, c.minPower, c.maxPower)
		}
	}
	// GeForce Ampere runs FP32 accumulate at half the rate of the
	// datacenter/workstation parts of the same die.
	if r := mustGPU(t, "RTX-3090").Peak[FP16Tensor] / mustGPU(t, "RTX-3090").Peak[FP32]; !near(r, 2, 0.01) {
		t.Errorf("RTX-3090 fp16_tensor/fp32 = %g, want 2 (half-rate FP32 accumulate)", r)
	}
	if r := mustGPU(t, "A40").Peak[FP16Tensor] / mustGPU(t, "A40").Peak[FP32]; !near(r, 4, 0.01) {
		t.Errorf("A40 fp16_tensor/fp32 = %g, want 4 (full-rate FP32 accumulate)", r)
	}
}

// Peer bandwidth for n GPUs: NVLink inside its domain, PCIe beyond it.
func TestPeerBW(t *testing.T) {
	cases := []struct {
		gpu  string
		n    int
		gbps float64
	}{
		{"A100-SXM4-80GB", 1, 0},
		{"A100-SXM4-80GB", 8, 300},
		{"A100-SXM4-80GB", 16, 31.51}, // across nodes: no NVLink figure, the host link
		{"A40", 2, 56.25},
		{"A40", 4, 31.51}, // beyond the bridged pair
		{"A100-PCIe-80GB", 2, 31.51},
		{"H200-SXM-141GB", 4, 450},
		{"L40S", 2, 31.51},
		{"B200", 2, 900},
	}
	for _, c := range cases {
		if got := mustGPU(t, c.gpu).PeerBW(c.n); !near(got, c.gbps*giga, 1e-9) {
			t.Errorf("%s PeerBW(%d) = %g GB/s, want %g", c.gpu, c.n, got/giga, c.gbps)
		}
	}
}
