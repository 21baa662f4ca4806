package ember

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// Differentiable building blocks of neural networks (torch.nn.functional);
// the losses are in loss.go, GELU in activations.go, convolution, pooling
// and normalisation in conv.go, pool.go and norm.go. They are device-agnostic: each is composed from the backend's kernels,
// and records one node named as PyTorch's grad_fn where PyTorch does.

// Linear is x @ wᵀ + b (b may be nil), as torch.nn.functional.linear: x is
// [..., in], w is [out, in], b is [out]. A 2-D x with a bias records
// AddmmBackward0, as PyTorch does.
func Linear(x, w, b *Tensor) *Tensor {
	const name = "linear"
	x.live(name)
	w.live(name)
	if dt, ok := autocastLow(x, w, b); ok {
		return onCasts(dt, []*Tensor{x, w, b}, func(c []*Tensor) *Tensor { return Linear(c[0], c[1], c[2]) })
	}
	if x.dtype.IsHalf() && w.dtype == x.dtype && (b == nil || b.dtype == x.dtype) {
		// two-byte floats: product and bias in float32, rounded once (as
		// PyTorch's bf16 addmm)
		if x.Dim() == 2 && b != nil && w.Dim() == 2 && x.shape[1] == w.shape[1] {
			return linearHalf(x, w, b)
		}
		return inFloat32(x.dtype, []*Tensor{x, w, b}, func(c []*Tensor) *Tensor { return Linear(c[0], c[1], c[2]) })
	}
	if w.Dim() != 2 || x.Dim() == 0 || x.shape[x.Dim()-1] != w.shape[1] {
		shapeErr(name, "input and weight shapes cannot be multiplied", x.shape, w.shape)
	}
	if b != nil && b.live(name).Dim() == 1 && b.shape[0] != w.shape[0] && b.shape[0] != 1 {
		// torch: "The expanded size of the tensor (4) must match the existing size (3)"
		shapeErr(name, fmt.Sprintf("bias of shape %v does not match the weight's %d outputs", b.shape, w.shape[0]), x.shape, w.shape, b.shape)
	}
	if x.Dim() == 2 && b != nil {
		sameDevice(name, x, w, b)
		xd, wd, bd := x.Detach(), w.Detach(), b.Detach()
		out := bd.Add(xd.MatMul(wd.T()))
		back := func(g, xd, wd *Tensor) []*Tensor {
			return []*Tensor{g,
				gradIf(x, func() *Tensor { return g.MatMul(wd) }),
				gradIf(w, func() *Tensor { return g.T().MatMul(xd) })}
		}
		// (both closures hold x and w, as the first-order one always has)
		return recordTwice("AddmmBackward0", out, []*Tensor{b, x, w}, savedIf(wd, x, xd, w),
			func(g *Tensor) []*Tensor { return back(g, xd, wd) }, func(g *Tensor) []*Tensor { return back(g, x, w) })
	}
	y := x.MatMul(w.T())
	if b != nil {
		y = y.Add(b)
	}
	return y
}

// Dropout zeroes each element with probability p and scales the others by
// 1/(1-p) when training; otherwise it returns x. The mask comes from Rand
// (Philox, so ManualSeed makes it repeatable); for a two-byte x it is
// drawn from float32 uniforms (maskDType), and x times the scale (the
// scale rounded to x's dtype, as PyTorch's noise.div_(1-p)) is rounded
// once.
func Dropout(x *Tensor, p float64, training bool) *Tensor {
	x.live("dropout")
	if !(p >= 0 && p <= 1) { // (NaN too)
		panic(&ValueError{Op: "dropout", Msg: fmt.Sprintf("dropout probability has to be between 0 and 1, but got %v", p)})
	}
	if !training || p == 0 {
		return x
	}
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: "dropout", DTypes: []DType{x.dtype}, Msg: "dropout needs a floating dtype"})
	}
	scale := 0.0
	if p < 1 {
		scale = 1 / (1 - p)
	}
	mask := Rand(x.shape, On(x.dev), Dtype(maskDType(x.dtype))).LtScalar(1 - p).Cast(x.dtype).MulScalar(scale)
	out := x.Detach().Mul(mask)
	// linear in g (the mask is a constant): differentiable as it is
	return selfTwice(record("NativeDropoutBackward0", out, []*Tensor{x}, []*Tensor{mask}, func(g *Tensor) []*Tensor {
		return []*Tensor{g.Mul(mask)}
	}))
}

// maskDType is the dtype of the uniform draws behind a dropout mask for
// values of dtype dt: float32 for the two-byte floats, whose own uniforms
// (multiples of 2^-8 or 2^-11) would make the keep probability 1-p
// rounded to that grid (PyTorch draws its Bernoulli mask from a double
// uniform), else dt.
func maskDType(dt DType) DType {
	if dt.IsHalf() {
		return Float32
	}
	return dt
}

// Embedding looks up rows of weight ([V, D]) at the integer indices idx
// (Int64 or Int32, any shape), giving idx's shape + [D], as
// torch.nn.functional.embedding: an index gather (IndexSelect's kernel)
// whose backward index-adds the output's gradient into the rows
// (EmbeddingBackward0). An index outside [0, V) panics with an *IndexError.
func Embedding(idx, weight *Tensor) *Tensor { return embedding(idx, weight, -1) }

