package onnx

import (
	"fmt"

	"github.com/emberml/ember"
)

// MaxIterations bounds the iterations one Run may spend in Loop and Scan
// nodes, all of them together (nested loops count each inner iteration):
// a model whose loop would run longer, such as a Loop with a huge trip
// count and no condition, fails with an error instead of running for
// hours. 1<<16 iterations of a small body take seconds; raise it for
// models that legitimately loop longer.
var MaxIterations = int64(1) << 16

// runCtx is the state of one Run: its device and the iterations spent.
type runCtx struct {
	dev   ember.Device
	iters int64
}

func (rc *runCtx) tick() {
	if rc.iters++; rc.iters > MaxIterations {
		panic(&limitError{fmt.Sprintf("more than %d loop iterations in one run (onnx.MaxIterations)", MaxIterations)})
	}
}

// ctlFunc runs a control-flow node: in holds its declared inputs followed
// by the outer-scope values its subgraphs read (n.inputs[n.nIn:]).
type ctlFunc func(n *node, in []val, rc *runCtx) []val

var ctlRegistry = map[string]ctlFunc{"If": ifOp, "Loop": loopOp, "Scan": scanOp, "SequenceMap": seqMapOp}

func lookupCtl(n *node) ctlFunc {
	if n.domain != "" && n.domain != "ai.onnx" {
		return nil
	}
	return ctlRegistry[n.opType]
}

// walk calls f on g and every graph nested in it.
func (g *graph) walk(f func(*graph)) {
	f(g)
	for _, n := range g.nodes {
		for _, s := range n.subs {
			s.walk(f)
		}
	}
}

// prepare copies the constants of every subgraph of g to dev, once (the
// main graph's are the Model's), outside any Scope.
func (g *graph) prepare(dev ember.Device) {
	g.walk(func(s *graph) {
		if s == g {
			return
		}
		s.devMu.Lock()
		defer s.devMu.Unlock()
		if _, ok := s.devConsts[dev]; ok {
			return
		}
		if s.devConsts == nil {
			s.devConsts = map[ember.Device]map[string]*ember.Tensor{}
		}
		c := make(map[string]*ember.Tensor, len(s.consts))
		for k, t := range s.consts {
			c[k] = t.To(dev)
		}
		s.devConsts[dev] = c
	})
}

func (g *graph) constsOn(dev ember.Device) map[string]*ember.Tensor {
	g.devMu.Lock()
	defer g.devMu.Unlock()
	return g.devConsts[dev]
}

// subgraph returns n's graph attribute name, failing when it is missing.
func (n *node) subgraph(name string) *graph {
	g := n.subs[name]
	if g == nil {
		fail("attribute %q (a graph) is missing", name)
	}
	return g
}

// call runs the subgraph g of node n with args as its inputs (in order)
// and the outer values from in, and returns its outputs in order.
func (g *graph) call(n *node, in []val, args []val, rc *runCtx) []val {
	if len(args) != len(g.inNames) {
		fail("its subgraph takes %d inputs, it passes %d", len(g.inNames), len(args))
	}
	feed := make(map[string]val, len(args)+len(g.free))
	free := make(map[string]bool, len(g.free))
	for _, name := range g.free {
		free[name] = true
	}
	for i, name := range n.inputs[n.nIn:] {
		if free[name] { // not a name of g that only another subgraph of n reads
			feed[name] = in[n.nIn+i]
		}
	}
	for i, name := range g.inNames {
		if args[i].none() {
			fail("subgraph input %q has no value", name)
		}
		feed[name] = args[i]
	}
	out, err := g.run(feed, g.constsOn(rc.dev), rc.dev, rc)
	if err != nil {
		panic(err)
	}
	res := make([]val, len(g.outputs))
	for i, o := range g.outputs {
		res[i] = out[o]
	}
	return res
}

func truth(t *ember.Tensor, what string) bool {
	if t.NumElements() != 1 {
		fail("%s must hold one element, it has shape %v", what, t.Shape())
	}
	return host(t.Cast(ember.Int64))[0] != 0
}

