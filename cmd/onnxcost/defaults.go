package main

import "github.com/onnxcost/onnxcost/internal/config"

// applyGPUDefault fills an omitted --gpu from config.FindGPU, recording
// where it came from in f.gpuSource ("" for the flag), which the text and
// Markdown headers show; a --gpu-file given wins over the budget file's.
func applyGPUDefault(f *costFlags) error {
	if f.gpu != "" {
		return nil
	}
	d, err := config.FindGPU()
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if d.GPU == "" {
		return nil
	}
	f.gpu, f.gpuSource = d.GPU, d.Source
	if f.gpuFile == "" {
		f.gpuFile = d.GPUFile
	}
	return nil
}
