package ember

import (
	"fmt"
	"math"

	"github.com/emberml/ember/backend"
)

// Scaled dot-product attention. ScaledDotProductAttention checks its
// arguments, brings the batch dims to one, and runs the backend's fused
// kernels (backend.Attender: FlashAttention's tiling, the L×S scores never
// stored) or the generic lowering (the explicit softmax(q·kᵀ·scale +
// mask)·v from MatMul and Softmax) behind one signature, as conv, pooling
// and batch norm do (kernels.go).

// AttentionOptions are ScaledDotProductAttention's optional arguments; the
// zero value is plain attention scaled by 1/√E.
type AttentionOptions struct {
	// Mask, if not nil, broadcasts to [..., L, S]: a Bool mask is true
	// where the key takes part (attn_mask of dtype bool), a floating one
	// (of the inputs' dtype) is added to the scaled scores. A floating mask
	// that requires grad gets one (through the generic lowering).
	Mask *Tensor
	// Causal lets query i see keys j ≤ i only: the top-left aligned lower
	// triangle of the L×S matrix (torch.ones(L, S).tril(), is_causal).
	// It cannot be combined with Mask, as in PyTorch.
	Causal bool
	// Dropout is the probability of zeroing each attention weight (after
	// the softmax; the others are scaled by 1/(1−p)), drawn from the
	// seeded generator (ManualSeed). As in PyTorch it applies whenever it
	// is above 0: pass 0 at evaluation.
	Dropout float64
	// Scale multiplies q·kᵀ; 0 means 1/√E.
	Scale float64
}

// ScaledDotProductAttention is torch.nn.functional.scaled_dot_product_attention
// (PyTorch 2): q is [..., L, E], k [..., S, E], v [..., S, Ev] (the
// leading dims broadcast), and the result [..., L, Ev] is
// softmax(q·kᵀ·scale + mask)·v, with dropout on the softmax's weights.
//
// A query row whose keys are all masked out gets NaN outputs (and NaN
// gradients), as PyTorch 2's reference and the explicit formula give: the
// softmax of a row of −∞ is 0/0.
//
// Without dropout, and without a mask that requires grad, it runs the
// backend's fused kernels where it has them (the CPU's and CUDA's for
// Float32 and Float64): the output is computed one tile of keys at a time
// with an online softmax, and backward recomputes the tiles from the saved
// logsumexp of each row, so memory grows with L + S, not L·S. It records
// ScaledDotProductAttentionBackward0.
func ScaledDotProductAttention(q, k, v *Tensor, o AttentionOptions) *Tensor {
	sameDevice("scaled_dot_product_attention", q, k, v) // (nil operands)
	if dt, ok := autocastLow(q, k, v); ok {
		orig := []*Tensor{q, k, v, o.Mask}
		o.Mask = autocastCast(o.Mask, dt)
		cs := []*Tensor{autocastCast(q, dt), autocastCast(k, dt), autocastCast(v, dt), o.Mask}
		return releaseCasts(ScaledDotProductAttention(cs[0], cs[1], cs[2], o), orig, cs)
	}
	if q.dtype.IsHalf() && !nativeHalfAttention(q, k, v, o) { // computed in float32 from the rounded inputs, rounded once
		return inFloat32(q.dtype, []*Tensor{q, k, v, o.Mask}, func(c []*Tensor) *Tensor {
			o.Mask = c[3]
			return ScaledDotProductAttention(c[0], c[1], c[2], o)
		})
	}
	return NativeKernels.ScaledDotProductAttention(q, k, v, o)
}

// nativeHalfAttention reports whether the backend's fused kernels take
// the two-byte q, k and v themselves (CUDA's, which compute in float32 and
// round each output once, as the float32 route does): same dtypes, no
// dropout, no float mask that requires grad.
func nativeHalfAttention(q, k, v *Tensor, o AttentionOptions) bool {
	if q.dtype != k.dtype || q.dtype != v.dtype || q.Dim() < 2 || k.Dim() < 2 || v.Dim() < 2 || o.Dropout != 0 {
		return false
	}
	if m := o.Mask; m != nil && m.dtype != Bool && (m.dtype != q.dtype || needsGrad(m)) {
		return false
	}
	at, ok := q.be().(backend.Attender)
	return ok && at.AttentionSupported(q.dtype, q.shape[q.Dim()-1], v.shape[v.Dim()-1])
}

