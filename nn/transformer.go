package nn

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// TransformerMasks are the masks of the transformer layers and stacks
// (PyTorch's forward keywords). The encoder reads the Src fields, the
// decoder the others. Each attention mask is [L, S] or [N·NumHeads, L, S]
// and each key padding mask [N, S], with MultiheadAttention's conventions
// (Bool true: may not be attended; floating: added to the scores).
type TransformerMasks struct {
	SrcMask, SrcKeyPaddingMask *ember.Tensor // the encoder's self-attention
	TgtMask, TgtKeyPaddingMask *ember.Tensor // the decoder's self-attention
	// the decoder's attention to the encoder's output
	MemoryMask, MemoryKeyPaddingMask *ember.Tensor
}

// GenerateSquareSubsequentMask is nn.Transformer.generate_square_subsequent_mask:
// the [sz, sz] float mask with −∞ above the diagonal and 0 elsewhere, which
// lets position i attend positions j ≤ i. opts are creation options
// (ember.On, ember.Dtype).
func GenerateSquareSubsequentMask(sz int, opts ...ember.Option) *ember.Tensor {
	return ember.Full(ember.Shape{sz, sz}, math.Inf(-1), opts...).Triu(1)
}

func activationFn(op, name string) func(*ember.Tensor) *ember.Tensor {
	switch name {
	case "relu":
		return (*ember.Tensor).ReLU
	case "gelu":
		return ember.GELU
	}
	argErr(op, "activation should be relu/gelu, not %s", name)
	return nil
}

// TransformerEncoderLayer is torch.nn.TransformerEncoderLayer: self-attention
// and a feed-forward block (Linear1, the activation, Linear2), each with
// dropout, a residual connection and a layer norm, applied after the
// residual addition (post-norm, the default) or, with NormFirst, before the
// block. Its children and state-dict keys are PyTorch's (self_attn.*,
// linear1.*, norm1.*, ...).
type TransformerEncoderLayer struct {
	Base
	SelfAttn           *MultiheadAttention
	Linear1            *Linear
	Dropout            *Dropout
	Linear2            *Linear
	Norm1, Norm2       *LayerNorm
	Dropout1, Dropout2 *Dropout
	NormFirst          bool
	Activation         string // "relu" or "gelu"
	act                func(*ember.Tensor) *ember.Tensor
}

// NewTransformerEncoderLayer returns nn.TransformerEncoderLayer(dModel,
// nhead); the options it takes are FeedForward (dim_feedforward, default
// 2048), WithDropout (default 0.1), WithActivation, LayerNormEps,
// BatchFirst and NormFirst.
func NewTransformerEncoderLayer(dModel, nhead int, opts ...TransformerOption) *TransformerEncoderLayer {
	const op = "NewTransformerEncoderLayer"
	c := newTransformerConfig(op, true, 0.1, opts)
	l := &TransformerEncoderLayer{NormFirst: c.normFirst, Activation: c.activation, act: activationFn(op, c.activation)}
	l.Init(l)
	l.SelfAttn = NewMultiheadAttention(dModel, nhead, WithDropout(c.dropout), batchFirstIf(c.batchFirst))
	l.Linear1 = NewLinear(dModel, c.ff, true)
	l.Dropout = NewDropout(c.dropout)
	l.Linear2 = NewLinear(c.ff, dModel, true)
	l.Norm1, l.Norm2 = newLN(dModel, c.eps), newLN(dModel, c.eps)
	l.Dropout1, l.Dropout2 = NewDropout(c.dropout), NewDropout(c.dropout)
	l.RegisterModule("self_attn", l.SelfAttn)
	l.RegisterModule("linear1", l.Linear1)
	l.RegisterModule("dropout", l.Dropout)
	l.RegisterModule("linear2", l.Linear2)
	l.RegisterModule("norm1", l.Norm1)
	l.RegisterModule("norm2", l.Norm2)
	l.RegisterModule("dropout1", l.Dropout1)
	l.RegisterModule("dropout2", l.Dropout2)
	return l
}

func batchFirstIf(on bool) TransformerOption {
	return func(c *transformerConfig) { c.batchFirst = on }
}

func newLN(d int, eps float64) *LayerNorm {
	n := NewLayerNorm(d)
	n.Eps = eps
	return n
}

// Forward is Encode without masks.
func (l *TransformerEncoderLayer) Forward(src *ember.Tensor) *ember.Tensor {
	CheckNil(l, "Forward")
	return l.Encode(src, TransformerMasks{})
}

