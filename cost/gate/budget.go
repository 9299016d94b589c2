package gate

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/internal/safefile"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/train"
	"go.yaml.in/yaml/v3"
)

// Level is what an assertion does when it fails.
type Level string

const (
	Off   Level = "off"
	Warn  Level = "warn"
	Error Level = "error"
)

// Settings are the estimate parameters of a model: budget defaults, with
// per-model overrides.
type Settings struct {
	GPU     string `yaml:"gpu" json:"gpu,omitempty"`
	GPUFile string `yaml:"gpu_file" json:"gpu_file,omitempty"`
	// Runtime names the execution profile, RuntimeFile a user file of
	// profiles (as GPUFile); "" is the model's default (tensorrt, or
	// onnxruntime for one holding operators only it runs).
	Runtime     string `yaml:"runtime" json:"runtime,omitempty"`
	RuntimeFile string `yaml:"runtime_file" json:"runtime_file,omitempty"`
	// Calibration is a CAL.yaml from `onnxcost calibrate` (as
	// --calibration; relative to the budget file).
	Calibration string           `yaml:"calibration" json:"calibration,omitempty"`
	DType       string           `yaml:"dtype" json:"dtype,omitempty"`
	Plan        string           `yaml:"plan" json:"plan,omitempty"`
	Batch       int64            `yaml:"batch" json:"batch,omitempty"`
	Dims        map[string]int64 `yaml:"dims" json:"dims,omitempty"`
	// InputData is --input-data: a folder of input_<i>.pb tensors the
	// graph inputs are bound to (relative to the budget file).
	InputData string `yaml:"input_data" json:"input_data,omitempty"`
	// Train prices one training step (--train) with Optimizer,
	// Checkpoint, GradAccum and DataParallel ("" and 0: the flags'
	// defaults), which mean nothing without it. nil is unset (a model's
	// train: false overrides the defaults' true).
	Train        *bool  `yaml:"train" json:"train,omitempty"`
	Optimizer    string `yaml:"optimizer" json:"optimizer,omitempty"`
	Checkpoint   string `yaml:"checkpoint" json:"checkpoint,omitempty"`
	GradAccum    int64  `yaml:"grad_accum" json:"grad_accum,omitempty"`
	DataParallel int64  `yaml:"data_parallel" json:"data_parallel,omitempty"`
	// PowerCapW and SMClockMHz are --power-cap and --sm-clock (0: the
	// GPU's default), GPUs --gpus (0: one GPU).
	PowerCapW  float64 `yaml:"power_cap" json:"power_cap,omitempty"`
	SMClockMHz float64 `yaml:"sm_clock" json:"sm_clock,omitempty"`
	GPUs       int64   `yaml:"gpus" json:"gpus,omitempty"`
	// Warm is --warm: a call repeated back to back (nil: unset).
	Warm *bool `yaml:"warm" json:"warm,omitempty"`
}

// Training says whether s prices a training step.
func (s Settings) Training() bool { return s.Train != nil && *s.Train }

// WarmCall says whether s prices a call repeated back to back.
func (s Settings) WarmCall() bool { return s.Warm != nil && *s.Warm }

// settingKeys are the keys a defaults or model mapping may set.
const settingKeys = "gpu, gpu_file, runtime, runtime_file, calibration, dtype, plan, batch, dims, input_data, train, optimizer, checkpoint, grad_accum, data_parallel, power_cap, sm_clock, gpus, warm"

// merge returns s with o's set (non-zero) fields applied over it.
func (s Settings) merge(o Settings) Settings {
	s.GPU = cmp.Or(o.GPU, s.GPU)
	s.GPUFile = cmp.Or(o.GPUFile, s.GPUFile)
	s.Runtime = cmp.Or(o.Runtime, s.Runtime)
	s.RuntimeFile = cmp.Or(o.RuntimeFile, s.RuntimeFile)
	s.Calibration = cmp.Or(o.Calibration, s.Calibration)
	s.DType = cmp.Or(o.DType, s.DType)
	s.Plan = cmp.Or(o.Plan, s.Plan)
	s.Batch = cmp.Or(o.Batch, s.Batch)
	if len(o.Dims) > 0 {
		d := map[string]int64{}
		maps.Copy(d, s.Dims)
		maps.Copy(d, o.Dims)
		s.Dims = d
	}
	s.InputData = cmp.Or(o.InputData, s.InputData)
	if o.Train != nil {
		s.Train = o.Train
	}
	s.Optimizer = cmp.Or(o.Optimizer, s.Optimizer)
	s.Checkpoint = cmp.Or(o.Checkpoint, s.Checkpoint)
	s.GradAccum = cmp.Or(o.GradAccum, s.GradAccum)
	s.DataParallel = cmp.Or(o.DataParallel, s.DataParallel)
	s.PowerCapW = cmp.Or(o.PowerCapW, s.PowerCapW)
	s.SMClockMHz = cmp.Or(o.SMClockMHz, s.SMClockMHz)
	s.GPUs = cmp.Or(o.GPUs, s.GPUs)
	if o.Warm != nil {
		s.Warm = o.Warm
	}
	return s
}

