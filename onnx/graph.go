package onnx

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/emberml/ember"
	pb "github.com/emberml/ember/onnx/internal/onnxpb"
)

// node is one graph node, bound to its implementation.
type node struct {
	name, opType, domain string
	inputs, outputs      []string
	attrs                map[string]*pb.AttributeProto
	opset                int64
	fn                   opFunc
	folding              bool // running at load time: stricter element limit

	// Control flow (If, Loop, Scan): the subgraphs by attribute name, and
	// ctl in place of fn. inputs holds the declared inputs (the first
	// nIn) followed by the outer-scope values the subgraphs read, so that
	// the graph orders and keeps them like any other input.
	subs map[string]*graph
	nIn  int
	ctl  ctlFunc
	vfn  seqFunc // sequence ops, in place of fn
}

func (n *node) label() string {
	if n.name != "" {
		return n.name
	}
	if len(n.outputs) > 0 {
		return n.outputs[0]
	}
	return n.opType
}

type graph struct {
	nodes       []*node // topologically sorted
	inputs      map[string]bool
	initNames   map[string]bool
	consts      map[string]*ember.Tensor
	outputs     []string
	unsupported []*UnsupportedError
	uses        map[string]int     // consumers of each value (+1 for graph outputs)
	static      map[string][]int64 // graph inputs whose declared dims are all fixed

	// subgraphs only: the names of enclosing scopes visible inside (nil
	// for the main graph), the ones this graph (or a graph nested in it)
	// reads, its declared inputs in order, and its constants per device
	outer     func(string) bool
	free      []string
	inNames   []string
	devMu     sync.Mutex
	devConsts map[ember.Device]map[string]*ember.Tensor
}

func (g *graph) isInput(name string) bool { return g.inputs[name] && !g.initNames[name] }

// newGraph builds a graph; outer is nil for a model's main graph and, for
// a subgraph (an attribute of If, Loop or Scan), reports the names the
// enclosing graphs define. The budget's node count spans all subgraphs.
func newGraph(gp *pb.GraphProto, opset int64, dir string, bud *budget, outer func(string) bool) (*graph, error) {
	if bud.nodes += len(gp.Node); bud.nodes > MaxNodes {
		return nil, formatErr("%d nodes (counting subgraphs), more than %d", bud.nodes, MaxNodes)
	}
	g := &graph{inputs: map[string]bool{}, initNames: map[string]bool{}, consts: map[string]*ember.Tensor{}, uses: map[string]int{}, outer: outer}
	for _, it := range gp.Initializer {
		if it.GetName() == "" {
			return nil, formatErr("an initializer has no name")
		}
		if g.initNames[it.GetName()] {
			return nil, formatErr("initializer %q appears twice", it.GetName())
		}
		t, err := tensorFromProto(it, dir, bud)
		if err != nil {
			return nil, err
		}
		g.initNames[it.GetName()] = true
		g.consts[it.GetName()] = t
	}
	if len(gp.SparseInitializer) > 0 {
		return nil, &UnsupportedError{OpType: "sparse initializer", Msg: "sparse tensors"}
	}
	g.static = map[string][]int64{}
	for _, vi := range gp.Input {
		g.inputs[vi.GetName()] = true
		g.inNames = append(g.inNames, vi.GetName())
		if d := describe(vi); d.Dims != nil && !g.initNames[vi.GetName()] && outer == nil { // Run checks these dims
			fixed := true
			for _, x := range d.Dims {
				fixed = fixed && x >= 0
			}
			if fixed {
				g.static[vi.GetName()] = d.Dims
			}
		}
		if g.initNames[vi.GetName()] {
			continue
		}
		t := vi.GetType()
		if o := t.GetOptionalType(); o != nil {
			t = o.GetElemType()
		}
		if t != nil && t.GetSequenceType() != nil && t.GetSequenceType().GetElemType().GetTensorType() != nil {
			if _, err := emberType(t.GetSequenceType().GetElemType().GetTensorType().GetElemType()); err != nil {
				e := err.(*UnsupportedError)
				e.Msg = fmt.Sprintf("input %q: %s", vi.GetName(), e.Msg)
				return nil, e
			}
		} else if t != nil && t.GetTensorType() == nil {
			d := describe(vi)
			return nil, &UnsupportedError{OpType: d.Kind + " input", Msg: fmt.Sprintf("input %q is a %s; ember runs tensors, sequences of tensors and optionals of those", vi.GetName(), d.Kind)}
		} else if t != nil {
			if _, err := emberType(t.GetTensorType().GetElemType()); err != nil {
				e := err.(*UnsupportedError)
				e.Msg = fmt.Sprintf("input %q: %s", vi.GetName(), e.Msg)
				return nil, e
			}
		}
	}
	producer := map[string]int{}
	for i, np := range gp.Node {
		n := &node{name: np.GetName(), opType: np.GetOpType(), domain: np.GetDomain(), inputs: append([]string(nil), np.GetInput()...), outputs: np.GetOutput(),
			attrs: map[string]*pb.AttributeProto{}, opset: opset}
		for _, a := range np.Attribute {
			n.attrs[a.GetName()] = a
		}
		for _, o := range n.outputs {
			if o == "" {
				continue
			}
			if _, dup := producer[o]; dup || g.inputs[o] && !g.initNames[o] {
				return nil, formatErr("value %q is produced twice (node %q)", o, n.label())
			}
			producer[o] = i
		}
		n.nIn = len(n.inputs)
		n.fn = lookup(n)
		if n.ctl = lookupCtl(n); n.ctl != nil {
			n.fn = func(*node, []*ember.Tensor) []*ember.Tensor { panic("onnx: control flow runs through ctl") }
		}
		if n.vfn = lookupSeq(n); n.vfn != nil {
			n.fn = func(*node, []*ember.Tensor) []*ember.Tensor { panic("onnx: sequence ops run through vfn") }
		}
		if n.fn == nil {
			g.unsupported = append(g.unsupported, &UnsupportedError{Node: n.label(), OpType: n.opType, Domain: n.domain, Msg: unsupportedReason(n.opType)})
		}
		if n.opType == "Constant" && n.fn != nil {
			if err := constantNode(n, dir, bud); err != nil {
				return nil, err
			}
		}
		g.nodes = append(g.nodes, n)
	}
	for _, o := range gp.Output {
		g.outputs = append(g.outputs, o.GetName())
	}
	if err := g.subgraphs(gp, producer, opset, dir, bud); err != nil {
		return nil, err
	}
	if err := g.sort(producer); err != nil {
		return nil, err
	}
	for _, n := range g.nodes {
		for _, in := range n.inputs {
			if in != "" {
				g.uses[in]++
			}
		}
	}
	for _, o := range g.outputs {
		g.uses[o]++
		if _, ok := producer[o]; !ok && !g.inputs[o] && g.consts[o] == nil {
			if g.outer == nil || !g.outer(o) {
				return nil, formatErr("graph output %q is produced by no node", o)
			}
			g.addFree(o)
		}
	}
	return g, nil
}

