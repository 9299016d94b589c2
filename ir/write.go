package ir

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"

	"google.golang.org/protobuf/encoding/protowire"
)

// The writer turns a Model back into a valid ONNX ModelProto. Weights are
// never held in memory: the encoder builds the structure as a list of
// chunks, literal bytes or references to byte ranges of the source files,
// and Write copies the referenced ranges in 32 KiB pieces.

// Write encodes m as an ONNX ModelProto to w. Initializer bytes are copied
// from the file m was read from (m.Path) or its external data; tensors
// whose external file is missing stay external references to the same
// location; tensors made in memory are encoded from their values. Graph
// inputs, outputs and intermediate values carry their inferred types (or
// the declared ones where inference did not run). Nodes with FusedFrom get
// a STRINGS attribute "fused_from", which the reader maps back.
func Write(w io.Writer, m *Model) error {
	if m == nil || m.Graph == nil {
		return fmt.Errorf("model has no graph")
	}
	e := &encoder{m: m, src: newSourceFiles(m.Path)}
	defer e.src.close()
	root, err := e.model()
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := e.src.emit(bw, root); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteFile writes m to path atomically: to a temporary file in the same
// folder, renamed over path once complete, with mode 0644.
func WriteFile(path string, m *Model) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = Write(tmp, m); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file 0600; a written model is an ordinary
	// output file, readable by others like the files `>` creates.
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// chunk is a piece of output: literal bytes, or n bytes of file at off.
type chunk struct {
	lit  []byte
	file string // source file path for a reference chunk
	off  int64
	n    int64
}

// msgBuf accumulates one message's encoding.
type msgBuf struct {
	chunks []chunk
	cur    []byte
	size   int64
}

func (b *msgBuf) flush() {
	if len(b.cur) > 0 {
		b.chunks = append(b.chunks, chunk{lit: b.cur})
		b.cur = nil
	}
}

func (b *msgBuf) raw(p []byte) {
	b.cur = append(b.cur, p...)
	b.size += int64(len(p))
}

func (b *msgBuf) tag(num protowire.Number, typ protowire.Type) {
	b.raw(protowire.AppendTag(nil, num, typ))
}

func (b *msgBuf) varint(num protowire.Number, v uint64) {
	b.tag(num, protowire.VarintType)
	b.raw(protowire.AppendVarint(nil, v))
}

func (b *msgBuf) str(num protowire.Number, s string) {
	b.tag(num, protowire.BytesType)
	b.raw(protowire.AppendVarint(nil, uint64(len(s))))
	b.raw([]byte(s))
}

// strOpt writes s only when non-empty (proto2 optional fields).
func (b *msgBuf) strOpt(num protowire.Number, s string) {
	if s != "" {
		b.str(num, s)
	}
}

func (b *msgBuf) bytesField(num protowire.Number, p []byte) {
	b.tag(num, protowire.BytesType)
	b.raw(protowire.AppendVarint(nil, uint64(len(p))))
	b.raw(p)
}

// msg appends a nested message.
func (b *msgBuf) msg(num protowire.Number, c *msgBuf) {
	c.flush()
	b.tag(num, protowire.BytesType)
	b.raw(protowire.AppendVarint(nil, uint64(c.size)))
	b.flush()
	b.chunks = append(b.chunks, c.chunks...)
	b.size += c.size
}

// ref appends a length-delimited field whose payload is n bytes of file.
func (b *msgBuf) ref(num protowire.Number, file string, off, n int64) {
	b.tag(num, protowire.BytesType)
	b.raw(protowire.AppendVarint(nil, uint64(n)))
	b.flush()
	b.chunks = append(b.chunks, chunk{file: file, off: off, n: n})
	b.size += n
}

func (b *msgBuf) packedInts(num protowire.Number, xs []int64) {
	if len(xs) == 0 {
		return
	}
	var p []byte
	for _, x := range xs {
		p = protowire.AppendVarint(p, uint64(x))
	}
	b.bytesField(num, p)
}

type encoder struct {
	m   *Model
	src *sourceFiles
}

func (e *encoder) model() (*msgBuf, error) {
	m := e.m
	b := &msgBuf{}
	ir := m.IRVersion
	if ir == 0 {
		ir = 8
	}
	b.varint(1, uint64(ir))
	b.strOpt(2, m.ProducerName)
	b.strOpt(3, m.ProducerVersion)
	b.strOpt(4, m.Domain)
	if m.ModelVersion != 0 {
		b.varint(5, uint64(m.ModelVersion))
	}
	b.strOpt(6, m.Doc)
	g, err := e.graph(m.Graph)
	if err != nil {
		return nil, err
	}
	b.msg(7, g)
	for _, o := range e.opsets() {
		b.msg(8, opsetMsg(o))
	}
	for _, kv := range m.Metadata {
		c := &msgBuf{}
		c.str(1, kv.Key)
		c.str(2, kv.Value)
		b.msg(14, c)
	}
	for _, f := range m.Functions {
		c, err := e.function(f)
		if err != nil {
			return nil, err
		}
		b.msg(25, c)
	}
	return b, nil
}

// opsets returns the model's imports plus version 1 of any domain a node
// uses that the model does not import (the custom domain of fused ops).
func (e *encoder) opsets() []OpsetImport {
	out := append([]OpsetImport(nil), e.m.Opsets...)
	have := map[string]bool{}
	for _, o := range out {
		have[normDomain(o.Domain)] = true
	}
	var missing []string
	var walk func(g *Graph)
	walk = func(g *Graph) {
		for _, n := range g.Nodes {
			if !have[n.Domain] {
				have[n.Domain] = true
				missing = append(missing, n.Domain)
			}
			for _, sg := range n.Subgraphs() {
				walk(sg)
			}
		}
	}
	walk(e.m.Graph)
	for _, f := range e.m.Functions {
		have[f.Domain] = true // a function's own domain needs no import
	}
	sort.Strings(missing)
	for _, d := range missing {
		if d == "" {
			out = append(out, OpsetImport{Domain: "", Version: 21})
			continue
		}
		if !isFunctionDomain(e.m, d) {
			out = append(out, OpsetImport{Domain: d, Version: 1})
		}
	}
	return out
}

func isFunctionDomain(m *Model, d string) bool {
	for _, f := range m.Functions {
		if f.Domain == d {
			return true
		}
	}
	return false
}

func opsetMsg(o OpsetImport) *msgBuf {
	c := &msgBuf{}
	c.strOpt(1, o.Domain)
	c.varint(2, uint64(o.Version))
	return c
}

func (e *encoder) graph(g *Graph) (*msgBuf, error) {
	b := &msgBuf{}
	for _, n := range g.Nodes {
		c, err := e.node(n)
		if err != nil {
			return nil, err
		}
		b.msg(1, c)
	}
	b.strOpt(2, g.Name)
	for _, v := range g.Initializers {
		if v.Const == nil {
			return nil, fmt.Errorf("initializer %q has no tensor", v.Name)
		}
		num, c, err := e.tensorField(v.Const, v.Name, 5, 15)
		if err != nil {
			return nil, err
		}
		b.msg(num, c)
	}
	b.strOpt(10, g.Doc)
	for _, v := range g.Inputs {
		b.msg(11, valueInfoMsg(v.Name, typeOf(v)))
	}
	if e.m.IRVersion > 0 && e.m.IRVersion < 4 {
		// Before IR version 4, every initializer must also be an input.
		for _, v := range g.Initializers {
			b.msg(11, valueInfoMsg(v.Name, typeOf(v)))
		}
	}
	for _, v := range g.Outputs {
		b.msg(12, valueInfoMsg(v.Name, typeOf(v)))
	}
	for _, vi := range valueInfos(g) {
		b.msg(13, vi)
	}
	return b, nil
}

// typeOf is the type to write for v: inferred when known, else declared.
func typeOf(v *Value) *TypeInfo {
	if v.DType != Undefined || v.Shape.Ranked || v.Kind != TensorValue {
		return &TypeInfo{Kind: v.Kind, DType: v.DType, Shape: v.Shape}
	}
	return v.Declared
}

// valueInfos lists value_info entries: node outputs with a known type, in
// node order, then declared entries of other names, sorted by name.
func valueInfos(g *Graph) []*msgBuf {
	var out []*msgBuf
	written := map[string]bool{}
	for _, v := range g.Outputs {
		written[v.Name] = true
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o == nil || written[o.Name] {
				continue
			}
			written[o.Name] = true
			if t := typeOf(o); t != nil {
				out = append(out, valueInfoMsg(o.Name, t))
			} else if ti := g.DeclaredInfo(o.Name); ti != nil {
				out = append(out, valueInfoMsg(o.Name, ti))
			}
		}
	}
	var rest []string
	for name := range g.ValueInfo {
		if !written[name] && g.Local(name) == nil {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	for _, name := range rest {
		ti := g.ValueInfo[name]
		out = append(out, valueInfoMsg(name, &ti))
	}
	return out
}

func valueInfoMsg(name string, t *TypeInfo) *msgBuf {
	b := &msgBuf{}
	b.str(1, name)
	if t != nil {
		b.msg(2, typeMsg(t))
	}
	return b
}

// typeMsg encodes a TypeInfo as a TypeProto. Symbols are written as
// dim_param verbatim (including "?unk_N" and inference's "?x_N"), so that
// reading the file back gives the same shapes.
func typeMsg(t *TypeInfo) *msgBuf {
	tensor := &msgBuf{}
	if t.DType != Undefined {
		tensor.varint(1, uint64(t.DType))
	}
	if t.Shape.Ranked {
		shape := &msgBuf{}
		for _, d := range t.Shape.Dims {
			dim := &msgBuf{}
			if d.IsKnown() {
				dim.varint(1, uint64(d.Value))
			} else {
				dim.str(2, d.Sym)
			}
			shape.msg(1, dim)
		}
		tensor.msg(2, shape)
	}
	b := &msgBuf{}
	wrapped := &msgBuf{} // the TypeProto holding the tensor, for containers
	wrapped.msg(1, tensor)
	switch t.Kind {
	case SequenceValue, OptionalValue:
		c := &msgBuf{}
		c.msg(1, wrapped)
		num := protowire.Number(4)
		if t.Kind == OptionalValue {
			num = 9
		}
		b.msg(num, c)
	case MapValue:
		// The reader keeps only the value type; keys are written as int64.
		c := &msgBuf{}
		c.varint(1, uint64(Int64))
		c.msg(2, wrapped)
		b.msg(5, c)
	case SparseTensorValue:
		b.msg(8, tensor)
	default:
		b.msg(1, tensor)
	}
	return b
}

func (e *encoder) node(n *Node) (*msgBuf, error) {
	b := &msgBuf{}
	for _, in := range n.Inputs {
		name := ""
		if in != nil {
			name = in.Name
		}
		b.str(1, name)
	}
	for _, o := range n.Outputs {
		name := ""
		if o != nil {
			name = o.Name
		}
		b.str(2, name)
	}
	b.strOpt(3, n.Name)
	b.str(4, n.OpType)
	if err := e.attributes(b, 5, n.Attrs, "node", n.Name); err != nil {
		return nil, err
	}
	if len(n.FusedFrom) > 0 {
		c, _ := e.attribute(&Attribute{Name: fusedFromAttr, Type: AttrStrings, Strings: n.FusedFrom})
		b.msg(5, c)
	}
	b.strOpt(6, n.Doc())
	b.strOpt(7, n.Domain)
	for _, kv := range n.Metadata() {
		c := &msgBuf{}
		c.str(1, kv.Key)
		c.str(2, kv.Value)
		b.msg(9, c)
	}
	return b, nil
}

// attributes appends attrs to b as field num; an error names the owner,
// kind "node" or "function" named name, and the attribute.
func (e *encoder) attributes(b *msgBuf, num protowire.Number, attrs []*Attribute, kind, name string) error {
	for _, a := range attrs {
		c, err := e.attribute(a)
		if err != nil {
			return fmt.Errorf("%s %q attribute %q: %w", kind, name, a.Name, err)
		}
		b.msg(num, c)
	}
	return nil
}

func (e *encoder) attribute(a *Attribute) (*msgBuf, error) {
	b := &msgBuf{}
	b.str(1, a.Name)
	if a.RefAttrName != "" {
		b.str(21, a.RefAttrName)
		b.varint(20, uint64(a.Type))
		return b, nil
	}
	switch a.Type {
	case AttrFloat:
		b.tag(2, protowire.Fixed32Type)
		b.raw(protowire.AppendFixed32(nil, math.Float32bits(float32(a.F))))
	case AttrInt:
		b.varint(3, uint64(a.I))
	case AttrString:
		b.str(4, a.S)
	case AttrTensor, AttrSparseTensor:
		if a.T != nil {
			num, c, err := e.tensorField(a.T, a.T.Name, 5, 22)
			if err != nil {
				return nil, err
			}
			b.msg(num, c)
		}
	case AttrGraph:
		if a.G != nil {
			c, err := e.graph(a.G)
			if err != nil {
				return nil, err
			}
			b.msg(6, c)
		}
	case AttrFloats:
		var p []byte
		for _, f := range a.Floats {
			p = protowire.AppendFixed32(p, math.Float32bits(float32(f)))
		}
		if len(p) > 0 {
			b.bytesField(7, p)
		}
	case AttrInts:
		b.packedInts(8, a.Ints)
	case AttrStrings:
		for _, s := range a.Strings {
			b.str(9, s)
		}
	case AttrTensors, AttrSparseTensors:
		for _, t := range a.Tensors {
			num, c, err := e.tensorField(t, t.Name, 10, 23)
			if err != nil {
				return nil, err
			}
			b.msg(num, c)
		}
	case AttrGraphs:
		for _, g := range a.Graphs {
			c, err := e.graph(g)
			if err != nil {
				return nil, err
			}
			b.msg(11, c)
		}
	case AttrTypeProto:
		b.bytesField(14, []byte(a.S))
	case AttrTypeProtos:
		for _, s := range a.Strings {
			b.bytesField(15, []byte(s))
		}
	}
	b.strOpt(13, a.Doc)
	b.varint(20, uint64(a.Type))
	return b, nil
}

func (e *encoder) function(f *Function) (*msgBuf, error) {
	b := &msgBuf{}
	b.str(1, f.Name)
	if f.Body == nil {
		return nil, fmt.Errorf("function %q has no body", f.Name)
	}
	for _, v := range f.Body.Inputs {
		b.str(4, v.Name)
	}
	for _, v := range f.Body.Outputs {
		b.str(5, v.Name)
	}
	for _, s := range f.AttrNames {
		b.str(6, s)
	}
	for _, n := range f.Body.Nodes {
		c, err := e.node(n)
		if err != nil {
			return nil, fmt.Errorf("function %q: %w", f.Name, err)
		}
		b.msg(7, c)
	}
	b.strOpt(8, f.Doc)
	for _, o := range f.Opsets {
		b.msg(9, opsetMsg(o))
	}
	b.strOpt(10, f.Domain)
	if err := e.attributes(b, 11, f.AttrDefaults, "function", f.Name); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(f.Body.ValueInfo))
	for name := range f.Body.ValueInfo {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ti := f.Body.ValueInfo[name]
		b.msg(12, valueInfoMsg(name, &ti))
	}
	b.strOpt(13, f.Overload)
	return b, nil
}

// tensorField encodes t as a TensorProto (returning denseNum) or, when the
// source holds a SparseTensorProto, copies that (returning sparseNum).
func (e *encoder) tensorField(t *Tensor, name string, denseNum, sparseNum protowire.Number) (protowire.Number, *msgBuf, error) {
	enc, err := e.src.encoding(t)
	if err != nil {
		return 0, nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	if enc.sparse {
		b := &msgBuf{}
		// The bytes are a whole SparseTensorProto: splice them in as the
		// field payload.
		b.flush()
		b.chunks = append(b.chunks, chunk{file: enc.file, off: t.Loc.Offset, n: t.Loc.Length})
		b.size = t.Loc.Length
		return sparseNum, b, nil
	}
	b := &msgBuf{}
	b.packedInts(1, t.Dims)
	b.varint(2, uint64(t.DType))
	b.strOpt(8, name)
	switch {
	case enc.external:
		kv := func(k, v string) {
			c := &msgBuf{}
			c.str(1, k)
			c.str(2, v)
			b.msg(13, c)
		}
		kv("location", t.Loc.File)
		kv("offset", fmt.Sprint(t.Loc.Offset))
		kv("length", fmt.Sprint(t.Loc.Length))
		b.varint(14, 1)
	case enc.file != "":
		b.ref(enc.field, enc.file, enc.off, t.Loc.Length)
	case t.HasData:
		if err := encodeValues(b, t); err != nil {
			return 0, nil, fmt.Errorf("tensor %q: %w", name, err)
		}
	case t.NumElements() > 0 && (t.Loc.Length > 0 || t.Loc.Offset != 0):
		return 0, nil, fmt.Errorf("tensor %q: its bytes cannot be copied (the source model is not a file, or stores them unpacked) and its values were not read", name)
	}
	// Otherwise: dims and dtype only (a tensor created without contents).
	return denseNum, b, nil
}

// encodeValues writes a tensor's decoded values: raw_data for numbers,
// string_data for strings.
func encodeValues(b *msgBuf, t *Tensor) error {
	if t.DType == String {
		for _, s := range t.Strings {
			b.str(tpStringData, s)
		}
		return nil
	}
	n := t.NumElements()
	var p []byte
	d := t.DType
	switch {
	case d == Int4 || d == Uint4:
		if int64(len(t.Ints)) != n {
			return fmt.Errorf("holds %d values for %d elements", len(t.Ints), n)
		}
		p = make([]byte, (n+1)/2)
		for i, v := range t.Ints {
			p[i/2] |= byte(v&0x0f) << (4 * (i % 2))
		}
	case d == Float32 || d == Float64 || d == Float16 || d == BFloat16:
		if int64(len(t.Floats)) != n {
			return fmt.Errorf("holds %d values for %d elements", len(t.Floats), n)
		}
		for _, f := range t.Floats {
			switch d {
			case Float32:
				p = putLE(p, uint64(math.Float32bits(float32(f))), 4)
			case Float64:
				p = putLE(p, math.Float64bits(f), 8)
			case Float16:
				p = putLE(p, uint64(toFloat16(f)), 2)
			case BFloat16:
				p = putLE(p, uint64(toBFloat16(f)), 2)
			}
		}
	case d.IsInt() || d == Bool:
		if int64(len(t.Ints)) != n {
			return fmt.Errorf("holds %d values for %d elements", len(t.Ints), n)
		}
		size := d.Bits() / 8
		for _, v := range t.Ints {
			p = putLE(p, uint64(v), size)
		}
	default:
		return fmt.Errorf("cannot encode %s values", d)
	}
	b.bytesField(tpRawData, p)
	return nil
}

// toBFloat16 rounds to nearest even.
func toBFloat16(f float64) uint16 {
	u := math.Float32bits(float32(f))
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40 // keep NaN a NaN
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// toFloat16 converts to IEEE half precision, rounding to nearest even.
func toFloat16(f float64) uint16 {
	u := math.Float32bits(float32(f))
	sign := uint16(u>>16) & 0x8000
	exp := int(u>>23) & 0xff
	mant := u & 0x7fffff
	switch {
	case exp == 0xff:
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127 > 15:
		return sign | 0x7c00
	case exp-127 >= -14:
		h := uint32(exp-127+15)<<10 | mant>>13
		rest := mant & 0x1fff
		if rest > 0x1000 || (rest == 0x1000 && h&1 == 1) {
			h++ // may carry into the exponent, which is the right rounding
		}
		return sign | uint16(h)
	case exp-127 >= -25:
		m := mant | 0x800000
		shift := uint32(-14-(exp-127)) + 13
		h := m >> shift
		rest := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	return sign
}

// sourceFiles opens the model's source file and external data for copying.
type sourceFiles struct {
	model string // path of the model the tensors came from ("" if none)
	dir   string
	files map[string]*os.File
}

func newSourceFiles(model string) *sourceFiles {
	s := &sourceFiles{model: model, files: map[string]*os.File{}}
	if model != "" {
		s.dir = filepath.Dir(model)
	}
	return s
}

func (s *sourceFiles) close() {
	for _, f := range s.files {
		f.Close()
	}
}

func (s *sourceFiles) open(path string) (*os.File, error) {
	if f, ok := s.files[path]; ok {
		return f, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	s.files[path] = f
	return f, nil
}

// tensorSource says how to write a tensor's bytes.
type tensorSource struct {
	file     string           // source file to copy from ("" = none)
	off      int64            // where the bytes start
	field    protowire.Number // TensorProto field the bytes belong in
	sparse   bool             // the bytes are a whole SparseTensorProto
	external bool             // keep as an external reference
}

// encoding finds where t's bytes can be copied from. For bytes inside the
// model file, the tag just before them tells which field held them
// (raw_data, a typed data field, or a sparse tensor), so the copy keeps
// their encoding.
func (s *sourceFiles) encoding(t *Tensor) (tensorSource, error) {
	loc := t.Loc
	if loc.File != "" {
		if loc.Missing || s.model == "" {
			return tensorSource{external: true}, nil
		}
		if err := checkLocation(loc.File); err != nil {
			return tensorSource{}, err
		}
		return tensorSource{file: filepath.Join(s.dir, loc.File), off: loc.Offset, field: tpRawData}, nil
	}
	if s.model == "" || loc.Offset <= 0 || (loc.Length == 0 && t.HasData) {
		return tensorSource{}, nil
	}
	f, err := s.open(s.model)
	if err != nil {
		return tensorSource{}, err
	}
	lenBytes := protowire.AppendVarint(nil, uint64(loc.Length))
	k := int64(len(lenBytes) + 2)
	if k > loc.Offset {
		k = loc.Offset
	}
	buf := make([]byte, k)
	if _, err := f.ReadAt(buf, loc.Offset-k); err != nil {
		return tensorSource{}, fmt.Errorf("reading source model: %w", err)
	}
	pre := buf[:len(buf)-len(lenBytes)]
	if string(buf[len(pre):]) != string(lenBytes) || len(pre) == 0 {
		return tensorSource{}, fmt.Errorf("source model changed since it was read")
	}
	last := pre[len(pre)-1]
	if last == 0x01 && len(pre) >= 2 && (pre[len(pre)-2] == 0xb2 || pre[len(pre)-2] == 0xba) {
		return tensorSource{file: s.model, off: loc.Offset, sparse: true}, nil // AttributeProto.sparse_tensor(s)
	}
	num, typ := protowire.DecodeTag(uint64(last))
	if typ != protowire.BytesType {
		return tensorSource{}, fmt.Errorf("source model changed since it was read")
	}
	switch num {
	case 15:
		return tensorSource{file: s.model, off: loc.Offset, sparse: true}, nil // GraphProto.sparse_initializer
	case tpRawData, tpFloatData, tpInt32Data, tpInt64Data, tpDoubleData, tpUint64Data:
		return tensorSource{file: s.model, off: loc.Offset, field: num}, nil
	}
	return tensorSource{}, fmt.Errorf("source model changed since it was read")
}

// emit writes the chunks of root, copying referenced ranges piecewise.
func (s *sourceFiles) emit(w io.Writer, root *msgBuf) error {
	root.flush()
	for _, c := range root.chunks {
		if c.file == "" {
			if _, err := w.Write(c.lit); err != nil {
				return err
			}
			continue
		}
		f, err := s.open(c.file)
		if err != nil {
			return err
		}
		n, err := io.Copy(w, io.NewSectionReader(f, c.off, c.n))
		if err != nil {
			return err
		}
		if n != c.n {
			return fmt.Errorf("%s: %d bytes at offset %d, expected %d (the file changed since it was read)", c.file, n, c.off, c.n)
		}
	}
	return nil
}
