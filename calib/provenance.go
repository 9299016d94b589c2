package calib

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/safefile"
)

// Provenance is what a measurement says about the machine it ran on: the
// device as the CUDA runtime names it (torch.cuda.get_device_name,
// cudaDeviceProp.name), its SM count and CUDA-visible memory, and the
// driver. Every field is optional; a zero field is not known. A
// calibration records it (Source.Device, Source.Driver), and a
// measurement whose device plainly is not the GPU being calibrated is
// worth a warning before it teaches that GPU's estimates anything
// (Mismatch).
type Provenance struct {
	Device    string  `json:"name,omitempty"`
	SMs       int     `json:"sms,omitempty"`
	MemoryGiB float64 `json:"memory_gib,omitempty"`
	Driver    string  `json:"driver,omitempty"`
	// Software is what ran the measured calls, as the measurements name
	// it ("PyTorch 2.11.0+cu130, cuDNN 9.19"; a Kineto trace's CUDA
	// runtime): a calibration's Source.Runtime when its rows do not name
	// one.
	Software string `json:"software,omitempty"`
	// Conflict is set when the measurements name more than one device
	// (a table that accumulated runs of two machines): the devices, in
	// words. Device and its figures are then the first named.
	Conflict string `json:"conflict,omitempty"`
}

// DeviceText is the device in words: "NVIDIA H200 (132 SMs, 139.8 GiB)",
// with what is known; "" when nothing is.
func (p Provenance) DeviceText() string {
	if p.isCPU() {
		return "the CPU"
	}
	var figs []string
	if p.SMs > 0 {
		figs = append(figs, fmt.Sprintf("%d SMs", p.SMs))
	}
	if p.MemoryGiB > 0 {
		figs = append(figs, fmt.Sprintf("%.1f GiB", p.MemoryGiB))
	}
	name := p.Device
	if name == "" && len(figs) > 0 {
		name = "a device"
	}
	if len(figs) == 0 {
		return name
	}
	return name + " (" + strings.Join(figs, ", ") + ")"
}

// isCPU reports whether the measurements ran on the CPU ("device: cpu",
// a CPU-only profile).
func (p Provenance) isCPU() bool { return strings.EqualFold(p.Device, "cpu") }

// memoryTolerance is how far a device's reported memory may lie from the
// hwdb entry's CUDA-visible total and still be that board: the driver's
// reservation moves with its version by a few hundred MiB (about 1% of an
// 80 GB board), and ECC on a GDDR board takes 1/16 (6%) when toggled. A
// different board of the same die differs by a third or more (H100 80 GB
// against H200 141 GB, A100 40 GB against 80 GB, V100 16 GB against 32 GB).
const memoryTolerance = 0.08

// Mismatch says why the device p describes is not g, "" when nothing
// known contradicts g: the measurements name several devices, ran on the
// CPU (scripts/measure_gpu.py --device cpu writes "device: cpu"), their SM
// count differs from g's (another die, a cut-down part, a MIG slice), or
// their memory lies more than memoryTolerance from g's CUDA-visible
// total. The device's name is not compared: the CUDA runtime's names
// ("NVIDIA H100 80GB HBM3") are not hwdb's, and the figures decide.
func (p Provenance) Mismatch(g *hwdb.GPU) string {
	if p.Conflict != "" {
		return "they name several devices: " + p.Conflict
	}
	if p.isCPU() {
		return "a CPU's times, not a GPU's"
	}
	if g == nil {
		return ""
	}
	var why []string
	if p.SMs > 0 && g.SMs > 0 && p.SMs != g.SMs {
		why = append(why, fmt.Sprintf("%d SMs against %d", p.SMs, g.SMs))
	}
	if mem := g.CUDAMem(); p.MemoryGiB > 0 && mem > 0 {
		gib := mem / (1 << 30)
		if math.Abs(p.MemoryGiB/gib-1) > memoryTolerance {
			why = append(why, fmt.Sprintf("%.1f GiB against %.1f", p.MemoryGiB, gib))
		}
	}
	return strings.Join(why, ", ")
}

