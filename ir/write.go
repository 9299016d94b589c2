package ir

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/onnxcost/onnxcost/internal/safefile"
	"google.golang.org/protobuf/encoding/protowire"
)

// The writer turns a Model back into a valid ONNX ModelProto. Weights are
// never held in memory: the encoder streams the structure through a 64 KiB
// buffer, and copies each tensor's bytes from the source files through the
// same buffer (see encode for the two passes).

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
	e := &encoder{m: m, src: newSourceFiles(m.Path), opsets: modelOpsets(m), infos: map[*Graph]*valueInfoPlan{}}
	defer e.src.close()
	return encode(w, e.src, e.model)
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

// The encoding is two passes over the same code (encoder.model): the
// sizing pass counts bytes and records every nested message's length in
// the order the messages start; the writing pass streams the bytes to the
// output, taking each length prefix from that record. Building nested
// messages bottom-up instead and splicing each into its parent copies a
// node's bytes once per enclosing message and allocates per field: on a
// 112k-node graph that was 1.1 GB and 9.8M allocations for 29 MB of output
// (BenchmarkWriteScale); now it is 6.6 MB and 470.

// flushSize is how many pending bytes the writer collects before passing
// them on (or, sizing, counting them).
const flushSize = 1 << 16

// encode runs body twice, sizing then writing to w; src opens the files
// that ref fields copy from. An error of body comes from the sizing pass,
// before anything is written.
func encode(w io.Writer, src *sourceFiles, body func(*protoWriter) error) error {
	b := &protoWriter{sizing: true, buf: make([]byte, 0, 2*flushSize), src: src}
	if err := body(b); err != nil {
		return err
	}
	b.flush()
	*b = protoWriter{buf: b.buf[:0], lens: b.lens, big: b.big, open: b.open[:0], w: w, src: src}
	if err := body(b); err != nil {
		return err
	}
	b.flush()
	return b.err
}

// protoWriter encodes protobuf fields for one pass.
type protoWriter struct {
	sizing bool
	buf    []byte // pending bytes
	n      int64  // bytes before buf: counted (sizing) or written to w
	// lens holds each nested message's length, in the order the messages
	// begin; a length of 255 or more is in big (a 112k-node graph has 1M
	// messages, 6k of them that long).
	lens lengths
	big  map[int]int64
	next int // writing: the index in lens of the next message
	open []openMsg
	w    io.Writer
	src  *sourceFiles
	err  error // writing: the first error of w or a source file
}

// lengths is a list of message lengths kept in fixed-size blocks: grown
// by append, the 1 MB list of a 112k-node graph would allocate several
// times its size in copies.
type lengths struct {
	blocks [][]uint8
	n      int
}

const lengthBlock = 1 << 15

// add appends a zero length and returns its index.
func (l *lengths) add() int {
	if l.n%lengthBlock == 0 {
		l.blocks = append(l.blocks, make([]uint8, lengthBlock))
	}
	l.n++
	return l.n - 1
}

func (l *lengths) at(i int) *uint8 { return &l.blocks[i/lengthBlock][i%lengthBlock] }

// openMsg is a message begun and not yet ended: sizing, its index in lens
// and where its contents start; writing, where its contents must end.
type openMsg struct {
	idx int
	pos int64
}

func (b *protoWriter) pos() int64 { return b.n + int64(len(b.buf)) }

func (b *protoWriter) flush() {
	if !b.sizing && b.err == nil && len(b.buf) > 0 {
		_, b.err = b.w.Write(b.buf)
	}
	b.n += int64(len(b.buf))
	b.buf = b.buf[:0]
}

// settle flushes once enough bytes are pending.
func (b *protoWriter) settle() {
	if len(b.buf) >= flushSize {
		b.flush()
	}
}

func (b *protoWriter) tag(num protowire.Number, typ protowire.Type) {
	b.buf = protowire.AppendTag(b.buf, num, typ)
}