// attentionGradFn is the grad_fn name of both attention paths.
const attentionGradFn = "ScaledDotProductAttentionBackward0"

// attentionKernel runs attention on [B, L, E], [B, S, E], [B, S, Ev]
// inputs; the output has the shape batch + [L, Ev].
type attentionKernel interface {
	attention(q3, k3, v3 *Tensor, m attnMask, p backend.AttentionParams, dropout float64) *Tensor
}

// attnMask is an attention call's mask: m4 the mask as [B1, B2, L, S]
// (B1·B2 = B; nil for none), user the caller's tensor (for its gradient)
// and batch the broadcast batch dims.
type attnMask struct {
	m4, user *Tensor
	batch    Shape
}

// attention returns the attention kernel for q under k.
func (k Kernels) attention(q, mask *Tensor, dropout float64, nb, e, ev, l, s int) attentionKernel {
	at, ok := q.be().(backend.Attender)
	if !ok || k == GenericKernels || dropout > 0 || !q.dtype.IsFloat() || nb == 0 || l == 0 || s == 0 ||
		(mask != nil && mask.dtype != Bool && needsGrad(mask)) || !at.AttentionSupported(q.dtype, e, ev) {
		return generic{}
	}
	return nativeAttention{at}
}

// ScaledDotProductAttention is the package's ScaledDotProductAttention run
// with k's kernels.
func (k Kernels) ScaledDotProductAttention(q, key, v *Tensor, o AttentionOptions) *Tensor {
	const name = "scaled_dot_product_attention"
	q.live(name)
	key.live(name)
	v.live(name)
	sameDevice(name, q, key, v)
	if q.Dim() < 2 || key.Dim() < 2 || v.Dim() < 2 {
		shapeErr(name, "expected q, k and v of at least 2 dims ([..., L, E], [..., S, E], [..., S, Ev])", q.shape, key.shape, v.shape)
	}
	if q.dtype != key.dtype || q.dtype != v.dtype || !q.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{q.dtype, key.dtype, v.dtype}, Msg: "Expected query, key, and value to have the same floating dtype"})
	}
	l, e := q.shape[q.Dim()-2], q.shape[q.Dim()-1]
	s, ek := key.shape[key.Dim()-2], key.shape[key.Dim()-1]
	sv, ev := v.shape[v.Dim()-2], v.shape[v.Dim()-1]
	if ek != e || sv != s {
		shapeErr(name, fmt.Sprintf("expected k [..., S, %d] and v [..., %d, Ev] for q [..., L, %d] and k [..., %d, %d]", e, s, e, s, ek), q.shape, key.shape, v.shape)
	}
	if o.Dropout < 0 || o.Dropout > 1 || math.IsNaN(o.Dropout) {
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("dropout probability has to be between 0 and 1, but got %v", o.Dropout)})
	}
	if o.Causal && o.Mask != nil {
		panic(&ShapeError{Op: name, Msg: "Explicit attn_mask should not be set when is_causal=True"})
	}
	batch := BroadcastShapes(name, q.shape[:q.Dim()-2], key.shape[:key.Dim()-2], v.shape[:v.Dim()-2])
	nb := batch.NumElements()
	with := func(last ...int) Shape { return append(batch.clone(), last...) }
	q3 := q.Expand(with(l, e)...).Reshape(nb, l, e)
	k3 := key.Expand(with(s, e)...).Reshape(nb, s, e)
	v3 := v.Expand(with(s, ev)...).Reshape(nb, s, ev)

	p := backend.AttentionParams{Scale: o.Scale, Causal: o.Causal}
	if p.Scale == 0 {
		p.Scale = 1 / math.Sqrt(float64(e))
	}
	am := attnMask{user: o.Mask, batch: batch}
	if m := o.Mask; m != nil {
		m.live(name)
		sameDevice(name, q, m)
		switch {
		case m.dtype == Bool:
			p.Mask = backend.BoolMask
		case m.dtype == q.dtype:
			p.Mask = backend.AddMask
		default:
			panic(&DTypeError{Op: name, DTypes: []DType{m.dtype, q.dtype}, Msg: "Expected attn_mask dtype to be bool or to match query dtype"})
		}
		full := with(l, s)
		if len(m.shape) > len(full) || !BroadcastShapes(name, m.shape, full).Equal(full) {
			shapeErr(name, fmt.Sprintf("attn_mask must broadcast to %v", full), m.shape)
		}
		am.m4 = maskAs4d(m.Detach().Expand(full...), batch, l, s)
	}
	return k.attention(q, o.Mask, o.Dropout, nb, e, ev, l, s).attention(q3, k3, v3, am, p, o.Dropout)
}

