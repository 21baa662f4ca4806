package nn

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// TransformerOption configures MultiheadAttention and the transformer
// layers (PyTorch's keyword arguments). Each option says which
// constructors take it; another constructor panics on it.
type TransformerOption func(*transformerConfig)

type transformerConfig struct {
	dropout    float64
	noBias     bool
	kdim, vdim int
	batchFirst bool
	normFirst  bool
	ff         int
	activation string
	eps        float64
	mhaOnly    []string // options given that only MultiheadAttention takes
	layerOnly  []string // options given that only the transformer layers take
}

// WithDropout sets the dropout probability (MultiheadAttention's dropout on
// the attention weights, default 0; the transformer layers' on the
// attention, the feed-forward block and the residual branches, default
// 0.1). It applies in training mode only.
func WithDropout(p float64) TransformerOption {
	return func(c *transformerConfig) { c.dropout = p }
}

// BatchFirst makes inputs and outputs [N, L, E] instead of PyTorch's
// default [L, N, E] (batch_first=True).
func BatchFirst() TransformerOption { return func(c *transformerConfig) { c.batchFirst = true } }

// NoAttnBias leaves out in_proj_bias and out_proj.bias (bias=False;
// MultiheadAttention only).
func NoAttnBias() TransformerOption {
	return func(c *transformerConfig) { c.noBias = true; c.mhaOnly = append(c.mhaOnly, "NoAttnBias") }
}

// KVDims sets the feature sizes of the keys and values (kdim, vdim;
// MultiheadAttention only). When either differs from the embedding size the
// projections are the separate q_proj_weight, k_proj_weight and
// v_proj_weight, as in PyTorch.
func KVDims(kdim, vdim int) TransformerOption {
	return func(c *transformerConfig) { c.kdim, c.vdim = kdim, vdim; c.mhaOnly = append(c.mhaOnly, "KVDims") }
}

// NormFirst applies the layer norms before the attention and feed-forward
// blocks instead of after the residual additions (norm_first=True; the
// transformer layers only).
func NormFirst() TransformerOption {
	return func(c *transformerConfig) { c.normFirst = true; c.layerOnly = append(c.layerOnly, "NormFirst") }
}

// FeedForward sets the hidden size of the feed-forward block
// (dim_feedforward, default 2048; the transformer layers only).
func FeedForward(dim int) TransformerOption {
	return func(c *transformerConfig) { c.ff = dim; c.layerOnly = append(c.layerOnly, "FeedForward") }
}

// WithActivation sets the feed-forward block's activation, "relu" (the
// default) or "gelu" (the exact GELU), as PyTorch's activation strings
// (the transformer layers only).
func WithActivation(name string) TransformerOption {
	return func(c *transformerConfig) { c.activation = name; c.layerOnly = append(c.layerOnly, "WithActivation") }
}

// LayerNormEps sets the layer norms' eps (layer_norm_eps, default 1e-5;
// the transformer layers only).
func LayerNormEps(eps float64) TransformerOption {
	return func(c *transformerConfig) { c.eps = eps; c.layerOnly = append(c.layerOnly, "LayerNormEps") }
}

func newTransformerConfig(op string, layer bool, dropout float64, opts []TransformerOption) transformerConfig {
	c := transformerConfig{dropout: dropout, ff: 2048, activation: "relu", eps: 1e-5}
	for _, o := range opts {
		o(&c)
	}
	wrong := c.layerOnly
	if layer {
		wrong = c.mhaOnly
	}
	if len(wrong) > 0 {
		argErr(op, "option %s does not apply to it", wrong[0])
	}
	if c.dropout < 0 || c.dropout > 1 || math.IsNaN(c.dropout) {
		argErr(op, "dropout probability has to be between 0 and 1, but got %v", c.dropout)
	}
	return c
}

// NonDynamicallyQuantizableLinear is MultiheadAttention's output
// projection: a Linear under the name PyTorch gives it, so that the module
// prints as PyTorch's does.
type NonDynamicallyQuantizableLinear struct {
	Linear
}

func newOutProj(e int, bias bool) *NonDynamicallyQuantizableLinear {
	o := &NonDynamicallyQuantizableLinear{}
	o.In, o.Out = e, e
	o.Init(o)
	o.Weight = uniform(ember.Shape{e, e}, kaimingBound(e))
	if bias {
		o.Bias = param(ember.Zeros(ember.Shape{e}))
	}
	o.RegisterParameter("weight", &o.Weight)
	o.RegisterParameter("bias", &o.Bias)
	return o
}