// sort orders the nodes topologically (Kahn), refusing cycles and values
// that nothing produces.
func (g *graph) sort(producer map[string]int) error {
	n := len(g.nodes)
	indeg := make([]int, n)
	next := make([][]int, n)
	for i, nd := range g.nodes {
		for _, in := range nd.inputs {
			if in == "" {
				continue
			}
			p, ok := producer[in]
			if !ok {
				if g.inputs[in] || g.consts[in] != nil {
					continue
				}
				if g.initNames[in] {
					continue
				}
				if g.outer != nil && g.outer(in) {
					g.addFree(in)
					continue
				}
				return formatErr("node %q (%s) reads %q, which is no graph input, initializer or node output (a missing initializer?)", nd.label(), nd.opType, in)
			}
			indeg[i]++
			next[p] = append(next[p], i)
		}
	}
	var order []*node
	queue := []int{}
	for i := range indeg {
		if indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		order = append(order, g.nodes[i])
		for _, j := range next[i] {
			if indeg[j]--; indeg[j] == 0 {
				queue = append(queue, j)
			}
		}
	}
	if len(order) != n {
		var stuck []string
		for i := range indeg {
			if indeg[i] > 0 && len(stuck) < 5 {
				stuck = append(stuck, fmt.Sprintf("%q (%s)", g.nodes[i].label(), g.nodes[i].opType))
			}
		}
		return formatErr("the graph has a cycle through nodes %s", strings.Join(stuck, ", "))
	}
	g.nodes = order
	return nil
}

func (g *graph) addFree(name string) {
	for _, f := range g.free {
		if f == name {
			return
		}
	}
	g.free = append(g.free, name)
}

