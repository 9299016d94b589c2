package ir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/onnxcost/onnxcost/internal/safefile"
	"google.golang.org/protobuf/encoding/protowire"
)

// ReadOptions controls the ONNX reader.
type ReadOptions struct {
	// Limits bounds what the reader accepts; nil means DefaultLimits.
	Limits *Limits
	// Dir is the folder external data paths resolve against. ReadFile
	// sets it to the model's folder. When it is empty (a model given as
	// bytes), external tensors are marked Missing and no file is opened:
	// the reader never resolves data paths against the working directory.
	Dir string
	// ShareInput lets the model's strings (names, mostly) point into the
	// input instead of copies: the input must then stay unchanged for as
	// long as the model or any string taken from it lives. ReadFile sets
	// it for its read-only mapping of the file, which it then never
	// unmaps: on a 112k-node graph the copies were 10 MB of fresh memory,
	// and on this project's reference VM every fresh megabyte costs about
	// 3 ms of page faults. Leave it unset when the input is a buffer the
	// caller reuses, or one that holds weights the model does not need
	// (a browser upload): sharing would keep it alive.
	ShareInput bool
	// Counted, when set, is called with the number of nodes of the main
	// graph once the reader has counted them and before it allocates for
	// them: a caller that readies memory by the model's size (the
	// command's internal/hugeheap) learns it here, where the file's size
	// would mislead (most of a file can be weights the reader never
	// copies).
	Counted func(nodes int)
}

// lfsPointerPrefix opens every Git LFS pointer file.
const lfsPointerPrefix = "version https://git-lfs.github.com/spec/v1"

// maxObjectsPerNode bounds values, attributes and tensors relative to
// Limits.MaxNodes: every such record costs the reader an allocation of a
// few hundred bytes while it may take only two bytes of input, so without
// a cap a small file could demand gigabytes.
const maxObjectsPerNode = 4

// ReadFile reads an ONNX model from path. The file is memory-mapped
// read-only where the platform allows it: the model keeps only the offsets
// of weight bytes, never the bytes themselves, so reading a model with
// gigabytes of weights touches only the pages holding its structure and
// small constants. The model's names point into the mapping (see
// ShareInput), so a model read successfully keeps its file mapped for the
// life of the process; a file rewritten in place meanwhile (rather than
// replaced, as WriteFile does) changes them.
//
// A file truncated while it is read gives ErrFileChanged. One truncated
// after ReadFile returns takes with it the pages under those names and
// under the value_info types kept encoded: the next goroutine to touch
// one faults, which ends the process unless that goroutine set
// debug.SetPanicOnFault. Copying them instead would cost 10 MB of fresh
// memory on a 112k-node graph (see ShareInput). Nothing else is read
// through the mapping after the read: small tensors' values are decoded
// copies, and weights are read, when at all (WriteFile), with pread,
// where a shorter file is an error.
func ReadFile(path string, opt ReadOptions) (*Model, error) {
	data, release, file, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	mapped := file != nil
	var src io.ReaderAt
	if mapped {
		defer file.Close()
		if len(data) >= coldMinFile {
			src = file
		}
	}
	if opt.Dir == "" {
		opt.Dir = filepath.Dir(path)
	}
	// A file read into memory instead holds its weights too: sharing it
	// would keep them alive.
	opt.ShareInput = mapped
	if TestHookAfterMap != nil {
		TestHookAfterMap(path)
	}
	m, err := read(data, opt, src, coldPayload)
	if err != nil {
		release() // nothing points into the mapping
		return nil, err
	}
	m.Path = path
	if mapped {
		m.dropPages = func() { dropPages(data) }
	}
	return m, nil
}

// gzipMagic opens every gzip stream (RFC 1952: ID1 ID2 and the deflate
// method); no ModelProto starts with it (0x1f is field 3 with wire type
// 7, which protobuf does not have).
var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// Read decodes an ONNX ModelProto held in memory. Tensors keep offsets
// into data (and Read does not retain data itself).
func Read(data []byte, opt ReadOptions) (m *Model, err error) {
	return read(data, opt, nil, 0)
}

