package hwdb

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// derivedCUDAMem matches the arithmetic a derived cuda_mem_gib source
// states: "derived: 80 GiB x 0.98 = 78.4 GiB (... rule ...)".
var derivedCUDAMem = regexp.MustCompile(`^derived: ([0-9.]+) GiB x ([0-9.]+) = ([0-9.]+) GiB \((HBM|rule for GDDR without ECC|rule for GDDR shipped with ECC on)`)

// ruleFactor is the factor each derived rule of gpus.yaml's header uses.
var ruleFactor = map[string]float64{"HBM": 0.98, "rule for GDDR without ECC": 0.98, "rule for GDDR shipped with ECC on": 0.915}

// TestBuiltinCUDAMem: every built-in GPU states the memory CUDA reports,
// below its nominal size and with a source; a derived figure's stated
// arithmetic is the board's own nominal size times its rule's factor and
// is the figure held, so the rule cannot drift from the data.
func TestBuiltinCUDAMem(t *testing.T) {
	sourced, derived := 0, 0
	for _, g := range All() {
		c := g.CUDAMemBytes
		if c <= 0 || c > g.MemBytes || c < 0.9*g.MemBytes {
			t.Errorf("%s: CUDA-visible memory %.4g GiB, want within 90-100%% of the nominal %.4g GiB", g.Name, c/gib, g.MemBytes/gib)
			continue
		}
		src := g.Sources["cuda_mem_bytes"]
		if !strings.HasPrefix(src, "derived:") {
			sourced++
			continue
		}
		if strings.Contains(src, "as A100-SXM4-40GB") { // a same-memory twin's reading, not a rule
			sourced++
			continue
		}
		derived++
		m := derivedCUDAMem.FindStringSubmatch(src)
		if m == nil {
			t.Errorf("%s: derived CUDA memory source does not state its rule's arithmetic: %q", g.Name, src)
			continue
		}
		nominal, _ := strconv.ParseFloat(m[1], 64)
		factor, _ := strconv.ParseFloat(m[2], 64)
		result, _ := strconv.ParseFloat(m[3], 64)
		if nominal != g.MemBytes/gib || factor != ruleFactor[m[4]] ||
			math.Abs(result-math.Round(nominal*factor*100)/100) > 1e-9 || math.Abs(result-c/gib) > 1e-9 {
			t.Errorf("%s: derived %s GiB x %s = %s GiB (%s), holds %.4g GiB of nominal %.4g", g.Name, m[1], m[2], m[3], m[4], c/gib, g.MemBytes/gib)
		}
	}
	// The sourced readings are the point; the rules only fill gaps.
	if sourced < 15 {
		t.Errorf("%d GPUs with a sourced CUDA memory figure (%d derived), want at least 15", sourced, derived)
	}
}

// TestUsableMem: usable memory is what CUDA reports less the runtime's
// floor; a GPU with no CUDA figure (a user entry) falls back to its
// nominal size.
func TestUsableMem(t *testing.T) {
	g := &GPU{MemBytes: 16 * gib, CUDAMemBytes: 14.75 * gib}
	if got := g.UsableMem(300 * mib); got != 14.75*gib-300*mib {
		t.Errorf("UsableMem = %g, want CUDA total less the floor", got)
	}
	g.CUDAMemBytes = 0
	if got := g.UsableMem(0); got != 16*gib {
		t.Errorf("UsableMem with no CUDA figure = %g, want the nominal size", got)
	}
	if got := g.UsableMem(20 * gib); got != 0 {
		t.Errorf("UsableMem with a floor above the memory = %g, want 0", got)
	}
}

// TestCUDAMemValidation: a CUDA figure above the nominal size, or far
// below it (MiB written as GiB), is refused with its line; a variant that
// resizes the memory does not inherit its base's CUDA figure, which
// described another size.
func TestCUDAMemValidation(t *testing.T) {
	base := `
- name: Base
  vendor: Acme
  arch: Foo
  sms: 10
  boost_clock_mhz: 1000
  peak_tflops: {fp32: 2.56}
  mem_gib: 16
  cuda_mem_gib: %s
  mem_bw_gbps: 100
  l2_mib: 4
  tdp_w: 100
  launch_us: 3
`
	for _, bad := range []string{"16.5", "1.5"} {
		_, err := parse([]byte(strings.Replace(base, "%s", bad, 1)), parseOptions{origin: "u.yaml"})
		if err == nil || !strings.Contains(err.Error(), "u.yaml:9:") || !strings.Contains(err.Error(), "CUDA-visible memory") {
			t.Errorf("cuda_mem_gib %s: error %v, want one at line 9 naming the CUDA-visible memory", bad, err)
		}
	}
	file := strings.Replace(base, "%s", "15.5", 1) + `
- name: Big
  base: Base
  mem_gib: 32
- name: Faster
  base: Base
  mem_bw_gbps: 200
`
	gpus, err := parse([]byte(file), parseOptions{origin: "u.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*GPU{}
	for _, g := range gpus {
		got[g.Name] = g
	}
	if g := got["Big"]; g.CUDAMemBytes != 0 || g.Sources["cuda_mem_bytes"] != "" || g.CUDAMem() != 32*gib {
		t.Errorf("Big (memory resized): CUDA figure %g (source %q), want the base's dropped", g.CUDAMemBytes, g.Sources["cuda_mem_bytes"])
	}
	if g := got["Faster"]; g.CUDAMemBytes != 15.5*gib {
		t.Errorf("Faster (same memory): CUDA figure %g, want the base's 15.5 GiB", g.CUDAMemBytes)
	}
}
