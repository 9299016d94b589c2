package hwdb

import (
	"math"
	"os"
	"strings"
	"testing"
)

// The GPU and runtime files are user input (--gpu-file, --runtime-file,
// the page's file controls): a file is either refused with positioned
// lines naming it, or every entry it yields holds the relations the
// cost model divides and subtracts by. Seeds: the example files and a
// few entries at the validation's edges.
func FuzzGPUFile(f *testing.F) {
	seed(f, "../testdata/gpus/my-gpus.yaml",
		"- name: X\n  base: A100-SXM4-80GB\n  boost_clock_mhz: 100\n",
		"- name: X\n  base: T4\n  mem_gib: 0.001\n  tdp_w: null\n",
		"gpus:\n  - name: X\n    base: H100\n    peak_tflops: {fp16_tensor: 1e-9}\n",
		"- &a\n  name: X\n  base: L4\n- <<: *a\n  name: Y\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		db, err := WithUserData("fuzz.yaml", data)
		if refused(t, err) {
			return
		}
		for _, g := range db.All() {
			checkGPU(t, g)
		}
	})
}

// checkGPU asserts what every priced GPU must satisfy: the required
// figures positive and finite, the optional ones finite and not negative,
// and the orderings validate promises.
func checkGPU(t *testing.T, g *GPU) {
	t.Helper()
	pos := map[string]float64{"boost clock": g.BoostClockMHz, "memory": g.MemBytes, "bandwidth": g.MemBW,
		"L2": g.L2Bytes, "TDP": g.TDPWatts, "launch": g.LaunchS, "fp32 peak": g.Peak[FP32], "SMs": float64(g.SMs)}
	for name, x := range pos {
		if !(x > 0) || math.IsInf(x, 0) {
			t.Fatalf("%s: %s %v accepted", g.Name, name, x)
		}
	}
	opt := []float64{g.BaseClockMHz, g.SustainedClockMHz, g.ClockPowerW, g.StreamEff, g.StreamRWEff, g.MemPJPerByte,
		g.CUDAMemBytes, g.L2BW, g.IdleWatts, g.MinPowerW, g.MaxPowerW, g.MinSMClockMHz, g.MemClockMHz, g.NVLinkBW, g.PCIeBW}
	for p, x := range g.Peak {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			t.Fatalf("%s: peak %s %v accepted", g.Name, p, x)
		}
	}
	for i, x := range opt {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			t.Fatalf("%s: optional figure %d is %v", g.Name, i, x)
		}
	}
	if g.IdleWatts >= g.TDPWatts || g.StreamEff > 1 || g.MinSMClockMHz > g.BoostClockMHz ||
		(g.MinPowerW > 0 && (g.MinPowerW > g.TDPWatts || g.IdleWatts >= g.MinPowerW)) ||
		(g.MaxPowerW > 0 && g.MaxPowerW < g.TDPWatts) || g.CUDAMem() > g.MemBytes {
		t.Fatalf("%s: relations broken: %+v", g.Name, g)
	}
}

// FuzzRuntimeFile: the runtime file's contract, as FuzzGPUFile's.
func FuzzRuntimeFile(f *testing.F) {
	seed(f, "../testdata/runtimes/my-runtimes.yaml",
		"- name: r\n  base: pytorch\n  dispatch_us: 1e9\n",
		"- name: r\n  base: onnxruntime\n  context_mib: 0.5\n  cuda_graph: 1\n",
		"- name: tensorrt\n  base: tensorrt\n  tensorrt_version: \"8.6\"\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		db, err := RuntimesWithUserData("fuzz.yaml", data)
		if refused(t, err) {
			return
		}
		for _, r := range db.All() {
			for i, x := range []float64{r.KernelGapScale, r.KernelGapS, r.DispatchS, r.ModuleS, r.OpCallScale, r.CallS,
				r.HostNodeS, r.AutogradS, r.OptimParamS, r.CudnnS, r.ContextBytes, r.WorkspaceBytes} {
				if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
					t.Fatalf("%s: figure %d is %v", r.Name, i, x)
				}
			}
			if r.Name == "" {
				t.Fatal("a runtime without a name accepted")
			}
		}
	})
}

// seed adds the example file at path, where it exists, and texts to f's
// corpus.
func seed(f *testing.F, path string, texts ...string) {
	if b, err := os.ReadFile(path); err == nil {
		f.Add(b)
	}
	for _, s := range texts {
		f.Add([]byte(s))
	}
}

// refused reports whether a parse of "fuzz.yaml" refused it, failing the
// run where the message does not start with the file's name.
func refused(t *testing.T, err error) bool {
	t.Helper()
	if err != nil && !strings.HasPrefix(err.Error(), "fuzz.yaml") {
		t.Fatalf("error does not name the file: %v", err)
	}
	return err != nil
}
