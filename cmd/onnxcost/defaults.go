package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// gpuEnv names the environment variable that gives --gpu a default.
const gpuEnv = "ONNXCOST_GPU"

// budgetFileName is the budget file `check` reads by default; its
// defaults.gpu also serves as the --gpu default of every command.
const budgetFileName = ".onnxcost.yaml"

// applyGPUDefault fills an omitted --gpu: from $ONNXCOST_GPU, else from
// defaults.gpu (and defaults.gpu_file) of the nearest .onnxcost.yaml in
// the working folder or above it, as git finds its repository. It records
// where the GPU came from in f.gpuSource ("" for the flag), which the
// text and Markdown headers show. No default at all is not an error here:
// the caller then asks for --gpu.
func applyGPUDefault(f *costFlags) error {
	if f.gpu != "" {
		return nil
	}
	if g := strings.TrimSpace(os.Getenv(gpuEnv)); g != "" {
		f.gpu, f.gpuSource = g, "$"+gpuEnv
		return nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil // no working folder: nothing to search
	}
	path, gpu, gpuFile, err := nearestBudgetGPU(cwd)
	if err != nil || gpu == "" {
		return err
	}
	f.gpu, f.gpuSource = gpu, path
	if f.gpuFile == "" && gpuFile != "" {
		if !filepath.IsAbs(gpuFile) {
			gpuFile = filepath.Join(filepath.Dir(path), gpuFile)
		}
		f.gpuFile = gpuFile
	}
	return nil
}

// nearestBudgetGPU walks from dir up to the root and returns the first
// .onnxcost.yaml found with its defaults.gpu and defaults.gpu_file (both
// "" when it names none). Only those keys are read, so a budget file
// that `check` would reject for other reasons still gives its GPU; a file
// that is not YAML is an error naming it.
func nearestBudgetGPU(dir string) (path, gpu, gpuFile string, err error) {
	for {
		p := filepath.Join(dir, budgetFileName)
		data, rerr := os.ReadFile(p)
		switch {
		case rerr == nil:
			var doc struct {
				Defaults struct {
					GPU     string `yaml:"gpu"`
					GPUFile string `yaml:"gpu_file"`
				} `yaml:"defaults"`
			}
			if yerr := yaml.Unmarshal(data, &doc); yerr != nil {
				return p, "", "", usageErr("%s: not valid YAML (looking for defaults.gpu, the --gpu default): %v", p, oneLine(yerr.Error()))
			}
			return p, strings.TrimSpace(doc.Defaults.GPU), strings.TrimSpace(doc.Defaults.GPUFile), nil
		case !errors.Is(rerr, fs.ErrNotExist):
			return p, "", "", usageErr("%s: %v", p, errors.Unwrap(rerr))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", "", nil
		}
		dir = parent
	}
}

// gpuSourceText is how a header names where the GPU came from.
func gpuSourceText(source string) string {
	if source == "" {
		return ""
	}
	return " (from " + source + ")"
}

// gpuSourceMarker passes a human rendering through to w, adding the
// GPU's source to its first line ("GPU T4 (from $ONNXCOST_GPU)"); a flag
// leaves it unchanged. Only the first line is held back: a text report
// held whole to edit its first line took 13 MB (5 MB of text, grown by
// doubling) for a 112k-node graph. Close writes a first line that never
// ended.
type gpuSourceMarker struct {
	w           io.Writer
	gpu, source string
	head        []byte // the first line while it is incomplete
	done        bool   // the first line has been written
}

func (m *gpuSourceMarker) Write(p []byte) (int, error) {
	if m.done || m.source == "" {
		return m.w.Write(p)
	}
	nl := bytes.IndexByte(p, '\n')
	if nl < 0 {
		m.head = append(m.head, p...)
		return len(p), nil
	}
	m.head = append(m.head, p[:nl]...)
	if err := m.flushHead(); err != nil {
		return 0, err
	}
	if _, err := m.w.Write(p[nl:]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes the first line if no newline ended it.
func (m *gpuSourceMarker) Close() error {
	if m.done || m.source == "" {
		return nil
	}
	return m.flushHead()
}

func (m *gpuSourceMarker) flushHead() error {
	m.done = true
	marked := strings.Replace(string(m.head), "GPU "+m.gpu, "GPU "+m.gpu+gpuSourceText(m.source), 1)
	_, err := io.WriteString(m.w, marked)
	return err
}