// Encode is PyTorch's forward(src, src_mask, src_key_padding_mask): src is
// [S, N, E] ([N, S, E] with BatchFirst, [S, E] unbatched).
func (l *TransformerEncoderLayer) Encode(src *ember.Tensor, m TransformerMasks) *ember.Tensor {
	CheckNil(l, "Encode")
	sa := func(x *ember.Tensor) *ember.Tensor {
		y, _ := l.SelfAttn.Attend(x, x, x, MHAOptions{AttnMask: m.SrcMask, KeyPaddingMask: m.SrcKeyPaddingMask})
		return l.Dropout1.Forward(y)
	}
	x := src
	if l.NormFirst {
		x = x.Add(sa(l.Norm1.Forward(x)))
		return x.Add(feedForward(l.Norm2.Forward(x), l.Linear1, l.Linear2, l.Dropout, l.Dropout2, l.act))
	}
	x = l.Norm1.Forward(x.Add(sa(x)))
	return l.Norm2.Forward(x.Add(feedForward(x, l.Linear1, l.Linear2, l.Dropout, l.Dropout2, l.act)))
}

func feedForward(x *ember.Tensor, l1, l2 *Linear, d, dOut *Dropout, act func(*ember.Tensor) *ember.Tensor) *ember.Tensor {
	return dOut.Forward(l2.Forward(d.Forward(act(l1.Forward(x)))))
}

// TransformerDecoderLayer is torch.nn.TransformerDecoderLayer: masked
// self-attention, attention to the encoder's output (the memory) and a
// feed-forward block, each with dropout, a residual connection and a layer
// norm (post-norm, or NormFirst). Its state-dict keys are PyTorch's
// (self_attn.*, multihead_attn.*, linear1.*, norm1.* ... norm3.*).
type TransformerDecoderLayer struct {
	Base
	SelfAttn, MultiheadAttn      *MultiheadAttention
	Linear1                      *Linear
	Dropout                      *Dropout
	Linear2                      *Linear
	Norm1, Norm2, Norm3          *LayerNorm
	Dropout1, Dropout2, Dropout3 *Dropout
	NormFirst                    bool
	Activation                   string // "relu" or "gelu"
	act                          func(*ember.Tensor) *ember.Tensor
}

// NewTransformerDecoderLayer returns nn.TransformerDecoderLayer(dModel,
// nhead); it takes the options of NewTransformerEncoderLayer.
func NewTransformerDecoderLayer(dModel, nhead int, opts ...TransformerOption) *TransformerDecoderLayer {
	const op = "NewTransformerDecoderLayer"
	c := newTransformerConfig(op, true, 0.1, opts)
	l := &TransformerDecoderLayer{NormFirst: c.normFirst, Activation: c.activation, act: activationFn(op, c.activation)}
	l.Init(l)
	l.SelfAttn = NewMultiheadAttention(dModel, nhead, WithDropout(c.dropout), batchFirstIf(c.batchFirst))
	l.MultiheadAttn = NewMultiheadAttention(dModel, nhead, WithDropout(c.dropout), batchFirstIf(c.batchFirst))
	l.Linear1 = NewLinear(dModel, c.ff, true)
	l.Dropout = NewDropout(c.dropout)
	l.Linear2 = NewLinear(c.ff, dModel, true)
	l.Norm1, l.Norm2, l.Norm3 = newLN(dModel, c.eps), newLN(dModel, c.eps), newLN(dModel, c.eps)
	l.Dropout1, l.Dropout2, l.Dropout3 = NewDropout(c.dropout), NewDropout(c.dropout), NewDropout(c.dropout)
	l.RegisterModule("self_attn", l.SelfAttn)
	l.RegisterModule("multihead_attn", l.MultiheadAttn)
	l.RegisterModule("linear1", l.Linear1)
	l.RegisterModule("dropout", l.Dropout)
	l.RegisterModule("linear2", l.Linear2)
	l.RegisterModule("norm1", l.Norm1)
	l.RegisterModule("norm2", l.Norm2)
	l.RegisterModule("norm3", l.Norm3)
	l.RegisterModule("dropout1", l.Dropout1)
	l.RegisterModule("dropout2", l.Dropout2)
	l.RegisterModule("dropout3", l.Dropout3)
	return l
}

// Forward panics: a decoder layer needs the memory too (call Decode).
func (l *TransformerDecoderLayer) Forward(*ember.Tensor) *ember.Tensor {
	CheckNil(l, "Forward")
	useErr("*nn.TransformerDecoderLayer", "Forward", "a decoder layer needs the encoder's output: call Decode(tgt, memory, masks)")
	return nil
}