func (b *protoWriter) varint(num protowire.Number, v uint64) {
	b.tag(num, protowire.VarintType)
	b.buf = protowire.AppendVarint(b.buf, v)
	b.settle()
}

func (b *protoWriter) fixed32(num protowire.Number, v uint32) {
	b.tag(num, protowire.Fixed32Type)
	b.buf = protowire.AppendFixed32(b.buf, v)
	b.settle()
}

func (b *protoWriter) str(num protowire.Number, s string) { lengthDelimited(b, num, s) }

func (b *protoWriter) bytesField(num protowire.Number, p []byte) { lengthDelimited(b, num, p) }

// lengthDelimited writes a string or bytes field. A large payload is
// copied in pieces, so the buffer stays small.
func lengthDelimited[T string | []byte](b *protoWriter, num protowire.Number, p T) {
	b.tag(num, protowire.BytesType)
	b.buf = protowire.AppendVarint(b.buf, uint64(len(p)))
	for len(p) > flushSize {
		b.buf = append(b.buf, p[:flushSize]...)
		p = p[flushSize:]
		b.flush()
	}
	b.buf = append(b.buf, p...)
	b.settle()
}

// strOpt writes s only when non-empty (proto2 optional fields).
func (b *protoWriter) strOpt(num protowire.Number, s string) {
	if s != "" {
		b.str(num, s)
	}
}

func (b *protoWriter) packedInts(num protowire.Number, xs []int64) {
	if len(xs) == 0 {
		return
	}
	n := 0
	for _, x := range xs {
		n += protowire.SizeVarint(uint64(x))
	}
	b.tag(num, protowire.BytesType)
	b.buf = protowire.AppendVarint(b.buf, uint64(n))
	for _, x := range xs {
		b.buf = protowire.AppendVarint(b.buf, uint64(x))
		b.settle()
	}
	b.settle()
}

// keyValue writes a StringStringEntryProto as field num.
func (b *protoWriter) keyValue(num protowire.Number, k, v string) {
	b.begin(num)
	b.str(1, k)
	b.str(2, v)
	b.end()
}

// keyValueInt writes a StringStringEntryProto whose value is v in decimal.
func (b *protoWriter) keyValueInt(num protowire.Number, k string, v int64) {
	var digits [20]byte
	b.begin(num)
	b.str(1, k)
	b.bytesField(2, strconv.AppendInt(digits[:0], v, 10))
	b.end()
}

// begin starts a nested message as field num; end closes it.
func (b *protoWriter) begin(num protowire.Number) {
	b.tag(num, protowire.BytesType)
	if b.sizing {
		b.open = append(b.open, openMsg{idx: b.lens.add(), pos: b.pos()})
		return
	}
	n := int64(*b.lens.at(b.next))
	if n == math.MaxUint8 {
		n = b.big[b.next]
	}
	b.next++
	b.buf = protowire.AppendVarint(b.buf, uint64(n))
	b.open = append(b.open, openMsg{pos: b.pos() + n})
}

func (b *protoWriter) end() {
	o := b.open[len(b.open)-1]
	b.open = b.open[:len(b.open)-1]
	if !b.sizing {
		if b.pos() != o.pos && b.err == nil {
			b.err = fmt.Errorf("internal error: a message's length changed between sizing and writing")
		}
		return
	}
	n := b.pos() - o.pos
	if n >= math.MaxUint8 {
		if b.big == nil {
			b.big = map[int]int64{}
		}
		b.big[o.idx] = n
		*b.lens.at(o.idx) = math.MaxUint8
	} else {
		*b.lens.at(o.idx) = uint8(n)
	}
	// The length prefix goes before the contents; only the total matters
	// to the enclosing messages, so it is counted here.
	b.n += int64(protowire.SizeVarint(uint64(n)))
}