// ifOp runs then_branch or else_branch.
func ifOp(n *node, in []val, rc *runCtx) []val {
	if n.nIn < 1 || in[0].t == nil {
		fail("If needs a condition (a tensor)")
	}
	b := n.subgraph("else_branch")
	if truth(in[0].t, "the condition") {
		b = n.subgraph("then_branch")
	}
	if len(b.outputs) < len(n.outputs) {
		fail("the branch has %d outputs, the node %d", len(b.outputs), len(n.outputs))
	}
	return b.call(n, in, nil, rc)
}

// owner tracks the tensors a loop made (copies of its body's outputs,
// its iteration counters), to release each once no value holds it.
type owner struct {
	made   map[*ember.Tensor]bool
	pinned map[*ember.Tensor]bool // in a scan output: held to the end
	inSeq  map[*ember.Tensor]bool // put in a sequence an iteration returned
}

func newOwner() *owner {
	return &owner{made: map[*ember.Tensor]bool{}, pinned: map[*ember.Tensor]bool{}, inSeq: map[*ember.Tensor]bool{}}
}

func memberSet(vs []val) map[*ember.Tensor]bool {
	m := map[*ember.Tensor]bool{}
	for _, v := range vs {
		for _, t := range v.members() {
			m[t] = true
		}
	}
	return m
}

// drop releases the tensors of old that o made, unless pinned or in keep.
// The members a sequence of old shares with one of keep (on one array)
// are kept without a look; any other is looked for in keep.
func (o *owner) drop(old, keep []val) {
	var k map[*ember.Tensor]bool // keep's members, after a few scans
	scans := 0
	inKeep := func(t *ember.Tensor) bool {
		for _, v := range keep {
			if !v.isSeq && v.t == t {
				return true
			}
		}
		if !o.inSeq[t] { // o made t, so only an iteration put it in one
			return false
		}
		if scans++; scans > 4 && k == nil {
			k = memberSet(keep)
		}
		if k != nil {
			return k[t]
		}
		for _, v := range keep {
			for _, m := range v.seq {
				if m == t {
					return true
				}
			}
		}
		return false
	}
	done := map[*ember.Tensor]bool{}
	for _, v := range old {
		ms := v.members()
		if v.isSeq {
			skip := 0
			for _, k := range keep {
				skip = max(skip, shared(v, k))
			}
			ms = ms[skip:]
		}
		for _, t := range ms {
			if o.made[t] && !o.pinned[t] && !done[t] && !inKeep(t) {
				t.Release()
				delete(o.made, t)
				delete(o.inSeq, t)
				done[t] = true
			}
		}
	}
}

// finish releases every tensor o made but those in keep.
func (o *owner) finish(keep []val) {
	k := memberSet(keep)
	for t := range o.made {
		if !k[t] {
			t.Release()
		}
	}
	o.made = map[*ember.Tensor]bool{}
}