// Decode is PyTorch's forward(tgt, memory, tgt_mask, memory_mask,
// tgt_key_padding_mask, memory_key_padding_mask): tgt is [T, N, E] and
// memory [S, N, E] ([N, ·, E] with BatchFirst, [·, E] unbatched).
func (l *TransformerDecoderLayer) Decode(tgt, memory *ember.Tensor, m TransformerMasks) *ember.Tensor {
	CheckNil(l, "Decode")
	sa := func(x *ember.Tensor) *ember.Tensor {
		y, _ := l.SelfAttn.Attend(x, x, x, MHAOptions{AttnMask: m.TgtMask, KeyPaddingMask: m.TgtKeyPaddingMask})
		return l.Dropout1.Forward(y)
	}
	mha := func(x *ember.Tensor) *ember.Tensor {
		y, _ := l.MultiheadAttn.Attend(x, memory, memory, MHAOptions{AttnMask: m.MemoryMask, KeyPaddingMask: m.MemoryKeyPaddingMask})
		return l.Dropout2.Forward(y)
	}
	x := tgt
	if l.NormFirst {
		x = x.Add(sa(l.Norm1.Forward(x)))
		x = x.Add(mha(l.Norm2.Forward(x)))
		return x.Add(feedForward(l.Norm3.Forward(x), l.Linear1, l.Linear2, l.Dropout, l.Dropout3, l.act))
	}
	x = l.Norm1.Forward(x.Add(sa(x)))
	x = l.Norm2.Forward(x.Add(mha(x)))
	return l.Norm3.Forward(x.Add(feedForward(x, l.Linear1, l.Linear2, l.Dropout, l.Dropout3, l.act)))
}

// ModuleList holds sub-modules named "0", "1", ... without running them:
// torch.nn.ModuleList. Its Forward panics, as PyTorch's raises.
type ModuleList struct {
	Base
	Modules []Module
}

// NewModuleList returns a ModuleList of ms; a nil module panics with a
// *ModuleError.
func NewModuleList(ms ...Module) *ModuleList {
	noNil("*nn.ModuleList", "NewModuleList", "module", ms)
	l := &ModuleList{Modules: ms}
	l.Init(l)
	l.registerTail()
	return l
}

func (l *ModuleList) elems() []Module { return l.Modules }

// Append adds m as the last module and returns l (PyTorch's append). A
// module appended to Modules directly is a child too, and is registered
// by the next Append or SetModule.
func (l *ModuleList) Append(m Module) *ModuleList {
	CheckNil(l, "Append")
	if isNil(m) {
		useErr("*nn.ModuleList", "Append", "nil module"+typed(m))
	}
	l.Modules = append(l.Modules, m)
	l.registerTail()
	return l
}

// At returns module i (negative counts from the end).
func (l *ModuleList) At(i int) Module {
	CheckNil(l, "At")
	return l.Modules[index("nn.ModuleList.At", i, len(l.Modules))]
}

// Len is the number of modules.
func (l *ModuleList) Len() int {
	CheckNil(l, "Len")
	return len(l.Modules)
}

// Forward panics: a ModuleList is iterated by its owner.
func (l *ModuleList) Forward(*ember.Tensor) *ember.Tensor {
	CheckNil(l, "Forward")
	useErr("*nn.ModuleList", "Forward", "a ModuleList has no Forward: iterate over its Modules")
	return nil
}

// cloneModule is copy.deepcopy of a module: the same structure with copies
// of every parameter (keeping requires-grad) and buffer.
func cloneModule(m Module) Module {
	c := replicateStructure(m)
	c.Registry().MapParameters(func(_ string, p *ember.Tensor) *ember.Tensor {
		return p.Detach().Clone().SetRequiresGrad(p.RequiresGrad())
	})
	c.Registry().MapBuffers(func(_ string, b *ember.Tensor) *ember.Tensor { return b.Detach().Clone() })
	return c
}

// clones returns n deep copies of layer.
func clones(layer Module, n int) *ModuleList {
	ms := make([]Module, n)
	for i := range ms {
		ms[i] = cloneModule(layer)
	}
	return NewModuleList(ms...)
}

// TransformerEncoder is torch.nn.TransformerEncoder: NumLayers encoder
// layers in a ModuleList ("layers.0.self_attn.in_proj_weight", ...) and an
// optional final Norm ("norm.weight").
type TransformerEncoder struct {
	Base
	Layers    *ModuleList
	Norm      Module // nil: none
	NumLayers int
}