// ref writes a length-delimited field whose payload is n bytes of file at
// off, copied through the buffer.
func (b *protoWriter) ref(num protowire.Number, file string, off, n int64) {
	b.tag(num, protowire.BytesType)
	b.buf = protowire.AppendVarint(b.buf, uint64(n))
	b.flush()
	if b.sizing {
		b.n += n
		return
	}
	if b.err != nil {
		return
	}
	f, err := b.src.open(file)
	if err != nil {
		b.err = err
		return
	}
	if cap(b.buf) < flushSize {
		b.buf = make([]byte, 0, flushSize)
	}
	for done := int64(0); done < n; {
		p := b.buf[:min(int64(flushSize), n-done)]
		k, err := f.ReadAt(p, off+done)
		done += int64(k)
		if k < len(p) {
			if err == nil || err == io.EOF {
				err = fmt.Errorf("%s: %d bytes at offset %d, expected %d (the file changed since it was read)", file, done, off, n)
			}
			b.err = err
			return
		}
		if _, err := b.w.Write(p); err != nil {
			b.err = err
			return
		}
		b.n += int64(k)
	}
}

type encoder struct {
	m      *Model
	src    *sourceFiles
	opsets []OpsetImport
	// infos is each graph's value_info plan, made in the sizing pass.
	infos map[*Graph]*valueInfoPlan
}

func (e *encoder) model(b *protoWriter) error {
	m := e.m
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
	b.begin(7)
	if err := e.graph(b, m.Graph); err != nil {
		return err
	}
	b.end()
	for _, o := range e.opsets {
		opset(b, 8, o)
	}
	for _, kv := range m.Metadata {
		b.keyValue(14, kv.Key, kv.Value)
	}
	for _, f := range m.Functions {
		b.begin(25)
		if err := e.function(b, f); err != nil {
			return err
		}
		b.end()
	}
	return nil
}