// MultiheadAttention is torch.nn.MultiheadAttention: the queries, keys and
// values are projected, split into NumHeads heads of EmbedDim/NumHeads
// features, attended (softmax(q·kᵀ/√d + mask)·v per head) and the heads'
// outputs concatenated and projected by OutProj.
//
// Its state dict is PyTorch's: in_proj_weight [3E, E] (the q, k and v
// projections stacked), or q_proj_weight [E, E], k_proj_weight [E, kdim]
// and v_proj_weight [E, vdim] when KVDims differ from E; in_proj_bias
// [3E]; out_proj.weight and out_proj.bias. add_bias_kv and add_zero_attn
// are not supported.
type MultiheadAttention struct {
	Base
	InProjWeight                          *ember.Tensor // [3E, E], nil when KDim or VDim differ from E
	QProjWeight, KProjWeight, VProjWeight *ember.Tensor // the separate projections, nil otherwise
	InProjBias                            *ember.Tensor // [3E], nil without bias
	OutProj                               *NonDynamicallyQuantizableLinear
	EmbedDim, NumHeads, KDim, VDim        int
	Dropout                               float64 // on the attention weights, in training mode
	BatchFirst                            bool
}

// NewMultiheadAttention returns nn.MultiheadAttention(embedDim, numHeads)
// with PyTorch's initialisation (Xavier-uniform projections, zero biases);
// the options it takes are WithDropout, BatchFirst, NoAttnBias and KVDims.
func NewMultiheadAttention(embedDim, numHeads int, opts ...TransformerOption) *MultiheadAttention {
	c := newTransformerConfig("NewMultiheadAttention", false, 0, opts)
	if numHeads <= 0 || embedDim <= 0 || embedDim%numHeads != 0 {
		argErr("NewMultiheadAttention", "embed_dim (%d) must be divisible by num_heads (%d)", embedDim, numHeads)
	}
	kd, vd := c.kdim, c.vdim
	if kd == 0 {
		kd = embedDim
	}
	if vd == 0 {
		vd = embedDim
	}
	m := &MultiheadAttention{EmbedDim: embedDim, NumHeads: numHeads, KDim: kd, VDim: vd, Dropout: c.dropout, BatchFirst: c.batchFirst}
	m.Init(m)
	xavier := func(out, in int) *ember.Tensor {
		return uniform(ember.Shape{out, in}, math.Sqrt(6/float64(out+in)))
	}
	if kd == embedDim && vd == embedDim {
		m.InProjWeight = xavier(3*embedDim, embedDim)
	} else {
		m.QProjWeight = xavier(embedDim, embedDim)
		m.KProjWeight = xavier(embedDim, kd)
		m.VProjWeight = xavier(embedDim, vd)
	}
	if !c.noBias {
		m.InProjBias = param(ember.Zeros(ember.Shape{3 * embedDim}))
	}
	m.OutProj = newOutProj(embedDim, !c.noBias)
	m.RegisterParameter("in_proj_weight", &m.InProjWeight)
	m.RegisterParameter("q_proj_weight", &m.QProjWeight)
	m.RegisterParameter("k_proj_weight", &m.KProjWeight)
	m.RegisterParameter("v_proj_weight", &m.VProjWeight)
	m.RegisterParameter("in_proj_bias", &m.InProjBias)
	m.RegisterModule("out_proj", m.OutProj)
	return m
}

// MHAOptions are MultiheadAttention.Attend's optional arguments (PyTorch's
// forward keywords). Unlike PyTorch, the zero value does not return the
// weights (need_weights defaults to True there).
type MHAOptions struct {
	// KeyPaddingMask is [N, S] ([S] for unbatched inputs): where Bool, true
	// marks a key to ignore (padding); where floating, it is added to the
	// scores of that key.
	KeyPaddingMask *ember.Tensor
	// AttnMask is [L, S] or [N·NumHeads, L, S] (the batch-major, head-minor
	// order of PyTorch): where Bool, true marks a position that may not be
	// attended; where floating, it is added to the scores. Note that this
	// is the opposite of ember.AttentionOptions.Mask's Bool convention, as
	// in PyTorch.
	AttnMask *ember.Tensor
	// Causal lets query i attend keys j ≤ i only, as the square subsequent
	// mask would (it may be combined with the masks above).
	Causal bool
	// NeedWeights also returns the attention weights, computed through the
	// explicit softmax; without it the attention runs on
	// ember.ScaledDotProductAttention's fused kernels.
	NeedWeights bool
	// PerHeadWeights returns the weights of every head, [N, NumHeads, L,
	// S], instead of their mean over heads, [N, L, S]
	// (average_attn_weights=False).
	PerHeadWeights bool
}

