package calib

import (
	"cmp"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

func TestReadTableProvenance(t *testing.T) {
	// Prose comments, a key without a colon and a row are not provenance;
	// a second run's lines naming the same device are no conflict.
	p, err := ReadTableProvenance(writeTable(t, "# measured on our H200, driver 580\n# device: NVIDIA H200\n# SMS: 132\n#memory_gib:139.8\n"+
		"# driver: 580.159.04\n# software: PyTorch 2.11.0+cu130, CUDA 13.0\nmodel,ms\nm.onnx,1\n# device: NVIDIA H200\n# sms: 114\n# software: PyTorch 2.12\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Provenance{Device: "NVIDIA H200", SMs: 132, MemoryGiB: 139.8, Driver: "580.159.04", Software: "PyTorch 2.11.0+cu130, CUDA 13.0"}
	if p != want {
		t.Errorf("got %+v, want %+v", p, want)
	}
	if got := p.DeviceText(); got != "NVIDIA H200 (132 SMs, 139.8 GiB)" {
		t.Errorf("DeviceText %q", got)
	}
	p, err = ReadTableProvenance(writeTable(t, "# device: NVIDIA H200\nmodel,ms\nm.onnx,1\n# device: NVIDIA A100-SXM4-80GB\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Conflict != "NVIDIA H200; NVIDIA A100-SXM4-80GB" || p.Device != "NVIDIA H200" {
		t.Errorf("two devices: got %+v", p)
	}
	if p, err := ReadTableProvenance(writeTable(t, "# device: A\x1b[31m  B\t\r\nmodel,ms\nm.onnx,1\n")); err != nil || p.Device != "A?[31m B" {
		t.Errorf("control characters: got %+v, %v", p, err)
	}
	if p, err := ReadTableProvenance(writeTable(t, "model,ms\nm.onnx,1\n")); err != nil || p != (Provenance{}) || p.DeviceText() != "" {
		t.Errorf("no provenance lines: got %+v, %v", p, err)
	}
	for _, bad := range []string{"# sms: many\n", "# sms: -3\n", "# memory_gib: NaN\n", "# memory_gib: 0\n"} {
		_, err := ReadTableProvenance(writeTable(t, "# a table\n"+bad+"model,ms\nm.onnx,1\n"))
		if err == nil || !strings.Contains(err.Error(), "m.csv:2:") {
			t.Errorf("%q: want an error naming line 2, got %v", bad, err)
		}
	}
}

func TestProvenanceMismatch(t *testing.T) {
	h100, h200, a100 := "H100-SXM5-80GB", "H200-SXM-141GB", "A100-SXM4-80GB"
	h200run := Provenance{Device: "NVIDIA H200", SMs: 132, MemoryGiB: 139.8}
	for _, c := range []struct {
		p    Provenance
		want string // "" when nothing contradicts the GPU
		on   string
		warn string // what the warning says, when not want
	}{
		{h200run, "", h200, ""},
		// The same die: only the memory tells an H200 from an H100.
		{h200run, "139.8 GiB against 79.1", h100, ""},
		{h200run, "132 SMs against 108, 139.8 GiB against 79.1", a100, ""},
		// A driver that reserves a little less than the hwdb figure's.
		{Provenance{Device: "NVIDIA H100 80GB HBM3", SMs: 132, MemoryGiB: 79.6}, "", h100, ""},
		// A MIG slice: the SMs tell.
		{Provenance{Device: "NVIDIA H100 80GB HBM3 MIG 3g.40gb", SMs: 60}, "60 SMs against 132", h100, ""},
		{Provenance{Device: "cpu"}, "a CPU's times, not a GPU's", h100, "m.csv ran on the CPU, not on H100-SXM5-80GB: its times are the CPU's"},
		{Provenance{Driver: "580.159.04"}, "", a100, ""},
		{Provenance{Device: "NVIDIA H200", Conflict: "NVIDIA H200; NVIDIA L4"}, "they name several devices: NVIDIA H200; NVIDIA L4", h200, ""},
	} {
		gpu := mustGPU(t, c.on)
		if got := c.p.Mismatch(gpu); got != c.want {
			t.Errorf("%+v on %s: got %q, want %q", c.p, c.on, got, c.want)
		}
		w, warn := c.p.MismatchWarning("m.csv", gpu), cmp.Or(c.warn, c.want)
		if (w == "") != (warn == "") || !strings.Contains(w, warn) {
			t.Errorf("%+v on %s: warning %q", c.p, c.on, w)
		}
	}
}

// TestProvenanceMatching: the warning names the boards a device's SMs and
// memory fit, and none from a name or one figure alone.
func TestProvenanceMatching(t *testing.T) {
	all := hwdb.All()
	for _, c := range []struct {
		p    Provenance
		want string
	}{
		{Provenance{Device: "NVIDIA H200", SMs: 132, MemoryGiB: 139.8}, "H200-SXM-141GB"},
		{Provenance{Device: "NVIDIA A100-SXM4-80GB", SMs: 108, MemoryGiB: 79.2}, "A100-PCIe-80GB A100-SXM4-80GB"},
		{Provenance{Device: "NVIDIA H200", SMs: 132}, ""},
		{Provenance{Device: "NVIDIA H100 80GB HBM3 MIG 3g.40gb", SMs: 60, MemoryGiB: 39.5}, ""},
		{Provenance{Device: "cpu"}, ""},
	} {
		if got := strings.Join(c.p.Matching(all), " "); got != c.want {
			t.Errorf("%+v: matching %q, want %q", c.p, got, c.want)
		}
	}
	w := Provenance{Device: "NVIDIA H200", SMs: 132, MemoryGiB: 139.8}.MismatchWarning("m.csv", mustGPU(t, "H100-SXM5-80GB"))
	if !strings.HasSuffix(w, "give that GPU as --gpu (H200-SXM-141GB by its SMs and memory)") {
		t.Errorf("warning %q", w)
	}
}