// subgraphs builds the graph attributes of the nodes of g, whose scope
// (inputs, initializers, node outputs, then the enclosing scopes) they
// see, and appends the outer values each reads to its node's inputs.
func (g *graph) subgraphs(gp *pb.GraphProto, producer map[string]int, opset int64, dir string, bud *budget) error {
	visible := func(name string) bool {
		if _, ok := producer[name]; ok || g.inputs[name] || g.initNames[name] {
			return true
		}
		return g.outer != nil && g.outer(name)
	}
	for i, np := range gp.Node {
		n := g.nodes[i]
		for _, a := range np.Attribute {
			var gs []*pb.GraphProto
			switch {
			case a.GetG() != nil:
				gs = append(gs, a.GetG())
			case len(a.GetGraphs()) > 0:
				gs = a.GetGraphs()
			default:
				continue
			}
			if len(gs) != 1 || n.ctl == nil && n.fn != nil {
				if n.fn == nil {
					continue // already reported unsupported
				}
				return &UnsupportedError{Node: n.label(), OpType: n.opType, Msg: fmt.Sprintf("graph attribute %q", a.GetName())}
			}
			sub, err := newGraph(gs[0], opset, dir, bud, visible)
			if err != nil {
				return err
			}
			if n.subs == nil {
				n.subs = map[string]*graph{}
			}
			n.subs[a.GetName()] = sub
			g.unsupported = append(g.unsupported, sub.unsupported...)
			for _, f := range sub.free {
				dup := false
				for _, in := range n.inputs[n.nIn:] {
					dup = dup || in == f
				}
				if !dup {
					n.inputs = append(n.inputs, f)
				}
			}
		}
	}
	return nil
}

// foldable ops: deterministic, and cheap enough to run at load time.
var noFold = map[string]bool{"RandomNormal": true, "RandomUniform": true, "RandomNormalLike": true, "RandomUniformLike": true,
	"Bernoulli": true, "Multinomial": true}

// maxFoldElements bounds what a folded constant may hold, and
// maxFoldInput the elements of the inputs of a node folded at load time, so
// that folding stays cheap whatever the file asks for (shape arithmetic is
// tiny; bigger constant subgraphs simply run at Run time).
const (
	maxFoldElements = 1 << 20
	maxFoldInput    = 1 << 16
)

// fold evaluates, at load time on the CPU, every node whose inputs are all
// constants — initializers, Constant nodes, the Shape of a graph input whose
// declared dims are all fixed, and what they feed — such as the shape
// arithmetic torch.onnx.export writes (Shape → Gather → Unsqueeze → Concat →
// Reshape) when the shapes are fixed. Folded nodes are dropped.
func (g *graph) fold() error {
	var kept []*node
	var err error
	ember.NoGrad(func() {
		for _, n := range g.nodes {
			if sh, isStatic := g.static[first(n.inputs)]; n.opType == "Shape" && isStatic && len(n.outputs) == 1 {
				// the shape of an input with fixed dims (Run checks them)
				r := int64(len(sh))
				st, en := n.int("start", 0), n.int("end", r)
				if st < 0 {
					st += r
				}
				if en < 0 {
					en += r
				}
				st, en = max(0, min(st, r)), max(0, min(en, r))
				en = max(en, st)
				g.consts[n.outputs[0]] = ember.FromSlice(append([]int64{}, sh[st:en]...), ember.Shape{int(en - st)})
				continue
			}
			ok := !noFold[n.opType] && n.ctl == nil && n.vfn == nil && len(n.outputs) > 0
			var ins []*ember.Tensor
			for _, in := range n.inputs {
				if in == "" {
					ins = append(ins, nil)
					continue
				}
				t := g.consts[in]
				if t == nil || t.NumElements() > maxFoldInput {
					ok = false
					break
				}
				ins = append(ins, t)
			}
			if !ok {
				kept = append(kept, n)
				continue
			}
			n.folding = true
			outs, e := runNode(n, ins)
			n.folding = false
			var le *limitError
			if errors.As(e, &le) { // too big to fold: it runs at Run time
				kept = append(kept, n)
				continue
			}
			if e != nil {
				err = e
				return
			}
			small := true
			for _, o := range outs {
				if o != nil && o.NumElements() > maxFoldElements {
					small = false
				}
			}
			if !small {
				kept = append(kept, n)
				continue
			}
			for i, o := range outs {
				if i < len(n.outputs) && n.outputs[i] != "" && o != nil {
					g.consts[n.outputs[i]] = o.Contiguous()
				}
			}
		}
	})
	if err != nil {
		return err
	}
	for _, n := range kept {
		for _, s := range n.subs {
			if err := s.fold(); err != nil {
				return err
			}
		}
	}
	g.nodes = kept
	g.uses = map[string]int{}
	for _, n := range g.nodes {
		for _, in := range n.inputs {
			if in != "" {
				g.uses[in]++
			}
		}
	}
	for _, o := range g.outputs {
		g.uses[o]++
	}
	return nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// runNode runs one tensor op, turning an ember panic into a *NodeError.
func runNode(n *node, ins []*ember.Tensor) (outs []*ember.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				e = fmt.Errorf("%v", r)
			}
			outs, err = nil, &NodeError{Node: n.label(), OpType: n.opType, Err: e}
		}
	}()
	outs = n.fn(n, ins)
	return outs, nil
}