// Forward is self-attention of x with itself, without masks.
func (m *MultiheadAttention) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(m, "Forward")
	y, _ := m.Attend(x, x, x, MHAOptions{})
	return y
}

// Attend is PyTorch's forward(query, key, value, ...): query is [L, N, E]
// ([N, L, E] with BatchFirst, [L, E] unbatched), key [S, N, KDim] and value
// [S, N, VDim] alike. It returns the output, shaped as query, and, with
// o.NeedWeights, the attention weights (after dropout, as PyTorch returns
// them); nil otherwise. When query, key and value are the same tensor the
// three projections are one product with in_proj_weight, as PyTorch does.
func (m *MultiheadAttention) Attend(query, key, value *ember.Tensor, o MHAOptions) (out, weights *ember.Tensor) {
	CheckNil(m, "Attend")
	const op = "MultiheadAttention"
	batched := query.Dim() == 3
	if !batched && query.Dim() != 2 {
		panic(&ember.ShapeError{Op: op, Msg: fmt.Sprintf("query should be unbatched 2D or batched 3D tensor but received %d-D query tensor", query.Dim())})
	}
	if key.Dim() != query.Dim() || value.Dim() != query.Dim() {
		panic(&ember.ShapeError{Op: op, Msg: fmt.Sprintf("for a %d-D query, expected key and value to be %d-D but found %d-D and %d-D tensors", query.Dim(), query.Dim(), key.Dim(), value.Dim())})
	}
	// bring everything to [N, L, E], keeping "the same tensor" identities
	q, k, v, kpm := query, key, value, o.KeyPaddingMask
	toBatchFirst := func(t *ember.Tensor) *ember.Tensor {
		if !batched {
			return t.Unsqueeze(0)
		}
		if !m.BatchFirst {
			return t.Transpose(0, 1)
		}
		return t
	}
	q = toBatchFirst(query)
	k = q
	if key != query {
		k = toBatchFirst(key)
	}
	v = k
	if value != key {
		v = toBatchFirst(value)
	}
	if kpm != nil && !batched {
		kpm = kpm.Unsqueeze(0)
	}
	n, l, e := q.Shape()[0], q.Shape()[1], q.Shape()[2]
	s := k.Shape()[1]
	if e != m.EmbedDim {
		panic(&ember.ShapeError{Op: op, Msg: fmt.Sprintf("was expecting embedding dimension of %d, but got %d", m.EmbedDim, e)})
	}
	if k.Shape()[0] != n || v.Shape()[0] != n || v.Shape()[1] != s || k.Shape()[2] != m.KDim || v.Shape()[2] != m.VDim {
		panic(&ember.ShapeError{Op: op, Msg: fmt.Sprintf("key %v and value %v do not fit query %v (kdim %d, vdim %d, batch_first %v)", key.Shape(), value.Shape(), query.Shape(), m.KDim, m.VDim, m.BatchFirst)})
	}
	h := m.NumHeads
	hd := e / h
	qp, kp, vp := m.project(q, k, v)
	heads := func(t *ember.Tensor, length int) *ember.Tensor {
		return t.Reshape(n, length, h, hd).Permute(0, 2, 1, 3) // [N, H, len, hd]
	}
	qh, kh, vh := heads(qp, l), heads(kp, s), heads(vp, s)

	masked, added := m.masks(o, kpm, qh, n, l, s)
	p := m.Dropout
	if !m.Training() {
		p = 0
	}
	var oh *ember.Tensor
	if !o.NeedWeights {
		ao := ember.AttentionOptions{Dropout: p}
		switch {
		case masked != nil && added != nil:
			ao.Mask = added.MaskedFill(masked, math.Inf(-1))
		case masked != nil:
			ao.Mask = masked.LogicalNot() // SDPA's Bool mask: true takes part
		case added != nil:
			ao.Mask = added
		default:
			ao.Causal = o.Causal
		}
		oh = ember.ScaledDotProductAttention(qh, kh, vh, ao)
	} else {
		scores := qh.DivScalar(math.Sqrt(float64(hd))).MatMul(kh.Transpose(-2, -1))
		if added != nil {
			scores = scores.Add(added)
		}
		if masked != nil {
			scores = scores.MaskedFill(masked, math.Inf(-1))
		}
		weights = ember.Dropout(scores.Softmax(-1), p, true)
		oh = weights.MatMul(vh)
	}
	out = m.OutProj.Forward(oh.Permute(0, 2, 1, 3).Reshape(n, l, e))
	switch {
	case !batched:
		out = out.Squeeze(0)
	case !m.BatchFirst:
		out = out.Transpose(0, 1)
	}
	if weights != nil {
		if !o.PerHeadWeights {
			weights = weights.Sum(ember.Dims(1)).DivScalar(float64(h))
		}
		if !batched {
			weights = weights.Squeeze(0)
		}
	}
	return out, weights
}