// conflict names what s asks for that cannot be priced: a training
// setting without train, or warm with it; "" when none.
func (s Settings) conflict() string {
	if s.Training() {
		if s.WarmCall() {
			return "warm: true prices an inference call repeated back to back; a training step's traffic is priced as its own (drop warm or train)"
		}
		return ""
	}
	for _, set := range []struct {
		key string
		on  bool
	}{{"optimizer", s.Optimizer != ""}, {"checkpoint", s.Checkpoint != ""}, {"grad_accum", s.GradAccum != 0}, {"data_parallel", s.DataParallel != 0}} {
		if set.on {
			return set.key + " needs train: true (it sets up a training step; an inference estimate has none)"
		}
	}
	return ""
}

// Assertion is one budget on one metric of one model.
type Assertion struct {
	Metric *Metric
	Level  Level
	// Max is an absolute limit on the head value (HasMax false: none).
	Max    float64
	HasMax bool
	MaxRaw string
	// MaxIncrease is a limit on the relative increase over the base
	// report (HasMaxIncrease false: none).
	MaxIncrease    float64
	HasMaxIncrease bool
	MaxIncreaseRaw string
	Line           int // line of the assertion in the budget file
}

// ModelBudget is one entry of `models:`.
type ModelBudget struct {
	Name       string
	Path       string // as written; resolved against the budget file's folder
	Settings   Settings
	Assertions []Assertion
	Line       int
}

// Budget is a parsed budget file.
type Budget struct {
	File     string
	Defaults Settings
	Models   []ModelBudget
}

// ConfigError is a budget-file error that knows its line.
type ConfigError struct {
	File string
	Line int
	Msg  string
}

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// LoadBudget reads a budget file (YAML, or JSON, which YAML reads too).
func LoadBudget(path string) (*Budget, error) {
	data, err := safefile.ReadFile(path, safefile.SideFileLimit)
	if err != nil {
		return nil, &ConfigError{File: path, Msg: "cannot read budget file: " + safefile.Reason(err).Error()}
	}
	return ParseBudget(path, data)
}

// ParseBudget parses budget file contents; path is used in messages.
func ParseBudget(path string, data []byte) (*Budget, error) {
	p := &budgetParser{file: path}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err == io.EOF {
		return nil, &ConfigError{File: path, Msg: "the budget file is empty"}
	} else if err != nil {
		return nil, &ConfigError{File: path, Line: yamlErrLine(err), Msg: "not valid YAML or JSON: " + yamlErrText(err)}
	}
	if len(doc.Content) == 0 {
		return nil, p.errf(&doc, "the budget file is empty")
	}
	root := doc.Content[0]
	b := &Budget{File: path}
	if err := p.budget(root, b); err != nil {
		return nil, err
	}
	return b, nil
}

type budgetParser struct{ file string }

func (p *budgetParser) errf(n *yaml.Node, format string, args ...any) error {
	return &ConfigError{File: p.file, Line: n.Line, Msg: fmt.Sprintf(format, args...)}
}

// pairs returns a mapping node's key/value pairs, rejecting anything else.
func (p *budgetParser) pairs(n *yaml.Node, what string) ([][2]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, "%s must be a mapping", what)
	}
	var out [][2]*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			return nil, p.errf(k, "%s: key %q appears twice", what, k.Value)
		}
		seen[k.Value] = true
		out = append(out, [2]*yaml.Node{k, n.Content[i+1]})
	}
	return out, nil
}