// modelOpsets returns the model's imports plus version 1 of any domain a
// node uses that the model does not import (the custom domain of fused ops).
func modelOpsets(m *Model) []OpsetImport {
	out := append([]OpsetImport(nil), m.Opsets...)
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
	walk(m.Graph)
	for _, f := range m.Functions {
		have[f.Domain] = true // a function's own domain needs no import
	}
	sort.Strings(missing)
	for _, d := range missing {
		if d == "" {
			out = append(out, OpsetImport{Domain: "", Version: 21})
			continue
		}
		if !isFunctionDomain(m, d) {
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

// opset writes an OperatorSetIdProto as field num.
func opset(b *protoWriter, num protowire.Number, o OpsetImport) {
	b.begin(num)
	b.strOpt(1, o.Domain)
	b.varint(2, uint64(o.Version))
	b.end()
}

func (e *encoder) graph(b *protoWriter, g *Graph) error {
	for _, n := range g.Nodes {
		b.begin(1)
		if err := e.node(b, n); err != nil {
			return err
		}
		b.end()
	}
	b.strOpt(2, g.Name)
	for _, v := range g.Initializers {
		if v.Const == nil {
			return fmt.Errorf("initializer %q has no tensor", v.Name)
		}
		if err := e.tensorField(b, v.Const, v.Name, 5, 15); err != nil {
			return err
		}
	}
	b.strOpt(10, g.Doc)
	for _, v := range g.Inputs {
		valueInfo(b, 11, v.Name, typeOf(v))
	}
	if e.m.IRVersion > 0 && e.m.IRVersion < 4 {
		// Before IR version 4, every initializer must also be an input.
		for _, v := range g.Initializers {
			valueInfo(b, 11, v.Name, typeOf(v))
		}
	}
	for _, v := range g.Outputs {
		valueInfo(b, 12, v.Name, typeOf(v))
	}
	plan := e.infos[g]
	if plan == nil {
		plan = planValueInfos(g)
		e.infos[g] = plan
	}
	i := 0
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if plan.outputs[i/64]&(1<<(i%64)) != 0 {
				t := typeOf(o)
				if t == nil {
					t = g.DeclaredInfo(o.Name)
				}
				valueInfo(b, 13, o.Name, t)
			}
			i++
		}
	}
	for _, name := range plan.rest {
		ti := g.ValueInfo[name]
		valueInfo(b, 13, name, &ti)
	}
	return nil
}

// typeOf is the type to write for v: inferred when known, else declared.
// The inferred one is copied to the stack, not allocated.
func typeOf(v *Value) *TypeInfo {
	if v.DType != Undefined || v.Shape.Ranked || v.Kind != TensorValue {
		return &TypeInfo{Kind: v.Kind, DType: v.DType, Shape: v.Shape}
	}
	return v.Declared
}

// valueInfoPlan says which value_info entries a graph gets: node outputs
// with a known type, in node order, then declared entries of other names,
// sorted by name. It is made once, for both passes.
type valueInfoPlan struct {
	outputs []uint64 // bit i: the graph's i-th node output has an entry
	rest    []string
}

func planValueInfos(g *Graph) *valueInfoPlan {
	n := 0
	for _, nd := range g.Nodes {
		n += len(nd.Outputs)
	}
	plan := &valueInfoPlan{outputs: make([]uint64, (n+63)/64)}
	written := make(map[string]bool, len(g.Outputs)+n)
	for _, v := range g.Outputs {
		written[v.Name] = true
	}
	i := 0
	for _, nd := range g.Nodes {
		for _, o := range nd.Outputs {
			if o != nil && !written[o.Name] {
				written[o.Name] = true
				if typeOf(o) != nil || g.DeclaredInfo(o.Name) != nil {
					plan.outputs[i/64] |= 1 << (i % 64)
				}
			}
			i++
		}
	}
	for name := range g.ValueInfo {
		if !written[name] && g.Local(name) == nil {
			plan.rest = append(plan.rest, name)
		}
	}
	sort.Strings(plan.rest)
	return plan
}

// valueInfo writes a ValueInfoProto as field num.
func valueInfo(b *protoWriter, num protowire.Number, name string, t *TypeInfo) {
	b.begin(num)
	b.str(1, name)
	if t != nil {
		b.begin(2)
		typeProto(b, t)
		b.end()
	}
	b.end()
}

// typeProto writes a TypeInfo's TypeProto fields. Symbols are written as
// dim_param verbatim (including "?unk_N" and inference's "?x_N"), so that
// reading the file back gives the same shapes.
func typeProto(b *protoWriter, t *TypeInfo) {
	switch t.Kind {
	case SequenceValue, OptionalValue:
		num := protowire.Number(4)
		if t.Kind == OptionalValue {
			num = 9
		}
		b.begin(num)
		b.begin(1) // elem_type: a TypeProto holding the tensor
		b.begin(1)
		tensorType(b, t)
		b.end()
		b.end()
		b.end()
	case MapValue:
		// The reader keeps only the value type; keys are written as int64.
		b.begin(5)
		b.varint(1, uint64(Int64))
		b.begin(2)
		b.begin(1)
		tensorType(b, t)
		b.end()
		b.end()
		b.end()
	case SparseTensorValue:
		b.begin(8)
		tensorType(b, t)
		b.end()
	default:
		b.begin(1)
		tensorType(b, t)
		b.end()
	}
}

// tensorType writes the fields of a TypeProto.Tensor: dtype and shape.
func tensorType(b *protoWriter, t *TypeInfo) {
	if t.DType != Undefined {
		b.varint(1, uint64(t.DType))
	}
	if !t.Shape.Ranked {
		return
	}
	b.begin(2)
	for _, d := range t.Shape.Dims {
		b.begin(1)
		if d.IsKnown() {
			b.varint(1, uint64(d.Value))
		} else {
			b.str(2, d.Sym)
		}
		b.end()
	}
	b.end()
}

func (e *encoder) node(b *protoWriter, n *Node) error {
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
		return err
	}
	if len(n.FusedFrom) > 0 {
		a := Attribute{Name: fusedFromAttr, Type: AttrStrings, Strings: n.FusedFrom}
		b.begin(5)
		if err := e.attribute(b, &a); err != nil {
			return err
		}
		b.end()
	}
	b.strOpt(6, n.Doc())
	b.strOpt(7, n.Domain)
	for _, kv := range n.metadataToWrite() {
		b.keyValue(9, kv.Key, kv.Value)
	}
	return nil
}