// EmbeddingPadded is Embedding with padding_idx: the row paddingIdx
// (negative counts from the end, as in PyTorch) is looked up as usual but
// gets no gradient.
func EmbeddingPadded(idx, weight *Tensor, paddingIdx int) *Tensor {
	weight.live("embedding")
	if weight.Dim() == 2 {
		v := weight.shape[0]
		if paddingIdx < -v || paddingIdx >= v {
			panic(&ShapeError{Op: "embedding", Msg: "Padding_idx must be within num_embeddings", Shapes: []Shape{weight.shape}})
		}
		if paddingIdx < 0 {
			paddingIdx += v
		}
	}
	return embedding(idx, weight, paddingIdx)
}

func embedding(idx, weight *Tensor, pad int) *Tensor {
	const name = "embedding"
	idx.live(name)
	weight.live(name)
	sameDevice(name, idx, weight)
	if !idx.dtype.IsInt() {
		panic(&DTypeError{Op: name, DTypes: []DType{idx.dtype}, Msg: "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int"})
	}
	if weight.Dim() != 2 {
		shapeErr(name, "'weight' must be 2-D", weight.shape)
	}
	v, d := weight.shape[0], weight.shape[1]
	flat := idx.Detach().Cast(Int64).Reshape(-1)
	n := flat.shape[0]
	checkRange(name, flat, 0, v)
	out := gatherRaw(weight.Detach(), 0, flat, lineIndex(flat, 0, Shape{n, d}), Shape{n, d})
	out = out.Reshape(append(idx.Shape(), d)...)
	back := func(g *Tensor) []*Tensor {
		g2 := g.Reshape(n, d)
		if pad >= 0 {
			g2 = Where(flat.EqScalar(float64(pad)).Unsqueeze(1), zeroLike(g2), g2)
		}
		z := Zeros(weight.shape, On(g.dev), Dtype(g.dtype))
		scatterRaw(z, 0, lineIndex(flat, 0, g2.shape), g2.view(), true)
		return []*Tensor{z}
	}
	// the gradient is linear in g: its adjoint gathers the rows again
	// (EmbeddingDenseBackward0)
	oshape := out.Shape()
	return recordTwice("EmbeddingBackward0", out, []*Tensor{weight}, []*Tensor{flat}, back,
		linearTwice("EmbeddingDenseBackward0", back, func(gg *Tensor) *Tensor {
			r := gg.IndexSelect(0, flat)
			if pad >= 0 {
				r = Where(flat.EqScalar(float64(pad)).Unsqueeze(1), zeroLike(r), r)
			}
			return r.Reshape(oshape...)
		}))
}

// linearHalfF32 is x·wᵀ in float32, unrounded, from two-byte x [N, in]
// and w [out, in] on the backend's half GEMM (backend.HalfMatMuler), or nil
// where it has none for them.
func linearHalfF32(x, w *Tensor) *Tensor {
	hm, ok := x.be().(backend.HalfMatMuler)
	if !ok {
		return nil
	}
	n, in, o := x.shape[0], x.shape[1], w.shape[0]
	xv, wv := x.view(), w.view()
	xv.Shape, xv.Strides = []int{1, n, in}, []int{n * in, x.strides[0], x.strides[1]}
	wv.Shape, wv.Strides = []int{1, in, o}, []int{in * o, w.strides[1], w.strides[0]}
	out := empty(Shape{n, o}, Float32, x.dev)
	ov := out.view()
	ov.Shape, ov.Strides = []int{1, n, o}, []int{n * o, o, 1}
	if !hm.MatMulHalfF32(ov, xv, wv) {
		out.Release()
		return nil
	}
	return out
}

// linearHalf is Linear on two-byte x [N, in], w and b: the forward in
// float32 (on the backend's half GEMM where it has one), rounded once; the backward as PyTorch's bf16 AddmmBackward0, each
// gradient a two-byte product (or sum) of the two-byte operands, accumulated
// in float32 and rounded once, without float32 copies.
func linearHalf(x, w, b *Tensor) *Tensor {
	sameDevice("linear", x, w, b)
	xd, wd, bd := x.Detach(), w.Detach(), b.Detach()
	var out *Tensor
	AutocastDisabled(func() {
		if p := linearHalfF32(xd, wd); p != nil { // the product in float32 from the two-byte operands
			out = p.Add(bd).Cast(x.dtype)
			p.Release()
			return
		}
		out = Linear(xd.Cast(Float32), wd.Cast(Float32), bd.Cast(Float32)).Cast(x.dtype)
	})
	return record("AddmmBackward0", out, []*Tensor{b, x, w}, savedIf(wd, x, xd, w), func(g *Tensor) []*Tensor {
		var gx, gw, gb *Tensor
		AutocastDisabled(func() {
			gb = gradIf(b, func() *Tensor { return g.Sum(Dims(0)) })
			gx = gradIf(x, func() *Tensor { return g.MatMul(wd) })
			gw = gradIf(w, func() *Tensor { return g.T().MatMul(xd) })
		})
		return []*Tensor{gb, gx, gw}
	})
}