func (p *budgetParser) budget(root *yaml.Node, b *Budget) error {
	kv, err := p.pairs(root, "the budget file")
	if err != nil {
		return err
	}
	sawModels := false
	for _, e := range kv {
		k, v := e[0], e[1]
		switch k.Value {
		case "version":
			if v.Value != "1" {
				return p.errf(v, "version %q is not supported (want 1)", v.Value)
			}
		case "defaults":
			if err := p.settings(v, &b.Defaults, "defaults"); err != nil {
				return err
			}
		case "models":
			sawModels = true
			if v.Kind != yaml.SequenceNode {
				return p.errf(v, "models must be a list")
			}
			for _, mn := range v.Content {
				mb, err := p.model(mn)
				if err != nil {
					return err
				}
				b.Models = append(b.Models, mb)
			}
		default:
			return p.errf(k, "unknown key %q (want version, defaults, models)", k.Value)
		}
	}
	if !sawModels || len(b.Models) == 0 {
		return p.errf(root, "no models: add a models: list")
	}
	for i := range b.Models {
		mb := &b.Models[i]
		mb.Settings = b.Defaults.merge(mb.Settings)
		if c := mb.Settings.conflict(); c != "" {
			return &ConfigError{File: p.file, Line: mb.Line, Msg: fmt.Sprintf("model %s: %s", mb.Name, c)}
		}
	}
	return nil
}