// iterate runs body once with args in a Scope of its own and returns its
// outputs: an argument passed through as itself (a tensor, or a tensor of
// a sequence in a sequence), any other value as a
// fresh copy that o owns (kept in the enclosing scope), so that the values
// of the iteration before can be released and a sequence passed through
// a loop is not copied each iteration. A sequence that extends an argument
// on its array (SequenceInsert at the end) has only the tensors this
// iteration appended copied, in place.
func iterate(n *node, body *graph, in, args []val, rc *runCtx, o *owner) []val {
	rc.tick()
	isArg := map[*ember.Tensor]bool{} // the tensor arguments
	start := map[*seqBuf]int{}        // the arrays of the sequence arguments, and their lengths now
	for _, a := range args {
		switch {
		case a.isSeq && a.sb != nil:
			start[a.sb] = a.sb.n
		case !a.isSeq && a.t != nil:
			isArg[a.t] = true
		}
	}
	var all map[*ember.Tensor]bool // every member of args, when needed
	copied := map[*ember.Tensor]*ember.Tensor{}
	made := map[*ember.Tensor]bool{}
	cp := func(t *ember.Tensor) *ember.Tensor {
		if c, ok := copied[t]; ok {
			return c
		}
		checkElems(t.Shape())
		c := ember.Keep(t.Clone())
		o.made[c] = true
		copied[t], made[c] = c, true
		return c
	}
	var outs []val
	ember.Scope(func() {
		outs = body.call(n, in, args, rc)
		for i, v := range outs {
			if v.none() {
				fail("subgraph output %q has no value", body.outputs[i])
			}
			if v.isSeq {
				base := 0
				for _, a := range args {
					base = max(base, shared(v, a))
				}
				if st, ok := start[v.sb]; ok && v.sb != nil && base >= st {
					for k := base; k < len(v.seq); k++ {
						if t := v.seq[k]; !isArg[t] && !made[t] {
							v.seq[k] = cp(t)
						}
						o.inSeq[v.seq[k]] = true
					}
					continue
				}
			}
			if all == nil && v.isSeq {
				all = memberSet(args)
			}
			outs[i] = v.mapped(func(t *ember.Tensor) *ember.Tensor {
				if isArg[t] || all[t] || made[t] {
					return t
				}
				return cp(t)
			})
			for _, t := range outs[i].seq {
				o.inSeq[t] = true
			}
		}
	})
	return outs
}

// tensorsOf returns the tensors of vs, failing on a sequence.
func tensorsOf(vs []val, what string) []*ember.Tensor {
	r := make([]*ember.Tensor, len(vs))
	for i, v := range vs {
		if v.isSeq {
			fail("%s must be tensors, one is a sequence", what)
		}
		r[i] = v.t
	}
	return r
}

func vals(ts []*ember.Tensor) []val {
	r := make([]val, len(ts))
	for i, t := range ts {
		r[i] = tval(t)
	}
	return r
}

// stackScan stacks the per-iteration values of a scan output along axis
// (of the stacked rank); an output of no iteration is an empty float32
// [0] (its shape is unknown).
func stackScan(parts []*ember.Tensor, ax int64, dev ember.Device) *ember.Tensor {
	if len(parts) == 0 {
		return ember.Zeros(ember.Shape{0}, ember.On(dev))
	}
	sh := append(ember.Shape{len(parts)}, parts[0].Shape()...)
	checkElems(sh)
	a := axis(ax, len(sh))
	r := ember.Stack(parts, a)
	return r
}

// loopOp is Loop: a for/while loop over a body graph with loop-carried
// values and scan outputs.
func loopOp(n *node, in []val, rc *runCtx) []val {
	body := n.subgraph("body")
	if n.nIn < 2 {
		fail("Loop needs inputs M and cond (either may be empty)")
	}
	carried := append([]val(nil), in[2:n.nIn]...)
	mc := tensorsOf(in[:2], "M and cond")
	nc := len(carried)
	if len(body.inNames) != nc+2 {
		fail("the body takes %d inputs, want 2 + %d loop-carried values", len(body.inNames), nc)
	}
	ns := len(body.outputs) - 1 - nc
	if ns < 0 {
		fail("the body has %d outputs, want 1 + %d loop-carried values and the scan outputs", len(body.outputs), nc)
	}
	trip, bounded := int64(0), false // unbounded: until cond is false
	if mc[0] != nil {
		if mc[0].NumElements() != 1 {
			fail("M must hold one element, it has shape %v", mc[0].Shape())
		}
		trip, bounded = host(mc[0])[0], true
	}
	cond := true
	if mc[1] != nil {
		cond = truth(mc[1], "cond")
	}
	scans := make([][]*ember.Tensor, ns)
	o := newOwner()
	for i := int64(0); (!bounded || i < trip) && cond; i++ {
		it := ember.Full(ember.Shape{}, float64(i), ember.On(rc.dev), ember.Dtype(ember.Int64))
		c := ember.Full(ember.Shape{}, 1, ember.On(rc.dev), ember.Dtype(ember.Bool))
		o.made[it], o.made[c] = true, true
		args := append([]val{tval(it), tval(c)}, carried...)
		outs := iterate(n, body, in, args, rc, o)
		sc := tensorsOf(outs[1+nc:], "scan outputs")
		cond = truth(tensorsOf(outs[:1], "the condition")[0], "the body's condition")
		for k := range scans {
			o.pinned[sc[k]] = true
			scans[k] = append(scans[k], sc[k])
			checkElems(append([]int{len(scans[k])}, sc[k].Shape()...))
		}
		carried = outs[1 : 1+nc]
		o.drop(append(args, outs[0]), carried)
	}
	res := append([]val(nil), carried...)
	for k := range scans {
		res = append(res, tval(stackScan(scans[k], 0, rc.dev)))
	}
	o.finish(carried)
	return res
}