// read is Read with, for a mapped file, the file itself: src serves the
// main graph's cold bytes (see listTop), payloads of coldMin bytes or more.
func read(data []byte, opt ReadOptions, src io.ReaderAt, coldMin int64) (m *Model, err error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("empty file: not an ONNX model")
	}
	lim := opt.Limits
	if lim == nil {
		lim = &DefaultLimits
	}
	r := &reader{data: data, src: src, coldMin: coldMin, lim: lim, ext: newExtFiles(opt.Dir), share: opt.ShareInput, counted: opt.Counted}
	defer r.ext.close()
	// data may be a mapping whose file shrinks under the reader.
	err = guardMapped(data, func() error {
		if bytes.HasPrefix(data, []byte(lfsPointerPrefix)) {
			// A clone without `git lfs pull` holds this text where the
			// model should be; the protobuf error it would give says
			// nothing useful.
			return fmt.Errorf("a Git LFS pointer file, not the model itself: run `git lfs pull` to fetch it")
		}
		if bytes.HasPrefix(data, gzipMagic) {
			// A model shipped as model.onnx.gz (as testdata/saved's are)
			// read as is: "invalid wire type 7" would not say why.
			return fmt.Errorf("gzip-compressed, not an ONNX model: decompress it first (gunzip -k FILE)")
		}
		var err error
		m, err = r.model()
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// reader holds the state of one Read call.
type reader struct {
	wireWalker
	data    []byte
	src     io.ReaderAt // the mapped file, for cold bytes (listTop); nil when data is all there is
	coldMin int64       // the smallest payload listTop skips as cold
	lim     *Limits
	ext     *extFiles
	share   bool            // strings may point into data (ReadOptions.ShareInput)
	counted func(nodes int) // ReadOptions.Counted

	nodes, objects int // counted against Limits before allocating
	unknownDims    int // numbering of "?unk_N" symbols

	valueSlab []Value           // see newValue
	ptrSlab   []*Value          // see valueList
	names     [][]byte          // scratch: a node's output names
	textChunk []byte            // see text
	dimSlab   []Dim             // see dims
	typeSlab  []TypeInfo        // see declared
	interned  map[string]string // see internStr

	coldSlab []byte // see coldBytes
	coldBuf  []byte // see coldTensor

	scratch     bool  // decoded types are checked, not kept (see dims)
	scratchDims []Dim // their dims
}

// countNode charges one node against Limits.MaxNodes.
func (r *reader) countNode() error {
	r.nodes++
	if r.nodes > r.lim.MaxNodes {
		return fmt.Errorf("model has more than %d nodes (the limit)", r.lim.MaxNodes)
	}
	return nil
}

// countObject charges one value, attribute or tensor against the object cap.
func (r *reader) countObject() error {
	r.objects++
	return r.checkObjects()
}

// checkObjects refuses a model past the object cap.
func (r *reader) checkObjects() error {
	if r.objects > maxObjectsPerNode*r.lim.MaxNodes {
		return fmt.Errorf("model has more than %d values, attributes and tensors (the limit)", maxObjectsPerNode*r.lim.MaxNodes)
	}
	return nil
}

func (r *reader) model() (*Model, error) {
	m := &Model{}
	var graphF *pbField
	var funcs []pbField
	r.push("ModelProto", -1)
	defer r.pop()
	err := r.walk(r.data, 0, func(f *pbField) error {
		var err error
		switch f.num {
		case 1:
			err = r.wantType(f, protowire.VarintType, "ir_version")
			m.IRVersion = int64(f.x)
		case 2:
			m.ProducerName, err = r.str(f, "producer_name")
		case 3:
			m.ProducerVersion, err = r.str(f, "producer_version")
		case 4:
			m.Domain, err = r.str(f, "domain")
		case 5:
			err = r.wantType(f, protowire.VarintType, "model_version")
			m.ModelVersion = int64(f.x)
		case 6:
			m.Doc, err = r.str(f, "doc_string")
		case 7:
			if err = r.wantType(f, protowire.BytesType, "graph"); err == nil {
				g := *f
				graphF = &g // the last one wins, as in protobuf
			}
		case 8:
			var o OpsetImport
			o, err = r.opset(f, len(m.Opsets))
			m.Opsets = append(m.Opsets, o)
		case 14:
			var kv KeyValue
			kv, err = r.keyValue(f, "metadata_props", len(m.Metadata))
			m.Metadata = append(m.Metadata, kv)
		case 25:
			if err = r.wantType(f, protowire.BytesType, "functions"); err == nil {
				funcs = append(funcs, *f)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if graphF == nil {
		return nil, fmt.Errorf("not an ONNX model: ModelProto has no graph")
	}
	for i := range funcs {
		fn, err := r.function(&funcs[i], i)
		if err != nil {
			return nil, err
		}
		m.Functions = append(m.Functions, fn)
	}
	r.push("graph", -1)
	g, err := r.graph(graphF.b, graphF.off, nil, 0)
	r.pop()
	if err != nil {
		return nil, err
	}
	m.Graph = g
	nameUnnamedNodes(m)
	return m, nil
}

// str decodes a string field (copying it out of the input buffer).
func (r *reader) str(f *pbField, field string) (string, error) {
	if err := r.wantType(f, protowire.BytesType, field); err != nil {
		return "", err
	}
	return r.text(f.b), nil
}

// text returns b as a string: b itself when the input is shared, else a
// copy. Short strings (names, mostly) are copied
// into shared chunks rather than allocated one by one: a 112k-node graph
// has two names per node, and the chunks hold no pointers for the
// collector to scan. A chunk is never written again where a string uses
// it, so the strings are immutable as Go requires.
func (r *reader) text(b []byte) string {
	const chunk, maxShared = 64 << 10, 1 << 10
	if len(b) == 0 {
		return ""
	}
	if r.share {
		return unsafe.String(&b[0], len(b))
	}
	if len(b) > maxShared {
		return string(b)
	}
	if cap(r.textChunk)-len(r.textChunk) < len(b) {
		r.textChunk = make([]byte, 0, chunk)
	}
	at := len(r.textChunk)
	r.textChunk = append(r.textChunk, b...)
	return unsafe.String(&r.textChunk[at], len(b))
}

// normDomain maps the spelled-out default domain to "".
func normDomain(d string) string {
	if d == "ai.onnx" {
		return ""
	}
	return d
}

func (r *reader) opset(f *pbField, idx int) (OpsetImport, error) {
	var o OpsetImport
	if err := r.wantType(f, protowire.BytesType, "opset_import"); err != nil {
		return o, err
	}
	r.push("opset_import", idx)
	defer r.pop()
	err := r.walk(f.b, f.off, func(g *pbField) error {
		var err error
		switch g.num {
		case 1:
			o.Domain, err = r.str(g, "domain")
			o.Domain = normDomain(o.Domain)
		case 2:
			err = r.wantType(g, protowire.VarintType, "version")
			o.Version = int64(g.x)
		}
		return err
	})
	return o, err
}

func (r *reader) keyValue(f *pbField, field string, idx int) (KeyValue, error) {
	var kv KeyValue
	if err := r.wantType(f, protowire.BytesType, field); err != nil {
		return kv, err
	}
	r.push(field, idx)
	defer r.pop()
	err := r.walk(f.b, f.off, func(g *pbField) error {
		var err error
		switch g.num {
		case 1:
			kv.Key, err = r.str(g, "key")
		case 2:
			kv.Value, err = r.str(g, "value")
		}
		return err
	})
	return kv, err
}

// graphParts holds the raw records of a GraphProto, collected in one pass
// so that the graph can be built in dependency order whatever the field
// order in the file.
type graphParts struct {
	name, doc                      string
	nodes, valueInfo               []span
	inits, sparse, inputs, outputs []pbField
	cold                           []*coldInit // per init: its copy when read cold (main graph only)
}

// countFields counts the fields of the message in b by number (those
// below 16), skipping payloads without the walker's per-field callback:
// on a 112k-node graph the counting walk took as long as the collecting
// one. It returns false for malformed bytes.
func countFields(b []byte, counts *[16]int) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return false
		}
		if num < 16 {
			counts[num]++
		}
		b = b[n+m:]
	}
	return true
}

// span is where a length-delimited field's payload lies in the input: 16
// bytes where a pbField takes 48. A graph lists one per node and one per
// value_info entry before decoding them: 112k of each in an LLM export.
type span struct{ off, n int64 }

func spanOf(f *pbField) span { return span{f.off, int64(len(f.b))} }

// spanField returns the field s locates (every payload the walker hands out
// is a sub-slice of r.data at its offset).
func (r *reader) spanField(s span) pbField {
	return pbField{typ: protowire.BytesType, b: r.data[s.off : s.off+s.n : s.off+s.n], off: s.off}
}

func (r *reader) graphScan(b []byte, off int64, top bool) (*graphParts, error) {
	p := &graphParts{}
	// The main graph of a mapped file is listed with its cold bytes read
	// from the file (listTop); anything else is walked.
	var listed []topField
	listOK := false
	if top && r.src != nil {
		listed, listOK = r.listTop(b, off)
	}
	// Count first, so that each list is allocated once at its size: on a
	// 112k-node graph, growing them by doubling allocated more than the
	// whole graph. A field of the wrong wire type is counted too; the
	// second walk reports it.
	var counts [16]int
	switch {
	case listOK:
		for i := range listed {
			if n := listed[i].f.num; n < 16 {
				counts[n]++
			}
		}
	case !countFields(b, &counts):
		// Malformed: the walk below says where.
		clear(counts[:])
	}
	p.nodes = make([]span, 0, min(counts[1], r.lim.MaxNodes+1))
	if c := min(counts[13], maxObjectsPerNode*r.lim.MaxNodes+1); c > 0 {
		p.valueInfo = make([]span, 0, c)
	}
	for _, l := range []struct {
		list *[]pbField
		num  int
	}{{&p.inits, 5}, {&p.sparse, 15}, {&p.inputs, 11}, {&p.outputs, 12}} {
		if c := min(counts[l.num], maxObjectsPerNode*r.lim.MaxNodes+1); c > 0 {
			*l.list = make([]pbField, 0, c)
		}
	}
	collect := func(f *pbField) error {
		var err error
		switch f.num {
		case 1:
			if err = r.wantType(f, protowire.BytesType, "node"); err == nil {
				if err = r.countNode(); err == nil {
					p.nodes = append(p.nodes, spanOf(f))
				}
			}
		case 2:
			p.name, err = r.str(f, "name")
		case 5, 15, 11, 12, 13:
			if err = r.wantType(f, protowire.BytesType, "field"); err != nil {
				return err
			}
			if err = r.countObject(); err != nil {
				return err
			}
			switch f.num {
			case 5:
				p.inits = append(p.inits, *f)
			case 15:
				p.sparse = append(p.sparse, *f)
			case 11:
				p.inputs = append(p.inputs, *f)
			case 12:
				p.outputs = append(p.outputs, *f)
			case 13:
				p.valueInfo = append(p.valueInfo, spanOf(f))
			}
		case 10:
			p.doc, err = r.str(f, "doc_string")
		}
		return err
	}
	if !listOK {
		return p, r.walk(b, off, collect)
	}
	p.cold = make([]*coldInit, 0, len(p.inits))
	for i := range listed {
		if err := collect(&listed[i].f); err != nil {
			return p, err
		}
		if listed[i].f.num == 5 {
			p.cold = append(p.cold, listed[i].cold)
		}
	}
	return p, nil
}

// graph builds a Graph from a GraphProto. parent is nil for the main graph;
// depth counts subgraph nesting and is checked before recursing.
func (r *reader) graph(b []byte, off int64, parent *Graph, depth int) (*Graph, error) {
	if depth > r.lim.MaxDepth {
		return nil, fmt.Errorf("%s: subgraphs nested deeper than %d (the limit)", r.where(), r.lim.MaxDepth)
	}
	p, err := r.graphScan(b, off, parent == nil)
	if err != nil {
		return nil, err
	}
	if parent == nil && r.counted != nil {
		r.counted(len(p.nodes))
	}
	var g *Graph
	if parent == nil {
		g = NewGraph(p.name)
	} else {
		g = NewSubgraph(p.name, parent)
	}
	g.Doc = p.doc

	// Initializers first: old IR versions also list them as inputs, and
	// such inputs are initializers only.
	for _, inits := range []struct {
		field  string
		recs   []pbField
		cold   []*coldInit
		decode func(b []byte, off int64) (*Tensor, error)
	}{
		{"initializer", p.inits, p.cold, r.tensor},
		{"sparse_initializer", p.sparse, nil, r.sparseTensor},
	} {
		err := r.each(inits.field, len(inits.recs), func(i int) error {
			var t *Tensor
			var err error
			if i < len(inits.cold) && inits.cold[i] != nil {
				t, err = r.coldTensor(inits.cold[i], inits.recs[i].off, int64(len(inits.recs[i].b)))
			} else {
				t, err = inits.decode(inits.recs[i].b, inits.recs[i].off)
			}
			if err != nil {
				return err
			}
			return r.addInitializer(g, t)
		})
		if err != nil {
			return nil, err
		}
	}
	err = r.each("input", len(p.inputs), func(i int) error {
		name, ti, err := r.valueInfo(&p.inputs[i], depth)
		if err != nil {
			return err
		}
		return r.addGraphInput(g, name, ti)
	})
	if err != nil {
		return nil, err
	}
	if err := r.nodes2graph(g, p.nodes, depth); err != nil {
		return nil, err
	}
	err = r.each("output", len(p.outputs), func(i int) error {
		name, ti, err := r.valueInfo(&p.outputs[i], depth)
		if err != nil {
			return err
		}
		v := g.Lookup(name)
		if v == nil {
			return fmt.Errorf("graph %s output %s is not produced by any node, input or initializer", QuoteName(g.Name), QuoteName(name))
		}
		if ti != nil && v.Declared == nil && v.Producer != nil {
			// A graph input or initializer keeps its own declaration (or
			// none): the current type of an input is its declared one.
			v.Declared = ti
		}
		g.AddOutput(v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	cursor := valueCursor{nodes: g.Nodes}
	err = r.each("value_info", len(p.valueInfo), func(i int) error {
		f := r.spanField(p.valueInfo[i])
		return r.valueInfoEntry(g, &f, &cursor)
	})
	if err != nil {
		return nil, err
	}
	if err := g.Toposort(); err != nil {
		return nil, fmt.Errorf("graph %q: %w", g.Name, err)
	}
	return g, nil
}

func (r *reader) addInitializer(g *Graph, t *Tensor) error {
	if t.Name == "" {
		return fmt.Errorf("%s: initializer has no name", r.where())
	}
	v, err := g.NewValue(t.Name)
	if err != nil {
		return fmt.Errorf("initializer %q is defined twice", t.Name)
	}
	g.AddInitializer(v, t)
	return nil
}

// addGraphInput declares a graph input, unless an initializer of the same
// name exists (then the input entry only declares the initializer's type).
func (r *reader) addGraphInput(g *Graph, name string, ti *TypeInfo) error {
	if name == "" {
		return fmt.Errorf("graph %q has an input with no name", g.Name)
	}
	if v := g.Local(name); v != nil {
		if !v.IsInitializer {
			return fmt.Errorf("graph %q lists input %q twice", g.Name, name)
		}
		if ti != nil {
			v.Declared = ti
		}
		return nil
	}
	v, err := g.NewValue(name)
	if err != nil {
		return err
	}
	v.Declared = ti
	if ti != nil {
		// A graph input's declared type is its type until inference binds
		// its symbols; subgraph inputs are reset by their op's shape rule.
		v.Kind, v.DType, v.Shape = ti.Kind, ti.DType, ti.Shape.Clone()
	}
	g.AddInput(v)
	return nil
}

// valueInfoEntry decodes one value_info entry of g. The declaration of a
// value the file produces is kept encoded, as the TypeProto's bytes
// (Value.infoRaw), once decoding it has checked it: only the consistency
// check of inference reads it, and on a 112k-node export the decoded
// types were 12 MB. A type with an unknown dim is kept decoded instead, as
// its fresh "?unk_N" symbol is numbered in reading order.
func (r *reader) valueInfoEntry(g *Graph, f *pbField, cursor *valueCursor) error {
	name, typ, ok, err := r.valueInfoFields(f)
	if err != nil || !ok {
		return err
	}
	v := cursor.find(g, name)
	if v != nil && (v.Declared != nil || v.infoRaw != "") {
		v = nil // declared already: the entry goes to g.ValueInfo
	}
	if v != nil && r.checkPlainType(typ.b) {
		v.infoRaw = r.text(typ.b)
		return nil
	}
	r.push("type", -1)
	defer r.pop()
	if v != nil {
		before := r.unknownDims
		r.scratch = true
		_, err := r.typeProto(typ.b, typ.off, 0)
		r.scratch = false
		if err != nil {
			return err
		}
		if r.unknownDims == before {
			v.infoRaw = r.text(typ.b)
			return nil
		}
		r.unknownDims = before
	}
	ti := r.declared()
	if *ti, err = r.typeProto(typ.b, typ.off, 0); err != nil {
		return err
	}
	if v != nil {
		v.Declared = ti
		v.infoDeclared = true
		return nil
	}
	g.ValueInfo[r.text(name)] = *ti
	return nil
}

// valueCursor finds the values value_info entries name. Exporters list
// them in the order nodes produce them, so the output after the last one
// found is tried before a lookup in the name table: on a 112k-node graph
// the lookups, each a cache miss in a large map, were a quarter of the
// read time.
type valueCursor struct {
	nodes     []*Node
	node, out int // the next output to try
}

func (c *valueCursor) find(g *Graph, name []byte) *Value {
	for c.node < len(c.nodes) {
		outs := c.nodes[c.node].Outputs
		if c.out >= len(outs) {
			c.node, c.out = c.node+1, 0
			continue
		}
		v := outs[c.out]
		if v != nil && v.Name == string(name) {
			c.out++
			return v
		}
		break
	}
	v := g.values[string(name)]
	if v != nil && v.Producer != nil && v.Producer.graph == g {
		// Resume after v: the next entry likely names the next output.
		c.node = v.Producer.pos
		c.out = slices.Index(v.Producer.Outputs, v) + 1
	}
	return v
}

// valueInfo decodes a ValueInfoProto: its name and declared type (nil when
// the entry has no type).
func (r *reader) valueInfo(f *pbField, depth int) (string, *TypeInfo, error) {
	name, ti, err := r.valueInfoBytes(f, depth)
	return string(name), ti, err
}

// valueInfoFields returns a ValueInfoProto's name, left in the input, and
// its type field (ok false when the entry has no type), not decoded.
func (r *reader) valueInfoFields(f *pbField) (name []byte, typ pbField, ok bool, err error) {
	err = r.walk(f.b, f.off, func(g *pbField) error {
		var err error
		switch g.num {
		case 1:
			err = r.wantType(g, protowire.BytesType, "name")
			name = g.b
		case 2:
			if err = r.wantType(g, protowire.BytesType, "type"); err == nil {
				typ, ok = *g, true
			}
		}
		return err
	})
	return name, typ, ok, err
}

// valueInfoBytes is valueInfo with the name left in the input buffer.
func (r *reader) valueInfoBytes(f *pbField, depth int) ([]byte, *TypeInfo, error) {
	var name []byte
	var ti *TypeInfo
	err := r.walk(f.b, f.off, func(g *pbField) error {
		var err error
		switch g.num {
		case 1:
			err = r.wantType(g, protowire.BytesType, "name")
			name = g.b
		case 2:
			if err = r.wantType(g, protowire.BytesType, "type"); err != nil {
				return err
			}
			r.push("type", -1)
			ti = r.declared()
			*ti, err = r.typeProto(g.b, g.off, 0)
			r.pop()
		}
		return err
	})
	return name, ti, err
}

// typeProto decodes a TypeProto. A sequence, optional or map keeps the
// kind of the outer type and the element type and shape of the innermost
// tensor. nest counts type nesting, bounded like subgraph nesting.
func (r *reader) typeProto(b []byte, off int64, nest int) (TypeInfo, error) {
	ti := TypeInfo{Kind: TensorValue, Shape: Unranked()}
	if nest > r.lim.MaxDepth {
		return ti, fmt.Errorf("%s: types nested deeper than %d (the limit)", r.where(), r.lim.MaxDepth)
	}
	err := r.walk(b, off, func(f *pbField) error {
		switch f.num {
		case 1, 8: // tensor_type, sparse_tensor_type
			if err := r.wantType(f, protowire.BytesType, "tensor_type"); err != nil {
				return err
			}
			kind := TensorValue
			if f.num == 8 {
				kind = SparseTensorValue
			}
			t, err := r.tensorType(f)
			t.Kind = kind
			ti = t
			return err
		case 4, 9: // sequence_type, optional_type: {elem_type = 1}
			if err := r.wantType(f, protowire.BytesType, "sequence_type"); err != nil {
				return err
			}
			kind := SequenceValue
			if f.num == 9 {
				kind = OptionalValue
			}
			inner, err := r.innerType(f, 1, nest)
			inner.Kind = kind
			ti = inner
			return err
		case 5: // map_type: {key_type = 1, value_type = 2}
			if err := r.wantType(f, protowire.BytesType, "map_type"); err != nil {
				return err
			}
			inner, err := r.innerType(f, 2, nest)
			inner.Kind = MapValue
			ti = inner
			return err
		}
		return nil
	})
	return ti, err
}

// innerType decodes the TypeProto held in field num of a Sequence,
// Optional or Map message.
func (r *reader) innerType(f *pbField, num protowire.Number, nest int) (TypeInfo, error) {
	ti := TypeInfo{Shape: Unranked()}
	err := r.walk(f.b, f.off, func(g *pbField) error {
		if g.num != num {
			return nil
		}
		if err := r.wantType(g, protowire.BytesType, "elem_type"); err != nil {
			return err
		}
		var err error
		ti, err = r.typeProto(g.b, g.off, nest+1)
		return err
	})
	return ti, err
}

// tensorType decodes TypeProto.Tensor {elem_type = 1, shape = 2}.
func (r *reader) tensorType(f *pbField) (TypeInfo, error) {
	ti := TypeInfo{Shape: Unranked()}
	err := r.walk(f.b, f.off, func(g *pbField) error {
		switch g.num {
		case 1:
			if err := r.wantType(g, protowire.VarintType, "elem_type"); err != nil {
				return err
			}
			ti.DType = DType(int32(g.x))
		case 2:
			if err := r.wantType(g, protowire.BytesType, "shape"); err != nil {
				return err
			}
			s, err := r.shapeProto(g)
			ti.Shape = s
			return err
		}
		return nil
	})
	return ti, err
}

// shapeProto decodes a TensorShapeProto. dim_value gives a number,
// dim_param a symbol, and a dim with neither a fresh "?unk_N" symbol.
func (r *reader) shapeProto(f *pbField) (Shape, error) {
	ndims := 0
	err := r.walk(f.b, f.off, func(g *pbField) error {
		if g.num == 1 {
			ndims++
		}
		return nil
	})
	if err != nil {
		return Shape{}, err
	}
	s := Shape{Ranked: true, Dims: r.dims(min(ndims, r.lim.MaxRank))}
	err = r.walk(f.b, f.off, func(g *pbField) error {
		if g.num != 1 {
			return nil
		}
		if err := r.wantType(g, protowire.BytesType, "dim"); err != nil {
			return err
		}
		if len(s.Dims) >= r.lim.MaxRank {
			return fmt.Errorf("%s: shape has more than %d dims (the limit)", r.where(), r.lim.MaxRank)
		}
		d := Dim{Sym: "?"}
		err := r.walk(g.b, g.off, func(h *pbField) error {
			switch h.num {
			case 1:
				if err := r.wantType(h, protowire.VarintType, "dim_value"); err != nil {
					return err
				}
				v := int64(h.x)
				if err := r.checkDim(v); err != nil {
					return err
				}
				d = D(v)
			case 2:
				sym, err := r.internStr(h, "dim_param")
				if err != nil {
					return err
				}
				if sym == "" {
					sym = "?"
				}
				d = S(sym)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if d.Sym == "?" {
			r.unknownDims++
			d = S(fmt.Sprintf("?unk_%d", r.unknownDims))
		}
		s.Dims = append(s.Dims, d)
		return nil
	})
	return s, err
}

// checkDim rejects a dimension outside [0, MaxDim].
func (r *reader) checkDim(v int64) error {
	if v < 0 {
		return fmt.Errorf("%s: negative dimension %d", r.where(), v)
	}
	if v > r.lim.MaxDim {
		return fmt.Errorf("%s: dimension %d exceeds the limit of %d", r.where(), v, r.lim.MaxDim)
	}
	return nil
}

// nodeRec is what decodeNode learns of a node for the later steps.
type nodeRec struct {
	nin, nattrs int32 // input and attribute fields
	graphs      bool  // an attribute holds a subgraph (see decodeNode)
}

// nodeBatch is a graph's nodes while they are built: the nodes themselves
// (one slab), where each NodeProto lies and what decoding it found.
type nodeBatch struct {
	nodes []Node
	spans []span
	recs  []nodeRec
}

// nodes2graph builds the nodes of g in three steps: decode every node with
// its output values and attributes (on several goroutines for a large
// graph, see decodeNodes), enter the outputs in g's name table in node
// order (so inputs can name values produced later in the file, and
// subgraphs can read any value of g), then resolve inputs and link.
//
// Nodes, values and their input/output lists come from slabs, a few
// allocations for the whole graph instead of several per node: on a
// 112k-node LLM export, per-node allocations and map growth were most of
// the read time.
func (r *reader) nodes2graph(g *Graph, spans []span, depth int) error {
	nb := &nodeBatch{nodes: make([]Node, len(spans)), spans: spans, recs: make([]nodeRec, len(spans))}
	g.reserveValues(len(spans))
	g.Nodes = slices.Grow(g.Nodes, len(spans))
	if err := r.decodeNodes(g, nb, depth); err != nil {
		return err
	}
	err := r.each("node", len(spans), func(i int) error {
		return r.registerOutputs(g, &nb.nodes[i])
	})
	if err != nil {
		return err
	}
	return r.each("node", len(spans), func(i int) error {
		return r.nodeBody(g, nb, i, depth)
	})
}

// parallelNodes is the size from which a graph's nodes are decoded on
// several goroutines; maxReadWorkers caps how many. Measured on a 2-core
// machine with a 112k-node LLaMA-shaped export (scripts/bench_vs_onnx.sh
// llm, median of 15 fresh runs of onnxcost shapes), two workers cut the
// whole command from 0.65 s to 0.58 s: allocation there is dominated by
// first-touch page faults, which proceed in parallel.
var (
	parallelNodes  = 4096 // a variable so that tests can read small graphs in parallel
	maxReadWorkers = 4
)

// decodeNodes runs decodeNode over every node of a graph, splitting the
// nodes of a large top-level graph into contiguous ranges, one per worker.
// A worker reader shares the input, limits and external files and has its
// own position, slabs and counters; the counters are added back after.
// The error reported is the one of the first failing node in file order,
// whichever worker found it, so the message does not depend on timing.
// Every range, this goroutine's too, runs under guardMapped: a fault must
// end as an error in errs, never unwind past wg.Wait, or a worker could
// still be reading the mapping when ReadFile unmaps it.
func (r *reader) decodeNodes(g *Graph, nb *nodeBatch, depth int) error {
	n := len(nb.spans)
	workers := min(runtime.GOMAXPROCS(0), maxReadWorkers, n/max(parallelNodes/2, 1))
	if depth > 0 || n < parallelNodes || workers < 2 {
		return r.decodeRange(g, nb, 0, n, depth)
	}
	subs := make([]*reader, workers)
	errs := make([]error, workers)
	per := (n + workers - 1) / workers
	if testHookSplit != nil {
		last := nb.spans[min(per, n)-1]
		testHookSplit(last.off + last.n)
	}
	var wg sync.WaitGroup
	for w := range subs {
		lo, hi := min(w*per, n), min((w+1)*per, n)
		subs[w] = r.fork()
		if w > 0 { // the first range is decoded on this goroutine, below
			wg.Go(func() { errs[w] = subs[w].guardedRange(g, nb, lo, hi, depth) })
		}
	}
	errs[0] = subs[0].guardedRange(g, nb, 0, min(per, n), depth)
	wg.Wait()
	objects, unknown := r.objects, r.unknownDims
	for _, s := range subs {
		objects += s.objects - r.objects
		unknown += s.unknownDims - r.unknownDims
	}
	r.objects, r.unknownDims = objects, unknown
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return r.checkObjects()
}

// fork returns a reader for one node worker (see decodeNodes).
func (r *reader) fork() *reader {
	return &reader{
		wireWalker:  wireWalker{path: slices.Clone(r.path)},
		data:        r.data,
		lim:         r.lim,
		ext:         r.ext,
		share:       r.share,
		objects:     r.objects,
		unknownDims: r.unknownDims,
	}
}

// guardedRange is decodeRange with a fault in the input an error (see
// guardMapped).
func (r *reader) guardedRange(g *Graph, nb *nodeBatch, lo, hi, depth int) error {
	return guardMapped(r.data, func() error { return r.decodeRange(g, nb, lo, hi, depth) })
}

// decodeRange decodes nodes [lo, hi), stopping at the first error.
func (r *reader) decodeRange(g *Graph, nb *nodeBatch, lo, hi, depth int) error {
	for i := lo; i < hi; i++ {
		r.push("node", i)
		err := r.decodeNode(g, nb, i, depth)
		r.pop()
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeNode decodes a NodeProto's fields, creates its output values and
// decodes its attributes, all without touching g's name table, so that
// workers may run it on different nodes at once. A node with a subgraph
// attribute has its attributes decoded later by nodeBody: a subgraph
// resolves names of g, which must then be complete.
func (r *reader) decodeNode(g *Graph, nb *nodeBatch, i, depth int) error {
	n, rec, f := &nb.nodes[i], &nb.recs[i], r.spanField(nb.spans[i])
	outs := r.names[:0]
	err := r.walk(f.b, f.off, func(h *pbField) error {
		var err error
		switch h.num {
		case 1:
			err = r.wantType(h, protowire.BytesType, "input")
			rec.nin++
		case 2:
			err = r.wantType(h, protowire.BytesType, "output")
			outs = append(outs, h.b)
		case 3:
			n.Name, err = r.str(h, "name")
		case 4:
			n.OpType, err = r.internStr(h, "op_type")
		case 5:
			rec.nattrs++
			rec.graphs = rec.graphs || r.holdsGraph(h)
		case 6:
			var doc string
			doc, err = r.str(h, "doc_string")
			n.SetDoc(doc)
		case 7:
			n.Domain, err = r.internStr(h, "domain")
			n.Domain = normDomain(n.Domain)
		case 9:
			var kv KeyValue
			md := n.Metadata()
			kv, err = r.keyValue(h, "metadata_props", len(md))
			n.SetMetadata(append(md, kv))
		}
		return err
	})
	r.names = outs[:0]
	if err != nil {
		return err
	}
	if n.OpType == "" {
		return fmt.Errorf("%s: node %s has no op_type", r.where(), QuoteName(n.Name))
	}
	n.graph = g
	n.Outputs = r.valueList(len(outs))
	for k, b := range outs {
		if len(b) == 0 {
			continue // an omitted optional output
		}
		if err := r.countObject(); err != nil {
			return err
		}
		v := r.newValue(r.text(b))
		v.Producer = n
		n.Outputs[k] = v
	}
	if rec.graphs {
		return nil
	}
	return r.attributes(g, n, &f, int(rec.nattrs), depth)
}

// holdsGraph reports whether the AttributeProto in f has a graph or graphs
// field. A malformed attribute reports false; attributes() then says why.
func (r *reader) holdsGraph(f *pbField) bool {
	if f.typ != protowire.BytesType {
		return false
	}
	found := false
	_ = r.walk(f.b, f.off, func(h *pbField) error {
		found = found || h.num == 6 || h.num == 11
		return nil
	})
	return found
}

// registerOutputs enters a decoded node's outputs in g's name table.
func (r *reader) registerOutputs(g *Graph, n *Node) error {
	for _, v := range n.Outputs {
		if v == nil {
			continue
		}
		if old := g.values[v.Name]; old != nil {
			if old.Producer != nil {
				return fmt.Errorf("value %s is produced by both node %s and node %s", QuoteName(v.Name), QuoteName(old.Producer.Name), QuoteName(n.Name))
			}
			return fmt.Errorf("node %s (%s) writes %s, which is already a graph input or initializer", QuoteName(n.Name), cutName(n.OpType), QuoteName(v.Name))
		}
		g.values[v.Name] = v
	}
	return nil
}

// nodeBody resolves a node's inputs, decodes the attributes decodeNode
// left (those holding subgraphs) and appends the node to g.
func (r *reader) nodeBody(g *Graph, nb *nodeBatch, i, depth int) error {
	n, rec, f := &nb.nodes[i], &nb.recs[i], r.spanField(nb.spans[i])
	n.Inputs = r.valueList(int(rec.nin))
	k := 0
	err := r.walk(f.b, f.off, func(h *pbField) error {
		if h.num != 1 {
			return nil
		}
		if len(h.b) > 0 {
			v := g.lookupBytes(h.b)
			if v == nil {
				return fmt.Errorf("node %s (%s) reads undefined tensor %s", QuoteName(n.Name), cutName(n.OpType), QuoteName(string(h.b)))
			}
			n.Inputs[k] = v
		}
		k++
		return nil
	})
	if err != nil {
		return err
	}
	if rec.graphs {
		if err := r.attributes(g, n, &f, int(rec.nattrs), depth); err != nil {
			return err
		}
	}
	g.linkNode(n)
	return nil
}

// attributes decodes a node's AttributeProtos; subgraphs are built nested
// in g.
func (r *reader) attributes(g *Graph, n *Node, f *pbField, nattrs, depth int) error {
	if nattrs == 0 {
		return nil
	}
	n.Attrs = make([]*Attribute, 0, nattrs)
	idx := 0
	err := r.walk(f.b, f.off, func(h *pbField) error {
		if h.num != 5 {
			return nil
		}
		if err := r.wantType(h, protowire.BytesType, "attribute"); err != nil {
			return err
		}
		r.push("attribute", idx)
		idx++
		a, err := r.attribute(h, g, depth)
		r.pop()
		if err != nil {
			return err
		}
		if a.Name == fusedFromAttr && a.Type == AttrStrings {
			n.FusedFrom = append([]string(nil), a.Strings...)
			return nil
		}
		n.Attrs = append(n.Attrs, a)
		return nil
	})
	if err != nil {
		return err
	}
	if len(n.Attrs) == 0 {
		n.Attrs = nil
	}
	return nil
}

// slabSize is how many values or value pointers the reader allocates at
// once.
const slabSize = 1024

// newValue returns a fresh value named name, from the reader's slab.
func (r *reader) newValue(name string) *Value {
	if len(r.valueSlab) == 0 {
		r.valueSlab = make([]Value, slabSize)
	}
	v := &r.valueSlab[0]
	r.valueSlab = r.valueSlab[1:]
	v.Name = name
	return v
}

// valueList returns a zeroed list of n value pointers, nil for n = 0. Its
// capacity is n, so that appending to it (an editing pass) copies rather
// than overwriting the next node's list.
func (r *reader) valueList(n int) []*Value {
	if n == 0 {
		return nil
	}
	if n > slabSize/4 {
		return make([]*Value, n)
	}
	if len(r.ptrSlab) < n {
		r.ptrSlab = make([]*Value, slabSize)
	}
	l := r.ptrSlab[:n:n]
	r.ptrSlab = r.ptrSlab[n:]
	return l
}

// dims returns an empty dim list of capacity n from the reader's slab
// (capped, so that appending to it copies), one allocation per slabSize
// dims instead of one per declared shape.
func (r *reader) dims(n int) []Dim {
	if r.scratch {
		// A type decoded only to check it: its dims are not kept.
		if cap(r.scratchDims) < n {
			r.scratchDims = make([]Dim, 0, n)
		}
		return r.scratchDims[:0:n]
	}
	if n == 0 || n > slabSize/4 {
		return make([]Dim, 0, n)
	}
	if len(r.dimSlab) < n {
		r.dimSlab = make([]Dim, slabSize)
	}
	l := r.dimSlab[:0:n]
	r.dimSlab = r.dimSlab[n:]
	return l
}

// declared returns a fresh TypeInfo from the reader's slab: every
// value_info entry of a 112k-node graph has one.
func (r *reader) declared() *TypeInfo {
	if len(r.typeSlab) == 0 {
		r.typeSlab = make([]TypeInfo, slabSize)
	}
	t := &r.typeSlab[0]
	r.typeSlab = r.typeSlab[1:]
	return t
}

// internStr decodes a string field that repeats across the model (op
// types, domains, dim names, attribute names), sharing one copy of each
// distinct text. A shared copy also keeps lookups off the model file:
// Node.Attr compares attribute names, and had they pointed into the
// mapping, a pass asking every node for one attribute read back pages
// the command had dropped (19 MB on a 112k-node graph).
func (r *reader) internStr(f *pbField, field string) (string, error) {
	if err := r.wantType(f, protowire.BytesType, field); err != nil {
		return "", err
	}
	if s, ok := r.interned[string(f.b)]; ok {
		return s, nil
	}
	if r.interned == nil {
		r.interned = map[string]string{}
	}
	s := string(f.b)
	if len(r.interned) < maxInterned {
		r.interned[s] = s
	}
	return s, nil
}

// maxInterned bounds the intern table: a file with millions of distinct
// dim names gains nothing from it.
const maxInterned = 1 << 16

// fusedFromAttr is the attribute the writer uses to carry Node.FusedFrom.
const fusedFromAttr = "fused_from"

// attribute decodes an AttributeProto. Subgraphs are built nested in g.
func (r *reader) attribute(f *pbField, g *Graph, depth int) (*Attribute, error) {
	if err := r.countObject(); err != nil {
		return nil, err
	}
	// d stays on the stack: the closure below does not escape walk.
	d := attrDecoder{r: r, g: g, depth: depth, a: &Attribute{}}
	if err := r.walk(f.b, f.off, func(h *pbField) error { return d.field(h) }); err != nil {
		return nil, err
	}
	return d.finish(), nil
}

// attrDecoder is the state of decoding one AttributeProto: the value
// fields are collected first, and the type (given or inferred) decides at
// the end which of them the Attribute keeps.
type attrDecoder struct {
	r     *reader
	g     *Graph // parent of the attribute's subgraphs
	depth int
	a     *Attribute

	typeSet bool
	seen    [24]bool // which value fields occurred, to infer a missing type
	tp      string   // TYPE_PROTO value, serialized
	tps     []string // TYPE_PROTOS values, serialized
}

// field decodes one field of the AttributeProto. The scalar fields, which
// make up nearly all attributes of a big model, are handled inline; the
// nested messages go to helpers.
func (d *attrDecoder) field(h *pbField) error {
	r, a := d.r, d.a
	var err error
	if int(h.num) < len(d.seen) && h.num > 0 {
		d.seen[h.num] = true
	}
	switch h.num {
	case 1:
		a.Name, err = r.internStr(h, "name")
	case 20:
		err = r.wantType(h, protowire.VarintType, "type")
		a.Type = AttrType(int32(h.x))
		d.typeSet = true
	case 21:
		var ref string
		ref, err = r.str(h, "ref_attr_name")
		a.SetRefAttrName(ref)
	case 13:
		var doc string
		doc, err = r.str(h, "doc_string")
		a.SetDoc(doc)
	case 2:
		err = r.wantType(h, protowire.Fixed32Type, "f")
		a.F = float64(math.Float32frombits(uint32(h.x)))
	case 3:
		err = r.wantType(h, protowire.VarintType, "i")
		a.I = int64(h.x)
	case 4:
		a.S, err = r.str(h, "s")
	case 7:
		a.Floats, err = r.appendFloats(a.Floats, h)
	case 8:
		a.Ints, _, err = r.appendInts(a.Ints, h, math.MaxInt)
	case 9:
		var s string
		s, err = r.str(h, "strings")
		a.Strings = append(a.Strings, s)
	case 14, 15:
		err = d.typeProtoField(h)
	case 5, 22, 10, 23:
		err = d.tensorField(h)
	case 6, 11:
		err = d.graphField(h)
	}
	return err
}

// typeProtoField checks a TypeProto value (tp, 14, or one of
// type_protos, 15) and keeps it serialized (see Attribute.TypeProto).
func (d *attrDecoder) typeProtoField(h *pbField) error {
	r := d.r
	if h.num == 14 {
		tp, err := r.str(h, "tp")
		if err != nil {
			return err
		}
		d.tp = tp
		r.push("tp", -1)
		_, err = r.typeProto(h.b, h.off, 0)
		r.pop()
		return err
	}
	s, err := r.str(h, "type_protos")
	if err != nil {
		return err
	}
	r.push("type_protos", len(d.a.Strings))
	_, err = r.typeProto(h.b, h.off, 0)
	r.pop()
	d.tps = append(d.tps, s)
	return err
}

// tensorField decodes a tensor value: t (5), sparse_tensor (22), or one
// of tensors (10) or sparse_tensors (23).
func (d *attrDecoder) tensorField(h *pbField) error {
	r, a := d.r, d.a
	sparse := h.num == 22 || h.num == 23
	if h.num == 5 || h.num == 22 {
		field := "t"
		if sparse {
			field = "sparse_tensor"
		}
		if err := r.wantType(h, protowire.BytesType, field); err != nil {
			return err
		}
		var err error
		r.push(field, -1)
		if sparse {
			a.T, err = r.sparseTensor(h.b, h.off)
		} else {
			a.T, err = r.tensor(h.b, h.off)
		}
		r.pop()
		return err
	}
	if err := r.wantType(h, protowire.BytesType, "tensors"); err != nil {
		return err
	}
	if err := r.countObject(); err != nil {
		return err
	}
	r.push("tensors", len(a.Tensors()))
	var t *Tensor
	var err error
	if sparse {
		t, err = r.sparseTensor(h.b, h.off)
	} else {
		t, err = r.tensor(h.b, h.off)
	}
	r.pop()
	a.SetTensors(append(a.Tensors(), t))
	return err
}

// graphField decodes a subgraph value: g (6) or one of graphs (11).
func (d *attrDecoder) graphField(h *pbField) error {
	r, a := d.r, d.a
	field := "g"
	if h.num == 11 {
		field = "graphs"
	}
	if err := r.wantType(h, protowire.BytesType, field); err != nil {
		return err
	}
	if h.num == 6 {
		r.push("g", -1)
		sg, err := r.graph(h.b, h.off, d.g, d.depth+1)
		a.SetG(sg)
		r.pop()
		return err
	}
	if err := r.countObject(); err != nil {
		return err
	}
	r.push("graphs", len(a.Graphs()))
	sg, err := r.graph(h.b, h.off, d.g, d.depth+1)
	r.pop()
	a.SetGraphs(append(a.Graphs(), sg))
	return err
}

// finish settles the attribute's type, inferring it from the fields seen
// when the file gives none, and keeps only the values matching it.
func (d *attrDecoder) finish() *Attribute {
	a := d.a
	if !d.typeSet || a.Type == AttrUndefined {
		a.Type = inferAttrType(d.seen[:])
	}
	switch a.Type {
	case AttrTypeProto:
		a.S = d.tp
	case AttrTypeProtos:
		a.Strings = d.tps
	}
	pruneAttr(a)
	return a
}

// pruneAttr clears the value fields that do not match a's type, as
// "exactly the fields matching Type are set" promises: a file may carry
// stray fields, which onnx ignores too.
func pruneAttr(a *Attribute) {
	keep := *a
	*a = Attribute{Name: keep.Name, Type: keep.Type}
	a.SetRefAttrName(keep.RefAttrName())
	a.SetDoc(keep.Doc())
	switch keep.Type {
	case AttrFloat:
		a.F = keep.F
	case AttrInt:
		a.I = keep.I
	case AttrString, AttrTypeProto:
		a.S = keep.S
	case AttrTensor, AttrSparseTensor:
		a.T = keep.T
	case AttrGraph:
		a.SetG(keep.G())
	case AttrFloats:
		a.Floats = keep.Floats
	case AttrInts:
		a.Ints = keep.Ints
	case AttrStrings, AttrTypeProtos:
		a.Strings = keep.Strings
	case AttrTensors, AttrSparseTensors:
		a.SetTensors(keep.Tensors())
	case AttrGraphs:
		a.SetGraphs(keep.Graphs())
	}
}

// inferAttrType guesses the type of an attribute written without its type
// field (IR version 1 files), from which value field is present.
func inferAttrType(seen []bool) AttrType {
	order := []struct {
		field int
		t     AttrType
	}{{2, AttrFloat}, {3, AttrInt}, {4, AttrString}, {5, AttrTensor}, {6, AttrGraph}, {22, AttrSparseTensor}, {14, AttrTypeProto},
		{7, AttrFloats}, {8, AttrInts}, {9, AttrStrings}, {10, AttrTensors}, {11, AttrGraphs}, {23, AttrSparseTensors}, {15, AttrTypeProtos}}
	for _, o := range order {
		if seen[o.field] {
			return o.t
		}
	}
	return AttrUndefined
}

// appendFloats decodes a repeated float field, packed or not.
func (r *reader) appendFloats(dst []float64, f *pbField) ([]float64, error) {
	switch f.typ {
	case protowire.Fixed32Type:
		return append(dst, float64(math.Float32frombits(uint32(f.x)))), nil
	case protowire.BytesType:
		if len(f.b)%4 != 0 {
			return dst, fmt.Errorf("corrupt protobuf in %s: packed floats of %d bytes", r.where(), len(f.b))
		}
		for i := 0; i+4 <= len(f.b); i += 4 {
			u := uint32(f.b[i]) | uint32(f.b[i+1])<<8 | uint32(f.b[i+2])<<16 | uint32(f.b[i+3])<<24
			dst = append(dst, float64(math.Float32frombits(u)))
		}
		return dst, nil
	}
	return dst, fmt.Errorf("corrupt protobuf in %s: float field has wire type %d", r.where(), f.typ)
}

// function decodes a FunctionProto. Its body is a graph without a parent
// whose inputs and outputs are the formal parameters (untyped).
func (r *reader) function(f *pbField, idx int) (*Function, error) {
	r.push("functions", idx)
	defer r.pop()
	fn := &Function{}
	var inputs, outputs []string
	var nodes []span
	var valueInfo, attrProtos []pbField
	err := r.walk(f.b, f.off, func(h *pbField) error {
		var err error
		switch h.num {
		case 1:
			fn.Name, err = r.str(h, "name")
		case 4:
			var s string
			s, err = r.str(h, "input")
			inputs = append(inputs, s)
		case 5:
			var s string
			s, err = r.str(h, "output")
			outputs = append(outputs, s)
		case 6:
			var s string
			s, err = r.str(h, "attribute")
			fn.AttrNames = append(fn.AttrNames, s)
		case 7:
			if err = r.wantType(h, protowire.BytesType, "node"); err == nil {
				if err = r.countNode(); err == nil {
					nodes = append(nodes, spanOf(h))
				}
			}
		case 8:
			fn.Doc, err = r.str(h, "doc_string")
		case 9:
			var o OpsetImport
			o, err = r.opset(h, len(fn.Opsets))
			fn.Opsets = append(fn.Opsets, o)
		case 10:
			fn.Domain, err = r.str(h, "domain")
			fn.Domain = normDomain(fn.Domain)
		case 11:
			if err = r.wantType(h, protowire.BytesType, "attribute_proto"); err == nil {
				attrProtos = append(attrProtos, *h)
			}
		case 12:
			if err = r.wantType(h, protowire.BytesType, "value_info"); err == nil {
				valueInfo = append(valueInfo, *h)
			}
		case 13:
			fn.Overload, err = r.str(h, "overload")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	body := NewGraph(fn.Name)
	fn.Body = body
	for _, name := range inputs {
		if name == "" {
			continue // ONNX allows no omitted formal inputs; tolerate
		}
		v, err := body.NewValue(name)
		if err != nil {
			return nil, fmt.Errorf("function %q lists input %q twice", fn.Name, name)
		}
		body.AddInput(v)
	}
	err = r.each("attribute_proto", len(attrProtos), func(i int) error {
		a, err := r.attribute(&attrProtos[i], body, 0)
		if err == nil {
			fn.AttrDefaults = append(fn.AttrDefaults, a)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := r.nodes2graph(body, nodes, 0); err != nil {
		return nil, fmt.Errorf("function %q: %w", fn.Name, err)
	}
	for _, name := range outputs {
		v := body.Lookup(name)
		if v == nil {
			return nil, fmt.Errorf("function %q output %q is not produced by any node", fn.Name, name)
		}
		body.AddOutput(v)
	}
	err = r.each("value_info", len(valueInfo), func(i int) error {
		name, ti, err := r.valueInfo(&valueInfo[i], 0)
		if err == nil && ti != nil {
			body.ValueInfo[name] = *ti
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := body.Toposort(); err != nil {
		return nil, fmt.Errorf("function %q: %w", fn.Name, err)
	}
	return fn, nil
}

// nameUnnamedNodes gives every node without a name a unique one, so
// reports and errors can refer to it. Names already in the model are never
// changed. A main-graph node gets the name onnxruntime gives it in its
// profiles, "<OpType>_<i>" with i its position among the graph's nodes
// less its Constant nodes, which onnxruntime turns into initializers as it
// loads (measured: unnamed SqueezeNet, ResNet-18 and Transformer-encoder
// exports profiled with onnxruntime 1.23 name their nodes so, optimised or
// not), so that `calibrate --profile` matches such a model by name; other
// nodes (Constants, subgraph and function bodies, a name already taken)
// get "<OpType>_<n>" with n counting in graph order. Reading the same file
// twice gives the same names.
func nameUnnamedNodes(m *Model) {
	if !anyUnnamed(m.Graph) && !slices.ContainsFunc(m.Functions, func(f *Function) bool { return anyUnnamed(f.Body) }) {
		return // the usual case: no name table to build
	}
	used := map[string]bool{}
	var graphs []*Graph
	var collect func(g *Graph)
	collect = func(g *Graph) {
		graphs = append(graphs, g)
		for _, n := range g.Nodes {
			if n.Name != "" {
				used[n.Name] = true
			}
			for _, sg := range n.Subgraphs() {
				collect(sg)
			}
		}
	}
	collect(m.Graph)
	for _, f := range m.Functions {
		collect(f.Body)
	}
	i := 0
	for _, n := range m.Graph.Nodes {
		if n.Domain == "" && n.OpType == "Constant" {
			continue
		}
		if name := fmt.Sprintf("%s_%d", n.OpType, i); n.Name == "" && !used[name] {
			n.Name = name
			used[name] = true
		}
		i++
	}
	seq := 0
	for _, g := range graphs {
		for _, n := range g.Nodes {
			if n.Name != "" {
				continue
			}
			for {
				seq++
				name := fmt.Sprintf("%s_%d", n.OpType, seq)
				if !used[name] {
					n.Name = name
					used[name] = true
					break
				}
			}
		}
	}
}

// anyUnnamed reports whether a node of g or of its subgraphs has no name.
func anyUnnamed(g *Graph) bool {
	for _, n := range g.Nodes {
		if n.Name == "" {
			return true
		}
		if n.hasSubgraphs() {
			for _, sg := range n.Subgraphs() {
				if anyUnnamed(sg) {
					return true
				}
			}
		}
	}
	return false
}

// statModel reports a clear error for a path that is not a readable file.
func statModel(path string) (os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		// The caller names the path; the PathError would name it again
		// ("x.onnx: stat x.onnx: no such file or directory").
		return nil, safefile.Reason(err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("is a directory, not an ONNX file")
	}
	if err := safefile.CheckRegular(fi); err != nil {
		return nil, fmt.Errorf("is %v", err)
	}
	return fi, nil
}

// openModel opens the model file at path, with its FileInfo taken from
// the open descriptor. The open never blocks: a named pipe put in the
// file's place after statModel is refused like one found there.
func openModel(path string) (*os.File, os.FileInfo, error) {
	if _, err := statModel(path); err != nil {
		return nil, nil, err
	}
	f, fi, err := safefile.Open(path)
	if errors.Is(err, safefile.ErrNotRegular) {
		return nil, nil, fmt.Errorf("is %v", errors.Unwrap(err))
	}
	return f, fi, err
}