// attributes writes attrs as field num; an error names the owner, kind
// "node" or "function" named name, and the attribute.
func (e *encoder) attributes(b *protoWriter, num protowire.Number, attrs []*Attribute, kind, name string) error {
	for _, a := range attrs {
		b.begin(num)
		if err := e.attribute(b, a); err != nil {
			return fmt.Errorf("%s %q attribute %q: %w", kind, name, a.Name, err)
		}
		b.end()
	}
	return nil
}

func (e *encoder) attribute(b *protoWriter, a *Attribute) error {
	b.str(1, a.Name)
	if a.RefAttrName() != "" {
		b.str(21, a.RefAttrName())
		b.varint(20, uint64(a.Type))
		return nil
	}
	switch a.Type {
	case AttrFloat:
		b.fixed32(2, math.Float32bits(float32(a.F)))
	case AttrInt:
		b.varint(3, uint64(a.I))
	case AttrString:
		b.str(4, a.S)
	case AttrTensor, AttrSparseTensor:
		if a.T != nil {
			if err := e.tensorField(b, a.T, a.T.Name, 5, 22); err != nil {
				return err
			}
		}
	case AttrGraph:
		if a.G() != nil {
			b.begin(6)
			if err := e.graph(b, a.G()); err != nil {
				return err
			}
			b.end()
		}
	case AttrFloats:
		if len(a.Floats) > 0 {
			b.tag(7, protowire.BytesType)
			b.buf = protowire.AppendVarint(b.buf, uint64(4*len(a.Floats)))
			for _, f := range a.Floats {
				b.buf = protowire.AppendFixed32(b.buf, math.Float32bits(float32(f)))
				b.settle()
			}
		}
	case AttrInts:
		b.packedInts(8, a.Ints)
	case AttrStrings:
		for _, s := range a.Strings {
			b.str(9, s)
		}
	case AttrTensors, AttrSparseTensors:
		for _, t := range a.Tensors() {
			if err := e.tensorField(b, t, t.Name, 10, 23); err != nil {
				return err
			}
		}
	case AttrGraphs:
		for _, g := range a.Graphs() {
			b.begin(11)
			if err := e.graph(b, g); err != nil {
				return err
			}
			b.end()
		}
	case AttrTypeProto:
		b.str(14, a.S)
	case AttrTypeProtos:
		for _, s := range a.Strings {
			b.str(15, s)
		}
	}
	b.strOpt(13, a.Doc())
	b.varint(20, uint64(a.Type))
	return nil
}

func (e *encoder) function(b *protoWriter, f *Function) error {
	b.str(1, f.Name)
	if f.Body == nil {
		return fmt.Errorf("function %q has no body", f.Name)
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
		b.begin(7)
		if err := e.node(b, n); err != nil {
			return fmt.Errorf("function %q: %w", f.Name, err)
		}
		b.end()
	}
	b.strOpt(8, f.Doc)
	for _, o := range f.Opsets {
		opset(b, 9, o)
	}
	b.strOpt(10, f.Domain)
	if err := e.attributes(b, 11, f.AttrDefaults, "function", f.Name); err != nil {
		return err
	}
	names := make([]string, 0, len(f.Body.ValueInfo))
	for name := range f.Body.ValueInfo {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ti := f.Body.ValueInfo[name]
		valueInfo(b, 12, name, &ti)
	}
	b.strOpt(13, f.Overload)
	return nil
}