func (p *budgetParser) settings(n *yaml.Node, s *Settings, what string) error {
	kv, err := p.pairs(n, what)
	if err != nil {
		return err
	}
	for _, e := range kv {
		err := p.setting(e[0], e[1], s)
		if err == errUnknown {
			// setting cannot name the file and line; found by FuzzParseBudget
			// ("defaults: {0}" gave a bare "unknown key").
			return p.errf(e[0], "unknown key %q in %s (want %s)", e[0].Value, what, settingKeys)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// setting applies one settings key; it reports unknown keys as errors.
func (p *budgetParser) setting(k, v *yaml.Node, s *Settings) error {
	str := func() (string, error) {
		if v.Kind != yaml.ScalarNode || v.Value == "" {
			return "", p.errf(v, "%s must be a non-empty string", k.Value)
		}
		return v.Value, nil
	}
	// choice is a string that must be one of allowed.
	choice := func(allowed []string) (string, error) {
		x, err := str()
		if err == nil && !oneOf(x, allowed...) {
			err = p.errf(v, "%s %q: want one of %s", k.Value, x, strings.Join(allowed, ", "))
		}
		return x, err
	}
	var err error
	switch k.Value {
	case "gpu":
		s.GPU, err = str()
	case "gpu_file":
		s.GPUFile, err = str()
	case "runtime":
		s.Runtime, err = str()
	case "runtime_file":
		s.RuntimeFile, err = str()
	case "calibration":
		s.Calibration, err = str()
	case "dtype":
		s.DType, err = choice(cost.DTypes())
	case "plan":
		s.Plan, err = choice(passes.PlanNames())
	case "batch":
		s.Batch, err = p.positive(v, "batch")
	case "dims":
		kv, perr := p.pairs(v, "dims")
		if perr != nil {
			return perr
		}
		s.Dims = map[string]int64{}
		for _, e := range kv {
			n, perr := p.positive(e[1], "dims."+e[0].Value)
			if perr != nil {
				return perr
			}
			s.Dims[e[0].Value] = n
		}
	case "input_data":
		s.InputData, err = str()
	case "train":
		s.Train, err = p.boolean(k, v)
	case "warm":
		s.Warm, err = p.boolean(k, v)
	case "optimizer":
		s.Optimizer, err = choice(train.Optimizers())
	case "checkpoint":
		s.Checkpoint, err = choice(train.CheckpointModes())
	case "grad_accum":
		s.GradAccum, err = p.positive(v, "grad_accum")
	case "data_parallel":
		s.DataParallel, err = p.positive(v, "data_parallel")
	case "gpus":
		s.GPUs, err = p.positive(v, "gpus")
	case "power_cap":
		s.PowerCapW, err = p.positiveNumber(v, "power_cap (W)")
	case "sm_clock":
		s.SMClockMHz, err = p.positiveNumber(v, "sm_clock (MHz)")
	default:
		return errUnknown
	}
	return err
}

// boolean reads a true/false setting.
func (p *budgetParser) boolean(k, v *yaml.Node) (*bool, error) {
	b, err := strconv.ParseBool(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || (v.Value != "true" && v.Value != "false") {
		return nil, p.errf(v, "%s must be true or false, got %q", k.Value, v.Value)
	}
	return &b, nil
}

// positiveNumber reads a finite number above zero.
func (p *budgetParser) positiveNumber(v *yaml.Node, what string) (float64, error) {
	x, err := strconv.ParseFloat(v.Value, 64)
	if v.Kind != yaml.ScalarNode || err != nil || !(x > 0) || math.IsInf(x, 0) {
		return 0, p.errf(v, "%s must be a number above 0, got %q", what, v.Value)
	}
	return x, nil
}

var errUnknown = fmt.Errorf("unknown key")

func (p *budgetParser) positive(v *yaml.Node, what string) (int64, error) {
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if v.Kind != yaml.ScalarNode || err != nil || n <= 0 {
		return 0, p.errf(v, "%s must be a positive integer, got %q", what, v.Value)
	}
	return n, nil
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}

func (p *budgetParser) model(n *yaml.Node) (ModelBudget, error) {
	mb := ModelBudget{Line: n.Line}
	kv, err := p.pairs(n, "a models entry")
	if err != nil {
		return mb, err
	}
	for _, e := range kv {
		k, v := e[0], e[1]
		switch k.Value {
		case "path":
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				return mb, p.errf(v, "path must be a file name")
			}
			mb.Path = v.Value
		case "name":
			mb.Name = v.Value
		case "budgets", "assert":
			if err := p.assertions(v, &mb); err != nil {
				return mb, err
			}
		default:
			if err := p.setting(k, v, &mb.Settings); err == errUnknown {
				return mb, p.errf(k, "unknown key %q in a models entry (want path, name, budgets, gpu, gpu_file, runtime, runtime_file, calibration, dtype, plan, batch, dims)", k.Value)
			} else if err != nil {
				return mb, err
			}
		}
	}
	if mb.Path == "" {
		return mb, p.errf(n, "a models entry needs a path")
	}
	if mb.Name == "" {
		mb.Name = mb.Path
	}
	return mb, nil
}

// assertions parses `budgets:`: metric → limits. A scalar is shorthand for
// {max: VALUE, level: error}.
func (p *budgetParser) assertions(n *yaml.Node, mb *ModelBudget) error {
	kv, err := p.pairs(n, "budgets")
	if err != nil {
		return err
	}
	for _, e := range kv {
		k, v := e[0], e[1]
		m, err := LookupMetric(k.Value)
		if err != nil {
			return p.errf(k, "%v", err)
		}
		a := Assertion{Metric: m, Level: Error, Line: k.Line}
		if v.Kind == yaml.ScalarNode {
			if err := p.setMax(v, &a); err != nil {
				return err
			}
		} else {
			fields, err := p.pairs(v, "budget "+k.Value)
			if err != nil {
				return err
			}
			for _, f := range fields {
				switch f[0].Value {
				case "max":
					err = p.setMax(f[1], &a)
				case "max_increase":
					a.MaxIncrease, err = ParsePercent(f[1].Value)
					if err != nil {
						err = p.errf(f[1], "%s.max_increase: %v", k.Value, err)
					}
					a.HasMaxIncrease, a.MaxIncreaseRaw = true, f[1].Value
				case "level":
					lv := Level(f[1].Value)
					if lv != Off && lv != Warn && lv != Error {
						err = p.errf(f[1], "%s.level %q: want off, warn or error", k.Value, f[1].Value)
					}
					a.Level = lv
				default:
					err = p.errf(f[0], "unknown key %q in budget %s (want max, max_increase, level)", f[0].Value, k.Value)
				}
				if err != nil {
					return err
				}
			}
			if !a.HasMax && !a.HasMaxIncrease && a.Level != Off {
				return p.errf(k, "budget %s sets neither max nor max_increase", k.Value)
			}
		}
		mb.Assertions = append(mb.Assertions, a)
	}
	sort.SliceStable(mb.Assertions, func(i, j int) bool {
		return metricIndex(mb.Assertions[i].Metric) < metricIndex(mb.Assertions[j].Metric)
	})
	return nil
}

func (p *budgetParser) setMax(v *yaml.Node, a *Assertion) error {
	q, err := ParseQuantity(v.Value, a.Metric)
	if err != nil {
		return p.errf(v, "%s.max: %v", a.Metric.Name, err)
	}
	a.Max, a.HasMax, a.MaxRaw = q, true, v.Value
	return nil
}

func metricIndex(m *Metric) int {
	for i := range Metrics {
		if &Metrics[i] == m {
			return i
		}
	}
	return len(Metrics)
}

// yamlErrLine pulls "line N" out of a yaml error message.
func yamlErrLine(err error) int {
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		j := i + 5
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		n, _ := strconv.Atoi(s[i+5 : j])
		return n
	}
	return 0
}

func yamlErrText(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(s, ": "); i >= 0 && strings.HasPrefix(s, "line ") {
		s = s[i+2:]
	}
	return s
}