// scanOp is Scan: opset 9's form (state values and scan inputs with a
// scan axis each), and opset 8's (a batch axis first, the scan axis second,
// optional sequence_lens), which runs each batch element as opset 9's.
func scanOp(n *node, vin []val, rc *runCtx) []val {
	body := n.subgraph("body")
	in := tensorsOf(vin[:n.nIn], "Scan's inputs")
	m := int(n.int("num_scan_inputs", 0))
	if n.opset >= 9 {
		if m < 1 || m > n.nIn {
			fail("num_scan_inputs %d out of range for %d inputs", m, n.nIn)
		}
		ns := n.nIn - m
		dirs := n.ints("scan_input_directions")
		inAx := n.ints("scan_input_axes")
		o := newOwner()
		st, outs := scan9(n, body, vin, in[:ns], in[ns:n.nIn], inAx, dirs, n.ints("scan_output_axes"), n.ints("scan_output_directions"), rc, o)
		o.finish(vals(st))
		return vals(append(st, outs...))
	}
	if m < 1 || m > n.nIn-1 {
		fail("num_scan_inputs %d out of range for %d inputs", m, n.nIn)
	}
	ns := n.nIn - 1 - m
	state, xs := in[1:1+ns], in[1+ns:n.nIn]
	if xs[0].Dim() < 2 || xs[0].Size(0) == 0 {
		fail("opset 8's scan inputs need a batch axis and a sequence axis, and a batch of at least one; the first has shape %v", xs[0].Shape())
	}
	batch := xs[0].Size(0)
	for _, t := range append(append([]*ember.Tensor(nil), state...), xs...) {
		if t.Dim() < 1 || t.Size(0) != batch {
			fail("every input needs the batch size %d as its first dimension, one has shape %v", batch, t.Shape())
		}
	}
	for _, x := range xs {
		if x.Dim() < 2 || x.Size(1) != xs[0].Size(1) {
			fail("the scan inputs have different sequence lengths")
		}
	}
	if in[0] != nil {
		for _, l := range host(in[0]) {
			if l != int64(xs[0].Size(1)) {
				unsupported(n, "sequence_lens shorter than the inputs' sequence axis")
			}
		}
	}
	var stOut, scOut [][]*ember.Tensor
	o := newOwner()
	defer o.finish(nil) // after the stacking below
	for b := 0; b < batch; b++ {
		var sb, xb []*ember.Tensor
		for _, t := range state {
			sb = append(sb, t.Select(0, b))
		}
		for _, t := range xs {
			xb = append(xb, t.Select(0, b))
		}
		st, outs := scan9(n, body, vin, sb, xb, nil, n.ints("directions"), nil, nil, rc, o)
		stOut, scOut = append(stOut, st), append(scOut, outs)
	}
	var res []*ember.Tensor
	for i := range stOut[0] {
		var parts []*ember.Tensor
		for b := range stOut {
			parts = append(parts, stOut[b][i])
		}
		res = append(res, stackScan(parts, 0, rc.dev))
	}
	for i := range scOut[0] {
		var parts []*ember.Tensor
		for b := range scOut {
			parts = append(parts, scOut[b][i])
		}
		res = append(res, stackScan(parts, 0, rc.dev))
	}
	return vals(res)
}