// NewTransformerEncoder returns nn.TransformerEncoder(layer, numLayers,
// norm): the layers are deep copies of layer (equal weights to begin with,
// as PyTorch's deepcopy makes them); norm may be nil. Each layer must have
// an Encode method, as TransformerEncoderLayer's.
func NewTransformerEncoder(layer Module, numLayers int, norm Module) *TransformerEncoder {
	if isNil(layer) {
		argErr("NewTransformerEncoder", "nil layer%s", typed(layer))
	}
	if isNil(norm) {
		norm = nil // a nil *LayerNorm: no norm, as nil
	}
	if _, ok := layer.(encoderLayer); !ok {
		argErr("NewTransformerEncoder", "a %T has no Encode method", layer)
	}
	if numLayers < 0 {
		argErr("NewTransformerEncoder", "num_layers %d < 0", numLayers)
	}
	e := &TransformerEncoder{Layers: clones(layer, numLayers), Norm: norm, NumLayers: numLayers}
	e.Init(e)
	e.RegisterModule("layers", e.Layers)
	if norm != nil {
		e.RegisterModule("norm", norm)
	}
	return e
}

type encoderLayer interface {
	Encode(src *ember.Tensor, m TransformerMasks) *ember.Tensor
}

type decoderLayer interface {
	Decode(tgt, memory *ember.Tensor, m TransformerMasks) *ember.Tensor
}

// Forward is Encode without masks.
func (e *TransformerEncoder) Forward(src *ember.Tensor) *ember.Tensor {
	CheckNil(e, "Forward")
	return e.Encode(src, TransformerMasks{})
}

// Encode runs src through every layer with the same masks (PyTorch's
// forward(src, mask, src_key_padding_mask)), then the final norm.
func (e *TransformerEncoder) Encode(src *ember.Tensor, m TransformerMasks) *ember.Tensor {
	CheckNil(e, "Encode")
	x := src
	for i, l := range e.Layers.Modules {
		el, ok := l.(encoderLayer)
		if !ok {
			useErr("*nn.TransformerEncoder", "Encode", fmt.Sprintf("layer %d is a %T, which has no Encode method", i, l))
		}
		x = el.Encode(x, m)
	}
	if e.Norm != nil {
		x = e.Norm.Forward(x)
	}
	return x
}

// TransformerDecoder is torch.nn.TransformerDecoder: NumLayers decoder
// layers in a ModuleList and an optional final Norm.
type TransformerDecoder struct {
	Base
	Layers    *ModuleList
	Norm      Module // nil: none
	NumLayers int
}

// NewTransformerDecoder returns nn.TransformerDecoder(layer, numLayers,
// norm): deep copies of layer, which must have a Decode method, as
// TransformerDecoderLayer's; norm may be nil.
func NewTransformerDecoder(layer Module, numLayers int, norm Module) *TransformerDecoder {
	if isNil(layer) {
		argErr("NewTransformerDecoder", "nil layer%s", typed(layer))
	}
	if isNil(norm) {
		norm = nil
	}
	if _, ok := layer.(decoderLayer); !ok {
		argErr("NewTransformerDecoder", "a %T has no Decode method", layer)
	}
	if numLayers < 0 {
		argErr("NewTransformerDecoder", "num_layers %d < 0", numLayers)
	}
	d := &TransformerDecoder{Layers: clones(layer, numLayers), Norm: norm, NumLayers: numLayers}
	d.Init(d)
	d.RegisterModule("layers", d.Layers)
	if norm != nil {
		d.RegisterModule("norm", norm)
	}
	return d
}

// Forward panics: a decoder needs the memory too (call Decode).
func (d *TransformerDecoder) Forward(*ember.Tensor) *ember.Tensor {
	CheckNil(d, "Forward")
	useErr("*nn.TransformerDecoder", "Forward", "a decoder needs the encoder's output: call Decode(tgt, memory, masks)")
	return nil
}

// Decode runs tgt through every layer, each attending memory with the same
// masks, then the final norm.
func (d *TransformerDecoder) Decode(tgt, memory *ember.Tensor, m TransformerMasks) *ember.Tensor {
	CheckNil(d, "Decode")
	x := tgt
	for i, l := range d.Layers.Modules {
		dl, ok := l.(decoderLayer)
		if !ok {
			useErr("*nn.TransformerDecoder", "Decode", fmt.Sprintf("layer %d is a %T, which has no Decode method", i, l))
		}
		x = dl.Decode(x, memory, m)
	}
	if d.Norm != nil {
		x = d.Norm.Forward(x)
	}
	return x
}
