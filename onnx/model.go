// Package onnx loads ONNX models (.onnx files, as torch.onnx.export writes
// them) and runs them with ember's ops on any ember device.
//
//	m, err := onnx.Load("resnet18.onnx")
//	out, err := m.Run(map[string]*ember.Tensor{"input": x}) // x on cpu or cuda:0
//
// Models are parsed with Go code generated from ONNX's onnx.proto
// (onnx/internal/onnxpb, made by scripts/gen_onnx_proto.sh). Opsets 7 to 18
// of the default domain are accepted; an operator ember does not implement is
// an *UnsupportedError naming the node and op type, reported by Load/Parse
// before anything runs.
//
// Files are treated as hostile, as in package weights: a parse never
// materialises more than the load limit (16 × the input's size plus its
// external data, at least 16 MiB; SetLoadLimit overrides it), every dimension
// is checked against the data it claims before anything is allocated, and an
// op that would create more than MaxElements elements at run time is refused
// with an error instead of exhausting memory. Control flow (If, Loop, Scan)
// runs subgraphs that see the values of their enclosing graphs; nesting is
// bounded by the protobuf recursion limit, the nodes of all subgraphs by
// MaxNodes, the iterations of one Run by MaxIterations, and the elements
// of a loop's scan output or of a sequence, all together, by MaxElements.
package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/emberml/ember"
	pb "github.com/emberml/ember/onnx/internal/onnxpb"
	"google.golang.org/protobuf/proto"
)

// Opset range of the default ("" / "ai.onnx") domain that Load accepts.
// Opsets 7 to 18 are the target; the older opsets that early PyTorch
// exports use (1 to 6) run too, with their legacy attributes (the
// broadcast/axis of binary ops, Pad's paddings, Concat's default axis).
const (
	MinOpset = 1
	MaxOpset = 18
)

// MaxElements bounds the elements of any one tensor an op creates while a
// model runs (ConstantOfShape, Expand, Tile, Range, Resize, Pad...): a
// hostile model cannot ask for more. 1<<31 elements is 8 GiB of float32.
var MaxElements = int64(1) << 31

// MaxNodes bounds a graph's node count (after parsing).
const MaxNodes = 1 << 20

// FormatError is a malformed or inconsistent model file.
type FormatError struct {
	Msg string
}

func (e *FormatError) Error() string { return "onnx: " + e.Msg }

// UnsupportedError is an operator (or type) ember cannot run.
type UnsupportedError struct {
	Node   string // node name (may be empty)
	OpType string
	Domain string
	Msg    string // a reason, when it is not simply a missing op
}