func scan9(n *node, body *graph, in []val, state, xs []*ember.Tensor, inAx, inDir, outAx, outDir []int64, rc *runCtx, o *owner) ([]*ember.Tensor, []*ember.Tensor) {
	ns, m := len(state), len(xs)
	if len(body.inNames) != ns+m {
		fail("the body takes %d inputs, want %d state values and %d scan inputs", len(body.inNames), ns, m)
	}
	k := len(body.outputs) - ns
	if k < 0 {
		fail("the body has %d outputs, want %d state values and the scan outputs", len(body.outputs), ns)
	}
	pick := func(v []int64, i int) int64 {
		if i < len(v) {
			return v[i]
		}
		return 0
	}
	axes := make([]int, m)
	steps := -1
	for j, x := range xs {
		axes[j] = axis(pick(inAx, j), x.Dim())
		if steps >= 0 && x.Size(axes[j]) != steps {
			fail("the scan inputs have different lengths along their scan axes (%d and %d)", steps, x.Size(axes[j]))
		}
		steps = x.Size(axes[j])
	}
	scans := make([][]*ember.Tensor, k)
	for t := 0; t < steps; t++ {
		args := append([]*ember.Tensor(nil), state...)
		for j, x := range xs {
			i := t
			if pick(inDir, j) != 0 {
				i = steps - 1 - t
			}
			args = append(args, x.Select(axes[j], i))
		}
		outs := tensorsOf(iterate(n, body, in, vals(args), rc, o), "Scan's body outputs")
		for j := range scans {
			o.pinned[outs[ns+j]] = true
		}
		o.drop(vals(state), vals(outs[:ns]))
		state = outs[:ns]
		for j := range scans {
			scans[j] = append(scans[j], outs[ns+j])
			checkElems(append([]int{len(scans[j])}, outs[ns+j].Shape()...))
		}
	}
	var res []*ember.Tensor
	for j := range scans {
		parts := scans[j]
		if pick(outDir, j) != 0 {
			for a, b := 0, len(parts)-1; a < b; a, b = a+1, b-1 {
				parts[a], parts[b] = parts[b], parts[a]
			}
		}
		res = append(res, stackScan(parts, pick(outAx, j), rc.dev))
	}
	return append([]*ember.Tensor(nil), state...), res
}

// seqMapOp is SequenceMap: the body runs once per element of the first
// input (a sequence), on the elements of the same position of the other
// sequence inputs and the whole of the tensor inputs; each body output
// collects into a sequence.
func seqMapOp(n *node, in []val, rc *runCtx) []val {
	body := n.subgraph("body")
	if n.nIn < 1 || !in[0].isSeq {
		fail("SequenceMap's first input must be a sequence")
	}
	l := len(in[0].seq)
	for i, v := range in[1:n.nIn] {
		if v.isSeq && len(v.seq) != l {
			fail("input %d is a sequence of %d tensors, the first of %d", i+1, len(v.seq), l)
		}
	}
	res := make([][]*ember.Tensor, len(body.outputs))
	elems := make([]int64, len(res))
	for k := 0; k < l; k++ {
		args := make([]val, n.nIn)
		for i, v := range in[:n.nIn] {
			args[i] = v
			if v.isSeq {
				args[i] = tval(v.seq[k])
			}
		}
		outs := tensorsOf(iterate(n, body, in, args, rc, newOwner()), "SequenceMap's body outputs")
		for j := range res {
			res[j] = append(res[j], outs[j])
			if elems[j] += int64(outs[j].NumElements()); elems[j] > MaxElements {
				checkSeq(res[j]) // fails
			}
		}
	}
	r := make([]val, len(res))
	for j := range res {
		if res[j] == nil {
			res[j] = []*ember.Tensor{}
		}
		r[j] = seqval(res[j])
	}
	return r
}