// maskAs4d views an expanded mask [batch..., L, S] as [B1, B2, L, S]:
// the batch dims coalesced (in the order of their linear index) to at
// most two, or a contiguous copy when they do not coalesce that far.
func maskAs4d(m *Tensor, batch Shape, l, s int) *Tensor {
	nb := batch.NumElements()
	nd := len(batch)
	st := m.strides
	cs, cst := backend.Coalesce([]int(batch), st[:nd])
	rs, cs2 := st[nd], st[nd+1]
	switch {
	case len(cs) == 1:
		return m.asStrided(Shape{1, nb, l, s}, []int{0, cst[0][0], rs, cs2}, m.offset)
	case len(cs) == 2:
		return m.asStrided(Shape{cs[0], cs[1], l, s}, []int{cst[0][0], cst[0][1], rs, cs2}, m.offset)
	}
	return m.Contiguous().Reshape(1, nb, l, s)
}

// lseDType is the dtype of the saved logsumexp of each row.
func lseDType(dt DType) DType {
	if dt == Float64 {
		return Float64
	}
	return Float32
}

// nativeAttention runs attention on a backend's fused kernels; the graph
// saves the inputs, the output and each row's logsumexp.
type nativeAttention struct{ at backend.Attender }

func (k nativeAttention) attention(q3, k3, v3 *Tensor, am attnMask, p backend.AttentionParams, _ float64) *Tensor {
	at := k.at
	b, l, ev := q3.shape[0], q3.shape[1], v3.shape[2]
	qd, kd, vd := q3.Detach(), k3.Detach(), v3.Detach()
	var mv backend.View
	if am.m4 != nil {
		mv = am.m4.view()
	}
	out := empty(append(am.batch.clone(), l, ev), q3.dtype, q3.dev)
	o3 := out.Detach().View(b, l, ev)
	lse := empty(Shape{b, l}, lseDType(q3.dtype), q3.dev)
	at.AttentionForward(o3.view(), lse.view(), qd.view(), kd.view(), vd.view(), mv, p)
	saved := []*Tensor{q3, k3, v3, out}
	defer func() {
		if out.ag == nil { // no backward will read the logsumexp
			lse.Release()
		}
	}()
	return recordTwice(attentionGradFn, out, []*Tensor{q3, k3, v3}, saved, func(g *Tensor) []*Tensor {
		g = g.Reshape(b, l, ev)
		gq := empty(qd.shape, qd.dtype, qd.dev)
		gk := empty(kd.shape, kd.dtype, kd.dev)
		gv := empty(vd.shape, vd.dtype, vd.dev)
		at.AttentionBackward(gq.view(), gk.view(), gv.view(), g.view(), qd.view(), kd.view(), vd.view(), mv, o3.view(), lse.view(), p)
		return []*Tensor{gq, gk, gv}
	}, attentionTwice(q3, k3, v3, am, p, nil))
}

// attentionTwice is the differentiable backward of both attention paths:
// the explicit formula's, recomputed from the original q, k, v (which the
// nodes save anyway) with recording ops; keep is the dropout's scaled
// mask (nil for none). A floating mask that requires grad gets the
// scores' gradient.
func attentionTwice(q3, k3, v3 *Tensor, am attnMask, p backend.AttentionParams, keep *Tensor) func(g *Tensor) []*Tensor {
	return func(g *Tensor) []*Tensor {
		b, l, s, ev := q3.shape[0], q3.shape[1], k3.shape[1], v3.shape[2]
		var add *Tensor
		if p.Mask == backend.AddMask {
			add = am.user.Expand(append(am.batch.clone(), l, s)...).Reshape(b, l, s)
		}
		w := attnScores(q3, k3, am, p, add).Softmax(-1)
		wd := w
		if keep != nil {
			wd = w.Mul(keep)
		}
		return attnBackward(g.Reshape(b, l, ev), q3, k3, v3, w, wd, keep, [3]*Tensor{q3, k3, v3}, am, p.Scale)
	}
}

