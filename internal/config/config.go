// Package config reads the command line's defaults: the --gpu default
// from $ONNXCOST_GPU or the nearest .onnxcost.yaml, and where it came
// from, which the human headers show.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/onnxcost/onnxcost/internal/console"
	"github.com/onnxcost/onnxcost/internal/safefile"
	"go.yaml.in/yaml/v3"
)

// GPUEnv names the environment variable that gives --gpu a default.
const GPUEnv = "ONNXCOST_GPU"

// BudgetFileName is the budget file `check` reads by default; its
// defaults.gpu also serves as the --gpu default of every command.
const BudgetFileName = ".onnxcost.yaml"

// GPUDefault is the GPU an omitted --gpu stands for.
type GPUDefault struct {
	GPU string
	// Source says where GPU came from: "$ONNXCOST_GPU" or the budget
	// file's path.
	Source string
	// GPUFile is the budget file's defaults.gpu_file, made absolute
	// from the file's folder ("" when it names none).
	GPUFile string
}

// FindGPU finds an omitted --gpu's default: $ONNXCOST_GPU, else
// defaults.gpu (and defaults.gpu_file) of the nearest .onnxcost.yaml in
// the working folder or above it, as git finds its repository (see
// nearestBudgetGPU for where the search stops). No default at all is
// not an error (an empty GPU): the caller then asks for --gpu.
func FindGPU() (GPUDefault, error) {
	if g := strings.TrimSpace(os.Getenv(GPUEnv)); g != "" {
		return GPUDefault{GPU: g, Source: "$" + GPUEnv}, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return GPUDefault{}, nil // no working folder: nothing to search
	}
	path, gpu, gpuFile, err := nearestBudgetGPU(cwd)
	if err != nil || gpu == "" {
		return GPUDefault{}, err
	}
	if gpuFile != "" && !filepath.IsAbs(gpuFile) {
		gpuFile = filepath.Join(filepath.Dir(path), gpuFile)
	}
	return GPUDefault{GPU: gpu, Source: path, GPUFile: gpuFile}, nil
}

// nearestBudgetGPU walks from dir up and returns the first .onnxcost.yaml
// found with its defaults.gpu and defaults.gpu_file (both "" when it
// names none). Only those keys are read, so a budget file that `check`
// would reject for other reasons still gives its GPU; a file that is not
// YAML, or not a regular file, or over safefile.SideFileLimit bytes, is
// an error naming it.
//
// The file chooses the GPU of every command run below it without being
// named, so the search trusts only what the user could have put there:
// it stops at the repository root (a folder holding .git), at the file
// system root, and, on Unix, at a folder, or a file, that is not owned by
// the user or is writable by everyone (a file planted in /tmp, or in any
// shared parent, must not reach the folders below).
func nearestBudgetGPU(dir string) (path, gpu, gpuFile string, err error) {
	for {
		if fi, err := os.Stat(dir); err != nil || !ownedByUser(fi) || writableByAll(fi) {
			return "", "", "", nil
		}
		p := filepath.Join(dir, BudgetFileName)
		data, st, err := readNearest(p)
		switch {
		case err != nil:
			return p, "", "", err
		case st == untrusted:
			return "", "", "", nil
		case st == found:
			var doc struct {
				Defaults struct {
					GPU     string `yaml:"gpu"`
					GPUFile string `yaml:"gpu_file"`
				} `yaml:"defaults"`
			}
			if yerr := yaml.Unmarshal(data, &doc); yerr != nil {
				return p, "", "", fmt.Errorf("%s: not valid YAML (looking for defaults.gpu, the --gpu default): %v", p, console.OneLine(yerr.Error()))
			}
			return p, strings.TrimSpace(doc.Defaults.GPU), strings.TrimSpace(doc.Defaults.GPUFile), nil
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return "", "", "", nil // the repository root
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", "", nil
		}
		dir = parent
	}
}

// searchState is what readNearest found at one step of the search.
type searchState int

const (
	absent    searchState = iota // no file: the search goes on up
	found                        // a file to read the defaults from
	untrusted                    // a file someone else could have put there: the search stops
)

// readNearest reads the budget file at p for the --gpu default. The entry
// itself (a symbolic link, say) must be the user's; the file it leads to
// must be a regular file, checked before it is opened (a named pipe would
// block), the user's, not writable by everyone, and small.
func readNearest(p string) ([]byte, searchState, error) {
	lfi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, absent, nil
	}
	if err != nil {
		return nil, absent, fmt.Errorf("%s: %v", p, safefile.Reason(err))
	}
	if !ownedByUser(lfi) {
		return nil, untrusted, nil
	}
	f, fi, err := safefile.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, absent, nil // a dangling link
	}
	if err != nil {
		return nil, absent, fmt.Errorf("%s: %v", p, safefile.Reason(err))
	}
	defer f.Close()
	if !ownedByUser(fi) || writableByAll(fi) {
		return nil, untrusted, nil
	}
	data, err := safefile.ReadAll(f, fi, p, safefile.SideFileLimit)
	if err != nil {
		return nil, absent, fmt.Errorf("%s: %v", p, safefile.Reason(err))
	}
	return data, found, nil
}

// sourceText is how a header names where the GPU came from.
func sourceText(source string) string {
	if source == "" {
		return ""
	}
	return " (from " + source + ")"
}

// SourceMarker passes a human rendering through to W, adding the
// GPU's source to its first line ("GPU T4 (from $ONNXCOST_GPU)"); a flag
// leaves it unchanged. Only the first line is held back: a text report
// held whole to edit its first line took 13 MB (5 MB of text, grown by
// doubling) for a 112k-node graph. Close writes a first line that never
// ended.
type SourceMarker struct {
	W           io.Writer
	GPU, Source string
	head        []byte // the first line while it is incomplete
	done        bool   // the first line has been written
}

func (m *SourceMarker) Write(p []byte) (int, error) {
	if m.done || m.Source == "" {
		return m.W.Write(p)
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
	if _, err := m.W.Write(p[nl:]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes the first line if no newline ended it.
func (m *SourceMarker) Close() error {
	if m.done || m.Source == "" {
		return nil
	}
	return m.flushHead()
}

func (m *SourceMarker) flushHead() error {
	m.done = true
	marked := strings.Replace(string(m.head), "GPU "+m.GPU, "GPU "+m.GPU+sourceText(m.Source), 1)
	_, err := io.WriteString(m.W, marked)
	return err
}