// MismatchWarning is the one-line warning for measurements in file whose
// device is not g (Mismatch), "" when nothing contradicts g.
func (p Provenance) MismatchWarning(file string, g *hwdb.GPU) string {
	why := p.Mismatch(g)
	if why == "" {
		return ""
	}
	if p.Conflict != "" {
		return fmt.Sprintf("%s: %s; a calibration describes one GPU: give it one device's measurements", file, why)
	}
	if p.isCPU() {
		return fmt.Sprintf("%s ran on the CPU, not on %s: its times are the CPU's, and what is fitted from them describes no GPU", file, g.Name)
	}
	give := "give that GPU as --gpu (onnxcost gpus lists them)"
	if m := p.Matching(hwdb.All()); len(m) > 0 {
		give = "give that GPU as --gpu (" + strings.Join(m, " or ") + " by its SMs and memory)"
	}
	return fmt.Sprintf("%s ran on %s, not on %s (%s): what it measured describes the GPU it ran on; %s",
		file, p.DeviceText(), g.Name, why, give)
}

// Matching lists the GPUs among gpus that nothing p knows contradicts,
// by name, when p knows both the SM count and the memory (a name alone
// says too little: every board of a die shares its SMs).
func (p Provenance) Matching(gpus []*hwdb.GPU) []string {
	if p.SMs == 0 || p.MemoryGiB == 0 || p.Conflict != "" || p.isCPU() {
		return nil
	}
	var out []string
	for _, g := range gpus {
		if p.Mismatch(g) == "" {
			out = append(out, g.Name)
		}
	}
	return out
}

// maxFieldRunes caps a device name or driver version read from a file:
// the longest CUDA device names are about 40 characters.
const maxFieldRunes = 120

// CleanField is a device name or driver version as a file gave it, made
// safe for one line of a terminal and a YAML scalar: white space (a line
// break included) becomes one space, control and other unprintable
// characters '?', and a longer one is cut to maxFieldRunes, its last an
// ellipsis (a hostile trace's name must not move the cursor or fill the
// screen). Cleaning a clean field leaves it as it is.
func CleanField(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unprintable(r):
			return '?'
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxFieldRunes {
		s = string(r[:maxFieldRunes-1]) + "…"
	}
	return s
}

// provenanceKeys are the "# key: value" comment lines of a measurements
// table that ReadTableProvenance reads (scripts/measure_gpu.py writes
// them); any other comment is prose.
var provenanceKeys = map[string]bool{"device": true, "sms": true, "memory_gib": true, "driver": true, "software": true}

// ReadTableProvenance reads the provenance comment lines of the
// measurements table at path: "# device: NAME", "# sms: N",
// "# memory_gib: X", "# driver: VERSION", "# software: WHAT RAN THE
// CALLS", each anywhere among the table's
// comment lines. A table appended to by several runs repeats them; runs
// that name different devices set Conflict. A key with a value that is
// not its kind (sms not a whole number) is an error naming the line.
func ReadTableProvenance(path string) (Provenance, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Provenance{}, fmt.Errorf("measurements %s: %v", path, safefile.Reason(err))
	}
	return tableProvenance(path, data)
}

// tableProvenance is ReadTableProvenance of the table's bytes.
func tableProvenance(path string, data []byte) (Provenance, error) {
	var p Provenance
	var devices []string
	for i, text := range strings.Split(string(data), "\n") {
		line := i + 1
		key, val, ok := provenanceLine(text)
		if !ok {
			continue
		}
		bad := func(kind string) error {
			return fmt.Errorf("measurements %s:%d: # %s: %q is not %s", path, line, key, val, kind)
		}
		switch key {
		case "device":
			if !slices.Contains(devices, val) {
				devices = append(devices, val)
			}
			if p.Device == "" {
				p.Device = val
			}
		case "sms":
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 {
				return Provenance{}, bad("a whole number of SMs")
			}
			if p.SMs == 0 {
				p.SMs = n
			}
		case "memory_gib":
			x, err := strconv.ParseFloat(val, 64)
			if err != nil || !(x > 0) || math.IsInf(x, 0) {
				return Provenance{}, bad("a memory size in GiB")
			}
			if p.MemoryGiB == 0 {
				p.MemoryGiB = x
			}
		case "driver":
			if p.Driver == "" {
				p.Driver = val
			}
		case "software":
			if p.Software == "" {
				p.Software = val
			}
		}
	}
	if len(devices) > 1 {
		p.Conflict = strings.Join(devices, "; ")
	}
	return p, nil
}

// provenanceLine splits a "# key: value" comment line with a known key.
func provenanceLine(s string) (key, val string, ok bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "#") {
		return "", "", false
	}
	key, val, ok = strings.Cut(strings.TrimSpace(s[1:]), ":")
	key = strings.ToLower(strings.TrimSpace(key))
	if !ok || !provenanceKeys[key] {
		return "", "", false
	}
	val = CleanField(val)
	return key, val, val != ""
}
