package calib

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// precRows are one-kernel rows on gpu: MatMuls at fp32 measured fp32×
// their body, MatMuls on the tensor cores measured tc×, and three ops of
// other classes measured as priced, which anchor the GPU factor.
func precRows(gpu string, fp32, tc float64, withTC bool) []Row {
	type op struct {
		class, op string
		prec      hwdb.Precision
		factor    float64
	}
	ops := []op{{"gemm", "MatMul", hwdb.FP32, fp32}, {"elementwise", "Add", hwdb.FP32, 1},
		{"elementwise", "Sigmoid", hwdb.FP32, 1}, {"reduction", "Softmax", hwdb.FP32, 1}}
	if withTC {
		ops = append(ops, op{"gemm", "MatMul", hwdb.FP16Tensor, tc})
	}
	var rows []Row
	for _, o := range ops {
		for _, body := range testSizes {
			bound := "compute"
			if o.class != "gemm" {
				bound = "memory"
			}
			k := kern{o.class, o.op, bound, body}
			rep := synthReport(gpu, k)
			rep.Nodes[0].Precision = string(o.prec)
			rows = append(rows, Row{Name: fmt.Sprintf("%s/%s/%g", o.op, o.prec, body), MeasuredS: measuredAs([]kern{k}, func(kern) float64 { return o.factor }, 1), Report: rep})
		}
	}
	return rows
}