// project applies the input projections to [N, ·, ·] inputs.
func (m *MultiheadAttention) project(q, k, v *ember.Tensor) (qp, kp, vp *ember.Tensor) {
	e := m.EmbedDim
	b := func(i, parts int) *ember.Tensor {
		if m.InProjBias == nil {
			return nil
		}
		return m.InProjBias.Narrow(0, i*e, parts*e)
	}
	if w := m.InProjWeight; w != nil {
		rows := func(i, parts int) *ember.Tensor { return w.Narrow(0, i*e, parts*e) }
		switch {
		case q == k && k == v:
			p := ember.Linear(q, w, m.InProjBias)
			return p.Narrow(2, 0, e), p.Narrow(2, e, e), p.Narrow(2, 2*e, e)
		case k == v:
			kv := ember.Linear(k, rows(1, 2), b(1, 2))
			return ember.Linear(q, rows(0, 1), b(0, 1)), kv.Narrow(2, 0, e), kv.Narrow(2, e, e)
		default:
			return ember.Linear(q, rows(0, 1), b(0, 1)), ember.Linear(k, rows(1, 1), b(1, 1)), ember.Linear(v, rows(2, 1), b(2, 1))
		}
	}
	return ember.Linear(q, m.QProjWeight, b(0, 1)), ember.Linear(k, m.KProjWeight, b(1, 1)), ember.Linear(v, m.VProjWeight, b(2, 1))
}

// masks checks o's masks and brings them to broadcast with the [N, H, L,
// S] scores: masked is the Bool union of the positions that may not be
// attended (nil for none), added the sum of the floating masks (nil for
// none), of qh's dtype.
func (m *MultiheadAttention) masks(o MHAOptions, kpm, qh *ember.Tensor, n, l, s int) (masked, added *ember.Tensor) {
	const op = "MultiheadAttention"
	h := m.NumHeads
	add := func(mask *ember.Tensor) {
		if mask.DType() == ember.Bool {
			if masked == nil {
				masked = mask
			} else {
				masked = masked.LogicalOr(mask)
			}
			return
		}
		if !mask.DType().IsFloat() {
			panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{mask.DType()}, Msg: "only bool and floating types of masks are supported"})
		}
		if mask.DType() != qh.DType() {
			mask = mask.Cast(qh.DType())
		}
		if added == nil {
			added = mask
		} else {
			added = added.Add(mask)
		}
	}
	if am := o.AttnMask; am != nil {
		switch {
		case am.Dim() == 2:
			if !am.Shape().Equal(ember.Shape{l, s}) {
				panic(&ember.ShapeError{Op: op, Msg: fmt.Sprintf("The shape of the 2D attn_mask is %v, but should be [%d, %d].", am.Shape(), l, s)})
			}
			add(am.Reshape(1, 1, l, s))
		case am.Dim() == 3:
			if !am.Shape().Equal(ember.Shape{n * h, l, s}) {
				panic(&ember.ShapeError{Op: op, Msg: fmt.Sprintf("The shape of the 3D attn_mask is %v, but should be [%d, %d, %d].", am.Shape(), n*h, l, s)})
			}
			add(am.Reshape(n, h, l, s))
		default:
			panic(&ember.ShapeError{Op: op, Msg: fmt.Sprintf("attn_mask's dimension %d is not supported", am.Dim())})
		}
	}
	if kpm != nil {
		if !kpm.Shape().Equal(ember.Shape{n, s}) {
			panic(&ember.ShapeError{Op: op, Msg: fmt.Sprintf("expecting key_padding_mask shape of [%d, %d], but got %v", n, s, kpm.Shape())})
		}
		add(kpm.Reshape(n, 1, 1, s))
	}
	if o.Causal && (masked != nil || added != nil || o.NeedWeights) {
		add(causalMasked(l, s, qh.Device()))
	}
	return masked, added
}

// causalMasked is the Bool [L, S] mask of the positions j > i.
func causalMasked(l, s int, dev ember.Device) *ember.Tensor {
	return ember.Ones(ember.Shape{l, s}, ember.On(dev)).Triu(1).GtScalar(0)
}

// ExtraRepr is empty: PyTorch prints MultiheadAttention by its child only.
func (m *MultiheadAttention) ExtraRepr() string {
	CheckNil(m, "ExtraRepr")
	return ""
}