func (e *UnsupportedError) Error() string {
	s := fmt.Sprintf("onnx: unsupported op %s", e.OpType)
	if e.Domain != "" && e.Domain != "ai.onnx" {
		s = fmt.Sprintf("onnx: unsupported op %s (domain %s)", e.OpType, e.Domain)
	}
	if e.Node != "" {
		s += fmt.Sprintf(" in node %q", e.Node)
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

// NodeError is an error raised while running (or folding) one node.
type NodeError struct {
	Node   string
	OpType string
	Err    error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("onnx: node %q (%s): %v", e.Node, e.OpType, e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }

func formatErr(f string, a ...any) error { return &FormatError{Msg: fmt.Sprintf(f, a...)} }

var (
	limitMu   sync.Mutex
	loadLimit int64
)

// SetLoadLimit sets the most bytes one Load/Parse may materialise (tensor
// data after widening, external data); 0 restores the default (16 × the
// file's size, at least 16 MiB).
func SetLoadLimit(bytes int64) {
	limitMu.Lock()
	loadLimit = bytes
	limitMu.Unlock()
}

func limitFor(size int64) int64 {
	limitMu.Lock()
	l := loadLimit
	limitMu.Unlock()
	if l > 0 {
		return l
	}
	l = 16 * size
	if l < 16<<20 {
		l = 16 << 20
	}
	return l
}

// ValueInfo describes one graph input or output.
type ValueInfo struct {
	Name  string
	DType string   // ONNX's element type name: "float32", "int64", ... ("" if not a tensor)
	Dims  []int64  // -1 for a symbolic or unknown dimension; nil: unknown rank
	Syms  []string // the symbolic names (dim_param), "" where the dimension is fixed
	Kind  string   // "tensor", "sequence", "map", "optional", "sparse_tensor"
}

// String formats the value as name: dtype[dims].
func (v ValueInfo) String() string {
	var dims []string
	for i, d := range v.Dims {
		switch {
		case v.Syms != nil && v.Syms[i] != "":
			dims = append(dims, v.Syms[i])
		case d < 0:
			dims = append(dims, "?")
		default:
			dims = append(dims, fmt.Sprint(d))
		}
	}
	s := v.Name + ": "
	if v.Kind != "" && v.Kind != "tensor" {
		s += v.Kind + " of "
	}
	if v.Dims == nil {
		return s + v.DType + "[...]"
	}
	return s + v.DType + "[" + strings.Join(dims, ", ") + "]"
}

// Model is a parsed ONNX model, ready to Run. A Model may be run by several
// goroutines at once.
type Model struct {
	Opset      int64
	IRVersion  int64
	Producer   string
	GraphName  string
	Inputs     []ValueInfo // the graph inputs that are not initializers
	Outputs    []ValueInfo
	g          *graph
	consts     map[string]*ember.Tensor // initializers and folded constants, on the CPU
	mu         sync.Mutex
	onDevice   map[ember.Device]map[string]*ember.Tensor
	histogram  map[string]int
	unsupportd []*UnsupportedError
}

// Load reads an .onnx file; external data is resolved relative to its folder.
func Load(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parse(b, filepath.Dir(path), false)
}

// Parse parses a model held in memory. Tensors with external data are an
// error (use Load, which knows the file's folder).
func Parse(b []byte) (*Model, error) { return parse(b, "", false) }

// Inspect parses a model like Load but does not fail on unsupported ops: the
// model describes itself (Ops, Unsupported) but Run fails. For `ember onnx info`.
func Inspect(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parse(b, filepath.Dir(path), true)
}

func parse(b []byte, dir string, lenient bool) (m *Model, err error) {
	mp := &pb.ModelProto{}
	if err := (proto.UnmarshalOptions{RecursionLimit: 64}).Unmarshal(b, mp); err != nil {
		return nil, formatErr("not a valid ONNX model (protobuf): %v", err)
	}
	if mp.Graph == nil {
		return nil, formatErr("the model has no graph")
	}
	m = &Model{IRVersion: mp.GetIrVersion(), Producer: strings.TrimSpace(mp.GetProducerName() + " " + mp.GetProducerVersion()),
		GraphName: mp.Graph.GetName(), onDevice: map[ember.Device]map[string]*ember.Tensor{}}
	m.Opset = -1
	for _, o := range mp.OpsetImport {
		if d := o.GetDomain(); d == "" || d == "ai.onnx" {
			m.Opset = o.GetVersion()
		}
	}
	if m.Opset < 0 {
		if len(mp.OpsetImport) == 0 && mp.GetIrVersion() <= 3 {
			m.Opset = 1
		} else {
			m.Opset = MinOpset
		}
	}
	if !lenient && (m.Opset < MinOpset || m.Opset > MaxOpset) {
		return nil, &UnsupportedError{OpType: "opset", Msg: fmt.Sprintf("opset %d; ember runs opsets %d to %d", m.Opset, MinOpset, MaxOpset)}
	}
	budget := &budget{left: limitFor(int64(len(b)))}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				panic(r)
			}
			m, err = nil, e
		}
	}()
	m.g, err = newGraph(mp.Graph, m.Opset, dir, budget, nil)
	if err != nil {
		return nil, err
	}
	m.consts = m.g.consts
	for _, vi := range mp.Graph.Input {
		if _, ok := m.g.initNames[vi.GetName()]; ok {
			continue
		}
		m.Inputs = append(m.Inputs, describe(vi))
	}
	for _, vi := range mp.Graph.Output {
		m.Outputs = append(m.Outputs, describe(vi))
	}
	m.histogram = map[string]int{}
	m.g.walk(func(g *graph) {
		for _, n := range g.nodes {
			m.histogram[n.opType]++
		}
	})
	m.unsupportd = m.g.unsupported
	if len(m.unsupportd) > 0 && !lenient {
		return nil, m.unsupportd[0]
	}
	if !lenient {
		if err := m.g.fold(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Ops returns the op histogram: how many nodes of each op type the graph
// has, its subgraphs' (If's branches, Loop's and Scan's bodies) included.
func (m *Model) Ops() map[string]int { return m.histogram }

// Unsupported lists the nodes whose op ember cannot run (empty for a model
// from Load or Parse, which refuse such models).
func (m *Model) Unsupported() []*UnsupportedError { return m.unsupportd }

// OpTypes returns the op types in the graph, sorted.
func (m *Model) OpTypes() []string {
	var s []string
	for k := range m.histogram {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

func describe(vi *pb.ValueInfoProto) ValueInfo {
	v := ValueInfo{Name: vi.GetName()}
	t := vi.GetType()
	switch {
	case t == nil:
	case t.GetTensorType() != nil:
		v.Kind = "tensor"
		tt := t.GetTensorType()
		v.DType = dtypeName(tt.GetElemType())
		if sh := tt.GetShape(); sh != nil {
			v.Dims = make([]int64, len(sh.Dim))
			v.Syms = make([]string, len(sh.Dim))
			for i, d := range sh.Dim {
				v.Dims[i] = -1
				if dv, ok := d.GetValue().(*pb.TensorShapeProto_Dimension_DimValue); ok {
					v.Dims[i] = dv.DimValue
				} else if dp, ok := d.GetValue().(*pb.TensorShapeProto_Dimension_DimParam); ok {
					v.Syms[i] = dp.DimParam
				}
			}
		}
	case t.GetSequenceType() != nil:
		v.Kind = "sequence"
		if et := t.GetSequenceType().GetElemType().GetTensorType(); et != nil {
			v.DType = dtypeName(et.GetElemType())
		}
	case t.GetMapType() != nil:
		v.Kind = "map"
	case t.GetOptionalType() != nil:
		v.Kind = "optional"
		e := t.GetOptionalType().GetElemType()
		if s := e.GetSequenceType(); s != nil {
			e = s.GetElemType()
		}
		if et := e.GetTensorType(); et != nil {
			v.DType = dtypeName(et.GetElemType())
		}
	case t.GetSparseTensorType() != nil:
		v.Kind = "sparse_tensor"
	}
	return v
}

// constsOn returns the model's constants on dev (copied once per device).
func (m *Model) constsOn(dev ember.Device) map[string]*ember.Tensor {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.onDevice[dev]; ok {
		return c
	}
	c := make(map[string]*ember.Tensor, len(m.consts))
	for k, t := range m.consts {
		c[k] = t.To(dev)
	}
	m.g.prepare(dev)
	m.onDevice[dev] = c
	return c
}

// Run runs the graph on the device of its inputs (the CPU when there are
// none) and returns every graph output by name. It runs under ember.NoGrad;
// intermediates are released as soon as their last consumer has run. Inputs
// must cover every graph input that has no initializer, with the dtype and
// shape the graph declares (an ember Int32 tensor for the narrow integer
// types, as ReadTensorFile makes); a panic of an ember op (a shape or
// dtype mismatch) is returned as a *NodeError.
func (m *Model) Run(inputs map[string]*ember.Tensor) (map[string]*ember.Tensor, error) {
	out, seqs, err := m.RunSequences(inputs, nil)
	if err != nil {
		return nil, err
	}
	for k := range seqs {
		return nil, fmt.Errorf("onnx: output %q is a sequence of tensors: use RunSequences", k)
	}
	return out, nil
}

// RunSequences is Run for graphs whose inputs or outputs include
// sequences of tensors (ONNX's sequence type): seqs holds the sequence
// inputs (on the device of the others), and the sequence outputs come back
// in the second map, the tensor outputs in the first. An optional input
// (ONNX's optional type) is passed in either map, or left out when empty;
// an empty optional output is absent from both.
func (m *Model) RunSequences(inputs map[string]*ember.Tensor, seqs map[string][]*ember.Tensor) (map[string]*ember.Tensor, map[string][]*ember.Tensor, error) {
	if m.g == nil || len(m.unsupportd) > 0 {
		if len(m.unsupportd) > 0 {
			return nil, nil, m.unsupportd[0]
		}
		return nil, nil, errors.New("onnx: model not loaded")
	}
	dev := ember.CPU
	first := true
	onDev := func(name string, t *ember.Tensor) error {
		if t == nil {
			return fmt.Errorf("onnx: input %q holds a nil tensor", name)
		}
		if first {
			dev, first = t.Device(), false
		} else if t.Device() != dev {
			return fmt.Errorf("onnx: input %q is on %v, others on %v", name, t.Device(), dev)
		}
		return nil
	}
	for _, in := range m.Inputs {
		if in.Kind == "optional" {
			if t, ok := inputs[in.Name]; ok {
				if err := onDev(in.Name, t); err != nil {
					return nil, nil, err
				}
			}
			for _, t := range seqs[in.Name] {
				if err := onDev(in.Name, t); err != nil {
					return nil, nil, err
				}
			}
			continue
		}
		if in.Kind == "sequence" {
			ts, ok := seqs[in.Name]
			if !ok {
				return nil, nil, fmt.Errorf("onnx: missing input %q (%s; a sequence: pass it to RunSequences)", in.Name, in)
			}
			for _, t := range ts {
				if err := onDev(in.Name, t); err != nil {
					return nil, nil, err
				}
				if want, ok := inputType(in.DType); ok && t.DType() != want {
					return nil, nil, fmt.Errorf("onnx: input %q holds %v tensors, the model wants %s (ember %v)", in.Name, t.DType(), in, want)
				}
			}
			continue
		}
		t, ok := inputs[in.Name]
		if !ok || t == nil {
			return nil, nil, fmt.Errorf("onnx: missing input %q (%s)", in.Name, in)
		}
		if err := onDev(in.Name, t); err != nil {
			return nil, nil, err
		}
		if err := checkInput(in, t); err != nil {
			return nil, nil, err
		}
	}
	for name := range inputs {
		if !m.g.isInput(name) {
			return nil, nil, fmt.Errorf("onnx: %q is not an input of the graph (inputs: %v)", name, m.inputNames())
		}
	}
	for name := range seqs {
		if !m.g.isInput(name) {
			return nil, nil, fmt.Errorf("onnx: %q is not an input of the graph (inputs: %v)", name, m.inputNames())
		}
	}
	feed := make(map[string]val, len(inputs)+len(seqs))
	for k, t := range inputs {
		feed[k] = tval(t)
	}
	for k, ts := range seqs {
		feed[k] = seqval(append([]*ember.Tensor(nil), ts...)) // ours to append to
	}
	for _, in := range m.Inputs {
		if in.Kind == "optional" {
			v := feed[in.Name]
			v.opt = true
			feed[in.Name] = v
		}
	}
	var out map[string]val
	var err error
	ember.NoGrad(func() {
		out, err = m.g.run(feed, m.constsOn(dev), dev, &runCtx{dev: dev})
	})
	if err != nil {
		return nil, nil, err
	}
	ts, ss := map[string]*ember.Tensor{}, map[string][]*ember.Tensor{}
	for k, v := range out {
		if v.opt && v.empty() {
			continue
		}
		if v.isSeq {
			ss[k] = v.seq[:len(v.seq):len(v.seq)]
		} else {
			ts[k] = v.t
		}
	}
	return ts, ss, nil
}

func (m *Model) inputNames() []string {
	var s []string
	for _, in := range m.Inputs {
		s = append(s, in.Name)
	}
	return s
}

func checkInput(in ValueInfo, t *ember.Tensor) error {
	if want, ok := inputType(in.DType); ok && t.DType() != want {
		return fmt.Errorf("onnx: input %q is %v, the model wants %s (an ember %v tensor)", in.Name, t.DType(), in, want)
	}
	if in.Dims != nil {
		sh := t.Shape()
		if len(sh) != len(in.Dims) {
			return fmt.Errorf("onnx: input %q has shape %v, the model wants %s", in.Name, sh, in)
		}
		for i, d := range in.Dims {
			if d >= 0 && int64(sh[i]) != d {
				return fmt.Errorf("onnx: input %q has shape %v, the model wants %s", in.Name, sh, in)
			}
		}
	}
	return nil
}
