package ember

import "fmt"

// Differentiable building blocks of neural networks (torch.nn.functional);
// the losses are in loss.go, GELU in activations.go, convolution, pooling
// and normalisation in conv.go, pool.go and norm.go. They are device-agnostic: each is composed from the backend's kernels,
// and records one node named as PyTorch's grad_fn where PyTorch does.
// Where PyTorch gathers by index and no gather kernel exists, these use a
// one-hot mask (Eq of the indices against an Arange) instead.

// Linear is x @ wᵀ + b (b may be nil), as torch.nn.functional.linear: x is
// [..., in], w is [out, in], b is [out]. A 2-D x with a bias records
// AddmmBackward0, as PyTorch does.
func Linear(x, w, b *Tensor) *Tensor {
	const name = "linear"
	x.live(name)
	w.live(name)
	if w.Dim() != 2 || x.Dim() == 0 || x.shape[x.Dim()-1] != w.shape[1] {
		shapeErr(name, "input and weight shapes cannot be multiplied", x.shape, w.shape)
	}
	if x.Dim() == 2 && b != nil {
		b.live(name)
		sameDevice(name, x, w, b)
		xd, wd, bd := x.Detach(), w.Detach(), b.Detach()
		out := bd.Add(xd.MatMul(wd.T()))
		return record("AddmmBackward0", out, []*Tensor{b, x, w}, savedIf(wd, x, xd, w), func(g *Tensor) []*Tensor {
			return []*Tensor{g,
				gradIf(x, func() *Tensor { return g.MatMul(wd) }),
				gradIf(w, func() *Tensor { return g.T().MatMul(xd) })}
		})
	}
	y := x.MatMul(w.T())
	if b != nil {
		y = y.Add(b)
	}
	return y
}

// Dropout zeroes each element with probability p and scales the others by
// 1/(1-p) when training; otherwise it returns x. The mask comes from Rand
// (Philox, so ManualSeed makes it repeatable).
func Dropout(x *Tensor, p float64, training bool) *Tensor {
	x.live("dropout")
	if p < 0 || p > 1 {
		panic(&ShapeError{Op: "dropout", Msg: fmt.Sprintf("dropout probability has to be between 0 and 1, but got %v", p)})
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
	mask := Rand(x.shape, On(x.dev), Dtype(x.dtype)).LtScalar(1 - p).Cast(x.dtype).MulScalar(scale)
	out := x.Detach().Mul(mask)
	return record("NativeDropoutBackward0", out, []*Tensor{x}, []*Tensor{mask}, func(g *Tensor) []*Tensor {
		return []*Tensor{g.Mul(mask)}
	})
}

// Embedding looks up rows of weight ([V, D]) at the integer indices idx
// (any shape), giving idx's shape + [D], as torch.nn.functional.embedding.
// It is a one-hot [n, V] mask times weight (no gather kernel exists), so it
// costs n·V memory; indices out of range give zero rows instead of an error.
func Embedding(idx, weight *Tensor) *Tensor {
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
	flat := idx.Cast(Int64).Reshape(-1, 1)
	n := flat.shape[0]
	oh := oneHot(flat, 1, v).Cast(weight.dtype)
	wd := weight.Detach()
	shape := append(idx.Shape(), d)
	out := oh.MatMul(wd).Reshape(shape...)
	return record("EmbeddingBackward0", out, []*Tensor{weight}, []*Tensor{oh}, func(g *Tensor) []*Tensor {
		return []*Tensor{oh.T().MatMul(g.Reshape(n, d))}
	})
}