// group is a set of values that may share storage (views of one another).
type group struct {
	refs      int
	protected bool
	members   []*ember.Tensor
}

// fresh lists ops whose outputs never share storage with their inputs; any
// other op's outputs are taken to be views of its first input, so neither is
// released while the other is still needed.
var fresh = map[string]bool{}

func init() {
	for _, s := range strings.Fields(`Add Sub Mul Div Pow Mod Abs Neg Exp Log Sqrt Reciprocal Sin Cos Tan Asin Acos Atan
	Sinh Cosh Asinh Acosh Atanh Tanh Sigmoid Relu LeakyRelu Elu Selu Celu Softplus Softsign HardSigmoid HardSwish Erf
	Floor Ceil Round Sign Not And Or Xor Equal Less Greater LessOrEqual GreaterOrEqual Where Conv ConvTranspose MatMul
	Gemm MaxPool AveragePool GlobalAveragePool GlobalMaxPool BatchNormalization LayerNormalization InstanceNormalization
	Softmax LogSoftmax Shape Size ConstantOfShape Range Gelu PRelu Mish`) {
		fresh[s] = true
	}
}

// val is a value of a graph: a tensor (t, nil where an optional input is
// empty) or a sequence of tensors; either may be an ONNX optional (opt),
// empty when it holds neither.
type val struct {
	t     *ember.Tensor
	seq   []*ember.Tensor
	isSeq bool
	opt   bool
	sb    *seqBuf // the array seq is a prefix of
}

func tval(t *ember.Tensor) val { return val{t: t} }

// seqval makes a sequence of ts, which the caller hands over (no other
// value may hold ts's array).
func seqval(ts []*ember.Tensor) val { return val{seq: ts, isSeq: true, sb: newSeqBuf(ts)} }

// seqBuf describes the array that sequence values share: each value is a
// prefix of it, and the array only grows (into a bigger copy when full,
// which the same seqBuf describes), so that SequenceInsert at the end
// appends in place when no value holds a longer prefix, and two values of
// one seqBuf share their first min(len) members without comparing them (a
// loop carrying a growing sequence then does work proportional to what
// each iteration adds, not to the sequence's length). The one rewrite of
// an entry is iterate's, replacing a tensor the current iteration appended
// by its copy, in every output holding it.
type seqBuf struct {
	n   int     // the longest prefix any value holds
	cum []int64 // cum[k]: the elements of the first k members
}

func newSeqBuf(ts []*ember.Tensor) *seqBuf {
	b := &seqBuf{n: len(ts), cum: make([]int64, len(ts)+1)}
	for i, t := range ts {
		b.cum[i+1] = b.cum[i] + int64(t.NumElements())
	}
	return b
}

// shared returns how many leading members sequences a and b share by
// construction (0 when they are on different arrays).
func shared(a, b val) int {
	if !a.isSeq || !b.isSeq || a.sb == nil || a.sb != b.sb {
		return 0
	}
	return min(len(a.seq), len(b.seq))
}

func (v val) none() bool { return !v.isSeq && v.t == nil && !v.opt }

// empty reports an optional that holds nothing.
func (v val) empty() bool { return !v.isSeq && v.t == nil }

// members lists the tensors v holds.
func (v val) members() []*ember.Tensor {
	if v.isSeq {
		return v.seq
	}
	if v.t == nil {
		return nil
	}
	return []*ember.Tensor{v.t}
}

// mapped applies f to each tensor of v.
func (v val) mapped(f func(*ember.Tensor) *ember.Tensor) val {
	if !v.isSeq {
		if v.t != nil {
			v.t = f(v.t)
		}
		return v
	}
	r := make([]*ember.Tensor, len(v.seq))
	for i, t := range v.seq {
		r[i] = f(t)
	}
	v.seq, v.sb = r, newSeqBuf(r)
	return v
}