// tensorField writes t as a TensorProto in field denseNum or, when the
// source holds a SparseTensorProto, copies that as field sparseNum.
func (e *encoder) tensorField(b *protoWriter, t *Tensor, name string, denseNum, sparseNum protowire.Number) error {
	enc, err := e.src.encoding(t)
	if err != nil {
		return fmt.Errorf("tensor %q: %w", name, err)
	}
	if enc.sparse {
		// The bytes are a whole SparseTensorProto: splice them in as the
		// field payload.
		b.ref(sparseNum, enc.file, t.Loc.Offset, t.Loc.Length)
		return nil
	}
	b.begin(denseNum)
	b.packedInts(1, t.Dims)
	b.varint(2, uint64(t.DType))
	b.strOpt(8, name)
	switch {
	case enc.external:
		b.keyValue(13, "location", t.Loc.File)
		b.keyValueInt(13, "offset", t.Loc.Offset)
		b.keyValueInt(13, "length", t.Loc.Length)
		b.varint(14, 1)
	case enc.file != "":
		b.ref(enc.field, enc.file, enc.off, t.Loc.Length)
	case t.HasData:
		if err := encodeValues(b, t); err != nil {
			return fmt.Errorf("tensor %q: %w", name, err)
		}
	case t.NumElements() > 0 && (t.Loc.Length > 0 || t.Loc.Offset != 0):
		return fmt.Errorf("tensor %q: its bytes cannot be copied (the source model is not a file, or stores them unpacked) and its values were not read", name)
	}
	// Otherwise: dims and dtype only (a tensor created without contents).
	b.end()
	return nil
}

// encodeValues writes a tensor's decoded values: raw_data for numbers,
// string_data for strings. The bytes go straight to the buffer.
func encodeValues(b *protoWriter, t *Tensor) error {
	if t.DType == String {
		for _, s := range t.Strings {
			b.str(tpStringData, s)
		}
		return nil
	}
	n := t.NumElements()
	d := t.DType
	held := int64(len(t.Ints))
	switch {
	case d == Float32 || d == Float64 || d == Float16 || d == BFloat16:
		held = int64(len(t.Floats))
	case d == Int4 || d == Uint4 || d.IsInt() || d == Bool:
	default:
		return fmt.Errorf("cannot encode %s values", d)
	}
	if held != n {
		return fmt.Errorf("holds %d values for %d elements", held, n)
	}
	b.tag(tpRawData, protowire.BytesType)
	b.buf = protowire.AppendVarint(b.buf, uint64(d.ByteSize(n)))
	switch {
	case d == Int4 || d == Uint4:
		for i := 0; i < len(t.Ints); i += 2 {
			v := byte(t.Ints[i] & 0x0f)
			if i+1 < len(t.Ints) {
				v |= byte(t.Ints[i+1]&0x0f) << 4
			}
			b.buf = append(b.buf, v)
			b.settle()
		}
	case d == Float32 || d == Float64 || d == Float16 || d == BFloat16:
		for _, f := range t.Floats {
			switch d {
			case Float32:
				b.buf = putLE(b.buf, uint64(math.Float32bits(float32(f))), 4)
			case Float64:
				b.buf = putLE(b.buf, math.Float64bits(f), 8)
			case Float16:
				b.buf = putLE(b.buf, uint64(toFloat16(f)), 2)
			case BFloat16:
				b.buf = putLE(b.buf, uint64(toBFloat16(f)), 2)
			}
			b.settle()
		}
	default:
		size := d.Bits() / 8
		for _, v := range t.Ints {
			b.buf = putLE(b.buf, uint64(v), size)
			b.settle()
		}
	}
	b.settle()
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
	// embedded caches encoding's answer for tensors inside the model file,
	// by offset: finding it reads the file, and both passes ask.
	embedded map[int64]tensorSource
}

func newSourceFiles(model string) *sourceFiles {
	s := &sourceFiles{model: model, files: map[string]*os.File{}, embedded: map[int64]tensorSource{}}
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
	// The path was a regular file when the model was read; it may not be
	// one now, and a named pipe would block the write forever.
	f, _, err := safefile.Open(path)
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
	if src, ok := s.embedded[loc.Offset]; ok {
		return src, nil
	}
	src, err := s.embeddedField(loc)
	if err == nil {
		s.embedded[loc.Offset] = src
	}
	return src, err
}

// embeddedField reads the tag before the bytes at loc in the model file.
func (s *sourceFiles) embeddedField(loc DataLocation) (tensorSource, error) {
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