// attnScores is q·kᵀ·scale under the mask: the causal and a bool mask
// are added as 0 and −∞, as PyTorch 2's math path does, so that a fully
// masked row's gradient is NaN as the fused kernels' is; a float mask
// (add, [b, l, s]) is added.
func attnScores(q, k *Tensor, am attnMask, p backend.AttentionParams, add *Tensor) *Tensor {
	b, l, s := q.shape[0], q.shape[1], k.shape[1]
	scores := q.MatMul(k.Transpose(1, 2)).MulScalar(p.Scale)
	ninf := Full(Shape{}, math.Inf(-1), On(q.dev), Dtype(q.dtype))
	zero := zeroLike(scores)
	switch {
	case p.Causal:
		rows := Arange(0, float64(l), 1, On(q.dev)).Unsqueeze(1)
		cols := Arange(0, float64(s), 1, On(q.dev))
		scores = scores.Add(Where(rows.Ge(cols), zero, ninf))
	case p.Mask == backend.BoolMask:
		scores = scores.Add(Where(am.m4.Reshape(b, l, s), zero, ninf))
	case p.Mask == backend.AddMask:
		scores = scores.Add(add)
	}
	return scores
}

// attnBackward is the explicit attention's backward: the gradients of q,
// k and v (each where orig's requires grad) and of a float mask that
// requires grad, from g [b, l, ev], the softmax weights w, the weights
// after dropout wd and dropout's scaled mask keep (nil for none). The
// products read q, k and v: detached in a first-order pass, the
// originals in one that builds the gradients' graph.
func attnBackward(g, q, k, v, w, wd, keep *Tensor, orig [3]*Tensor, am attnMask, scale float64) []*Tensor {
	gv := gradIf(orig[2], func() *Tensor { return wd.Transpose(1, 2).MatMul(g) })
	dw := g.MatMul(v.Transpose(1, 2))
	if keep != nil {
		dw = dw.Mul(keep)
	}
	// the softmax's backward: ds = w·(dw − Σ dw·w)
	ds := w.Mul(dw.Sub(dw.Mul(w).Sum(Dims(-1), KeepDim())))
	gq := gradIf(orig[0], func() *Tensor { return ds.MatMul(k).MulScalar(scale) })
	gk := gradIf(orig[1], func() *Tensor { return ds.Transpose(1, 2).MatMul(q).MulScalar(scale) })
	var gm *Tensor
	if m := am.user; m != nil && m.dtype != Bool && m.RequiresGrad() {
		gm = sumTo(ds.Reshape(append(am.batch.clone(), q.shape[1], k.shape[1])...), m.shape)
	}
	return []*Tensor{gq, gk, gv, gm}
}

// attention is the explicit softmax(q·kᵀ·scale + mask)·v: the L×S
// weights are stored (and saved for backward), dropout is applied to them
// and a floating mask gets the scores' gradient.
func (generic) attention(q3, k3, v3 *Tensor, am attnMask, p backend.AttentionParams, dropout float64) *Tensor {
	b, l, s := q3.shape[0], q3.shape[1], k3.shape[1]
	qd, kd, vd := q3.Detach(), k3.Detach(), v3.Detach()
	var add *Tensor
	if p.Mask == backend.AddMask {
		add = am.m4.Reshape(b, l, s)
	}
	scores := attnScores(qd, kd, am, p, add)
	w := scores.Softmax(-1)
	wd, keep := w, (*Tensor)(nil)
	if dropout > 0 {
		scale := 0.0
		if dropout < 1 {
			scale = 1 / (1 - dropout)
		}
		keep = Rand(w.shape, On(w.dev), Dtype(maskDType(w.dtype))).LtScalar(1 - dropout).Cast(w.dtype).MulScalar(scale)
		wd = w.Mul(keep)
	}
	out := wd.MatMul(vd).Reshape(append(am.batch.clone(), l, v3.shape[2])...)
	mask := am.user
	maskGrad := mask != nil && mask.dtype != Bool
	inputs := []*Tensor{q3, k3, v3, nil}
	if maskGrad {
		inputs[3] = mask
	}
	return recordTwice(attentionGradFn, out, inputs, []*Tensor{q3, k3, v3}, func(g *Tensor) []*Tensor {
		return attnBackward(g.Reshape(b, l, v3.shape[2]), qd, kd, vd, w, wd, keep, [3]*Tensor{q3, k3, v3}, am, p.Scale)
	}, attentionTwice(q3, k3, v3, am, p, keep))
}