func (g *graph) run(inputs map[string]val, consts map[string]*ember.Tensor, dev ember.Device, rc *runCtx) (out map[string]val, err error) {
	vals := make(map[string]val, len(g.uses))
	grp := make(map[string]*group, len(g.uses))
	add := func(name string, v val, gr *group) {
		vals[name] = v
		if gr == nil {
			gr = &group{}
		}
		gr.refs += g.uses[name]
		if !gr.protected { // a protected group is never released
			gr.members = append(gr.members, v.members()...)
		}
		grp[name] = gr
	}
	for k, t := range consts {
		add(k, tval(t), &group{protected: true})
	}
	for k, v := range inputs {
		add(k, v, &group{protected: true})
	}
	for _, o := range g.outputs {
		if gr := grp[o]; gr != nil {
			gr.protected = true
		}
	}
	outSet := map[string]bool{}
	for _, o := range g.outputs {
		outSet[o] = true
	}
	ember.Scope(func() {
		for _, n := range g.nodes {
			ins := make([]val, len(n.inputs))
			for i, name := range n.inputs {
				if name == "" {
					continue
				}
				v, ok := vals[name]
				if !ok {
					err = &NodeError{Node: n.label(), OpType: n.opType, Err: fmt.Errorf("input %q has no value", name)}
					return
				}
				ins[i] = v
			}
			general := n.ctl != nil || n.vfn != nil
			if general {
				// a subgraph's or a sequence op's outputs may be views of
				// any value it reads: keep those for the rest of the run
				for _, name := range n.inputs {
					if gr := grp[name]; gr != nil {
						gr.protected = true
					}
				}
			}
			outs, e := runVals(n, ins, rc)
			if e != nil {
				err = e
				return
			}
			for i, name := range n.outputs {
				if name == "" || i >= len(outs) || outs[i].none() {
					continue
				}
				v := outs[i]
				if !v.isSeq { // a sequence's tensors come from values on dev
					v = v.mapped(func(t *ember.Tensor) *ember.Tensor {
						if t.Device() != dev {
							return t.To(dev)
						}
						return t
					})
				}
				var gr *group
				switch {
				case general || v.isSeq || v.opt:
					gr = &group{protected: true}
				case !fresh[n.opType] && len(ins) > 0 && ins[0].t != nil:
					gr = grp[n.inputs[0]]
				}
				for j, in := range ins {
					if !general && !v.isSeq && in.t == v.t && in.t != nil {
						gr = grp[n.inputs[j]]
					}
				}
				if outSet[name] {
					if gr == nil {
						gr = &group{}
					}
					gr.protected = true
				}
				add(name, v, gr)
			}
			for _, name := range n.inputs {
				if name == "" {
					continue
				}
				gr := grp[name]
				if gr.refs--; gr.refs == 0 && !gr.protected {
					for _, t := range gr.members {
						t.Release()
					}
				}
			}
			for i, name := range n.outputs { // outputs nothing reads
				if name == "" || i >= len(outs) || outs[i].none() {
					continue
				}
				if gr := grp[name]; gr.refs == 0 && !gr.protected {
					for _, t := range gr.members {
						t.Release()
					}
				}
			}
		}
		out = map[string]val{}
		for _, o := range g.outputs {
			v, ok := vals[o]
			if !ok {
				err = fmt.Errorf("onnx: output %q was not computed", o)
				return
			}
			ms := v.members()
			if v.isSeq { // the members shared with an input are not this scope's
				skip := 0
				for _, in := range inputs {
					skip = max(skip, shared(v, in))
				}
				ms = ms[skip:]
			}
			ember.Keep(ms...)
			out[o] = v
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// runVals runs one node on its values: a control-flow or sequence op
// directly, any other op on tensors only.
func runVals(n *node, ins []val, rc *runCtx) (outs []val, err error) {
	if n.opType == "Identity" && len(ins) == 1 && (ins[0].isSeq || ins[0].opt) {
		return ins, nil
	}
	if n.ctl == nil && n.vfn == nil {
		ts := make([]*ember.Tensor, len(ins))
		for i, v := range ins {
			if v.isSeq || v.opt {
				what := "a sequence"
				if v.opt {
					what = "an optional"
				}
				return nil, &NodeError{Node: n.label(), OpType: n.opType, Err: fmt.Errorf("input %q is %s; %s takes tensors", n.inputs[i], what, n.opType)}
			}
			ts[i] = v.t
		}
		res, err := runNode(n, ts)
		if err != nil {
			return nil, err
		}
		outs = make([]val, len(res))
		for i, t := range res {
			outs[i] = tval(t)
		}
		return outs, nil
	}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				e = fmt.Errorf("%v", r)
			}
			outs, err = nil, &NodeError{Node: n.label(), OpType: n.opType, Err: e}
		}
	}()
	if n.ctl != nil {
		return n.ctl(n, ins, rc), nil
	}
	return n.vfn(n, ins), nil
}