// A class run on two paths gets a cell per path: the fp32 GEMMs' 1.4×
// stays off the tensor-core GEMMs measured as priced, where one class cell
// put a compromise on both.
func TestPrecisionCellsSplitPaths(t *testing.T) {
	gpu := mustGPU(t, "T4")
	cal, err := Fit(gpu, precRows(gpu.Name, 1.4, 1, true), Source{})
	if err != nil {
		t.Fatal(err)
	}
	a := cal.For(gpu)
	ts := only("compute", 200e-6)
	fp32 := a.TermFactor("gemm", string(hwdb.FP32), "MatMul", "", "compute", ts)
	tc := a.TermFactor("gemm", string(hwdb.FP16Tensor), "MatMul", "", "compute", ts)
	if fp32 < 1.3 || tc > 1.07 {
		t.Errorf("compute factors: fp32 %.3f (measured 1.4x), fp16 tensor %.3f (measured 1x)", fp32, tc)
	}
	if got := cal.Paths["gemm"]; !slices.Equal(got, []string{"tensor", "vector"}) {
		t.Errorf("paths[gemm] = %v, want [tensor vector]", got)
	}
	var precCells []string
	for _, c := range cal.Cells {
		if c.Precision != "" {
			precCells = append(precCells, c.Class+"/"+c.Precision)
		}
	}
	// Elementwise and reduction rows hold one group: no cell of their own.
	if !slices.Equal(precCells, []string{"gemm/16bit", "gemm/fp32"}) {
		t.Errorf("precision cells %v, want gemm/16bit and gemm/fp32 only", precCells)
	}

	// The file keeps them, byte for byte.
	var buf bytes.Buffer
	if err := cal.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Parse("cal.yaml", buf.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	var again bytes.Buffer
	if err := back.Write(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Errorf("write of parse differs:\n%s\n---\n%s", buf.String(), again.String())
	}
	if f := back.For(gpu).TermFactor("gemm", string(hwdb.FP16Tensor), "MatMul", "", "compute", ts); f != tc {
		t.Errorf("parsed file's fp16 tensor factor %g, fitted %g", f, tc)
	}
}

// A calibration fitted on CUDA-core rows says nothing about a
// tensor-core kernel of the class: transferred, it moves the target's
// fp32 GEMMs and leaves its fp16 ones as priced.
func TestPrecisionTransferOnlyToFittedPaths(t *testing.T) {
	src := mustGPU(t, "P100-PCIe-16GB")
	cal, err := Fit(src, precRows(src.Name, 2, 1, false), Source{})
	if err != nil {
		t.Fatal(err)
	}
	tr := cal.For(mustGPU(t, "T4"))
	ts := only("compute", 200e-6)
	if f := tr.TermFactor("gemm", string(hwdb.FP32), "MatMul", "", "compute", ts); !(f > 1.02) {
		t.Errorf("transferred fp32 GEMM factor %.4f, want the source's 2x carried in part (> 1.02)", f)
	}
	if f := tr.TermFactor("gemm", string(hwdb.FP16Tensor), "MatMul", "", "compute", ts); f != 1 {
		t.Errorf("transferred fp16 tensor GEMM factor %.4f, want 1: the rows ran no GEMM on the tensor cores", f)
	}
	// On the GPU fitted such a kernel gets the GPU factor alone.
	if f, want := cal.For(src).TermFactor("gemm", string(hwdb.FP16Tensor), "MatMul", "", "compute", ts), cal.GPUFactor; !near(f, want, 1e-12) {
		t.Errorf("same GPU, fp16 tensor GEMM factor %.4f, want the GPU factor %.4f", f, want)
	}
	if d := cal.For(src).Describe(); !strings.Contains(d, "fitted on one compute path: gemm vector") {
		t.Errorf("same-GPU header %q does not say the GEMMs were fitted on the vector units only", d)
	}
	// A stream is one kernel at any width: an fp16 Add takes the fp32
	// rows' elementwise cells.
	if _, ok := cal.Paths["elementwise"]; ok {
		t.Errorf("paths %v name a streaming class", cal.Paths)
	}
	// A file without paths (written before them) transfers to every path.
	cal.Paths = nil
	if f := cal.For(mustGPU(t, "T4")).TermFactor("gemm", string(hwdb.FP16Tensor), "MatMul", "", "compute", ts); !(f > 1.02) {
		t.Errorf("without paths, fp16 tensor GEMM factor %.4f, want the class cells (> 1.02)", f)
	}
}

// One path is one library family: fp16 tensor-core rows carry to a
// TF32 tensor-core GEMM (cuBLAS's tensor-core kernels at both widths).
func TestPrecisionTransferWithinPath(t *testing.T) {
	src := mustGPU(t, "A100-SXM4-80GB")
	var rows []Row
	for _, r := range precRows(src.Name, 1, 2, true) {
		if r.Report.Nodes[0].Precision != string(hwdb.FP32) || r.Report.Nodes[0].KernelClass != "gemm" {
			rows = append(rows, r) // tensor-core GEMMs at 2x and the streams as priced
		}
	}
	cal, err := Fit(src, rows, Source{})
	if err != nil {
		t.Fatal(err)
	}
	ts := only("compute", 200e-6)
	if f := cal.For(mustGPU(t, "H100-SXM5-80GB")).TermFactor("gemm", string(hwdb.TF32Tensor), "MatMul", "", "compute", ts); !(f > 1.02) {
		t.Errorf("transferred TF32 tensor GEMM factor %.4f, want the fp16 tensor rows' 2x carried in part (> 1.02)", f)
	}
	if f := cal.For(mustGPU(t, "H100-SXM5-80GB")).TermFactor("gemm", string(hwdb.FP32), "MatMul", "", "compute", ts); f != 1 {
		t.Errorf("transferred fp32 GEMM factor %.4f, want 1", f)
	}
}

func TestParsePrecisionErrors(t *testing.T) {
	base := "format: 1\nsource: {gpu: T4}\nfit: {gpu_factor: 1, median_abs_err_before: 0, median_abs_err_after: 0}\ntransfer: {same_family: 0.15, other_family: 0.15}\n"
	for _, c := range []struct{ doc, want string }{
		{"paths: {gemm: [matrix]}\n", `unknown compute path "matrix"`},
		{"paths: {gemmm: [vector]}\n", `"gemmm" is not a GEMM-like kernel class`},
		{"paths: {elementwise: [vector]}\n", `"elementwise" is not a GEMM-like kernel class`},
		{"paths: {gemm: []}\n", "no compute path"},
		{"paths: {gemm: [vector, vector]}\n", `"vector" twice`},
		{"cells:\n  - {class: gemm, op: MatMul, bound: \"*\", size: \"*\", precision: fp32, n: 1, factor: 1.1}\n", "a precision cell"},
		{"cells:\n  - {class: gemm, bound: \"*\", size: \"*\", precision: fp9, n: 1, factor: 1.1}\n", "a precision cell"},
	} {
		_, err := Parse("cal.yaml", []byte(base+c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line containing %q", c.doc, err, c.want)
		}
	}
}
