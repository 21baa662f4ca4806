// Package linalg is torch.linalg (PyTorch 1.13) for ember tensors:
// inverses and (triangular) solves, determinants, Cholesky, QR, symmetric
// eigendecomposition, SVD, pseudo-inverse, least squares, norms, matrix
// powers and ranks, and cross products.
//
// Every function works on a batch of matrices: the last two dims of its
// input are the matrix, the dims before them the batch, as in PyTorch.
// Inputs are float32 or float64; bfloat16 and float16 panic with a
// *ember.DTypeError ("Low precision dtypes not supported"), integer
// tensors with PyTorch's "Expected a floating point or complex tensor"
// message. Misuse (too few dims, non-square matrices, batch shapes that do
// not broadcast) panics with an *ember.ShapeError naming the op; a
// singular matrix given to Inv or Solve and a matrix that is not
// positive-definite given to Cholesky panic with an *ember.ValueError
// carrying PyTorch's message (torch.linalg.LinAlgError), as does a matrix
// holding Inf or NaN given to the SVD-based functions (SVD, Svdvals, Pinv,
// Lstsq, MatrixRank, the nuclear and 2-norms, Cond).
//
// Numerics: the decompositions are computed on the host in float64 with
// gonum's LAPACK port (lapack/gonum) and rounded to float32 for float32
// inputs, where PyTorch 1.13 on the CPU calls LAPACK in float32: results
// agree within float32's tolerance, not bit for bit. A tensor on another
// device (CUDA) is copied to the host, decomposed there and the result
// copied back: there is no cuSOLVER path yet. On the meta device the
// functions return results of the right shape and dtype without data.
//
// Autograd follows PyTorch's formulas (FunctionsManual.cpp): each
// backward is written with ordinary ember ops, so it runs on the tensor's
// own device. Decompositions with several outputs (QR, Eigh, SVD,
// Slogdet) are computed once; each output carries its own node whose
// backward is the vector-Jacobian product with the other outputs'
// cotangents zero, which sums to the full one. As in PyTorch, the
// gradients of eigenvectors and singular vectors are only defined for
// distinct eigenvalues and singular values, and for gauge-invariant
// functions of them. Gradients are first order: ember has no
// create_graph.
package linalg

import (
	"fmt"

	"github.com/emberml/ember"
)

// torchName is the dtype's name in PyTorch's C++ messages.
func torchName(dt ember.DType) string {
	switch dt {
	case ember.Float32:
		return "Float"
	case ember.Float64:
		return "Double"
	case ember.BFloat16:
		return "BFloat16"
	case ember.Float16:
		return "Half"
	case ember.Int64:
		return "Long"
	case ember.Int32:
		return "Int"
	case ember.Bool:
		return "Bool"
	}
	return dt.String()
}

// checkFloat panics unless every t is float32 or float64.
func checkFloat(op string, ts ...*ember.Tensor) {
	for _, t := range ts {
		if t == nil {
			panic(&ember.ValueError{Op: op, Msg: "nil tensor"})
		}
		dt := t.DType()
		switch {
		case dt == ember.Float32 || dt == ember.Float64:
		case dt == ember.BFloat16 || dt == ember.Float16:
			panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{dt}, Msg: "Low precision dtypes not supported. Got " + torchName(dt)})
		default:
			panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{dt}, Msg: "Expected a floating point or complex tensor as input. Got " + torchName(dt)})
		}
	}
}

// checkMatrix panics unless a is a float batch of matrices (2 dims or
// more), square if square is set; name is the argument's name in messages.
func checkMatrix(op, name string, a *ember.Tensor, square bool) {
	checkFloat(op, a)
	s := a.Shape()
	if len(s) < 2 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{s}, Msg: fmt.Sprintf("The input tensor %s must have at least 2 dimensions.", name)})
	}
	if square && s[len(s)-1] != s[len(s)-2] {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{s}, Msg: fmt.Sprintf("%s must be batches of square matrices, but they are %d by %d matrices", name, s[len(s)-2], s[len(s)-1])})
	}
}

// sameDeviceDType panics with a *ember.DeviceMismatchError unless a and b share
// a device, and with a *ember.DTypeError unless they share a dtype.
func sameDeviceDType(op string, a, b *ember.Tensor) {
	if a.Device() != b.Device() {
		panic(&ember.DeviceMismatchError{Op: op, Devices: []ember.Device{a.Device(), b.Device()}})
	}
	if a.DType() != b.DType() {
		panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{a.DType(), b.DType()}, Msg: fmt.Sprintf("Expected A and B to have the same dtype, but found A of type %s and B of type %s instead", torchName(a.DType()), torchName(b.DType()))})
	}
}

func isMeta(t *ember.Tensor) bool { return t.Device() == ember.Meta }

// mats is a batch of row-major m×n float64 matrices read from the host.
type mats struct {
	batch ember.Shape
	m, n  int
	data  [][]float64
}

// load reads a (any device but meta) as a batch of matrices.
func load(a *ember.Tensor) mats {
	s := a.Shape()
	r := len(s)
	b := mats{batch: s[:r-2], m: s[r-2], n: s[r-1]}
	all := a.Float64s()
	sz := b.m * b.n
	cnt := b.batch.NumElements()
	b.data = make([][]float64, cnt)
	for i := range b.data {
		b.data[i] = all[i*sz : (i+1)*sz : (i+1)*sz]
	}
	return b
}

// shapeOf is batch followed by dims.
func shapeOf(batch ember.Shape, dims ...int) ember.Shape {
	return append(append(ember.Shape{}, batch...), dims...)
}

// store builds a tensor of shape from per-matrix slices, on like's device
// and in like's dtype (float32 rounds once from float64).
func store(like *ember.Tensor, shape ember.Shape, parts [][]float64) *ember.Tensor {
	flat := make([]float64, 0, shape.NumElements())
	for _, p := range parts {
		flat = append(flat, p...)
	}
	return ember.FromSlice(flat, shape, ember.On(like.Device()), ember.Dtype(like.DType()))
}

// empty is a tensor of shape without data on like's device (for meta).
func empty(like *ember.Tensor, shape ember.Shape) *ember.Tensor {
	return ember.Empty(shape, ember.On(like.Device()), ember.Dtype(like.DType()))
}

// fn is a Function whose output is precomputed: Apply records it with the
// given backward. Forward saves the tensors backward reads, so that
// modifying one in place before Backward fails as in PyTorch ("modified by
// an inplace operation").
type fn struct {
	name  string
	out   *ember.Tensor
	saved []*ember.Tensor
	back  func(g *ember.Tensor) []*ember.Tensor
}

func (f *fn) Name() string { return f.name }
func (f *fn) Forward(ctx *ember.FunctionCtx, _ []*ember.Tensor) *ember.Tensor {
	ctx.SaveForBackward(f.saved...)
	return f.out
}
func (f *fn) Backward(_ *ember.FunctionCtx, g *ember.Tensor) []*ember.Tensor {
	return f.back(g)
}

// OnceDifferentiable marks fn's backward (over the detached saved
// tensors) as not differentiable: a second derivative panics.
func (f *fn) OnceDifferentiable() {}

// saves lists the tensors a backward reads.
func saves(ts ...*ember.Tensor) []*ember.Tensor { return ts }

// record returns out as the output of a node named name over inputs,
// whose backward reads saved.
func record(name string, out *ember.Tensor, saved []*ember.Tensor, back func(g *ember.Tensor) []*ember.Tensor, inputs ...*ember.Tensor) *ember.Tensor {
	return ember.Apply(&fn{name: name, out: out, saved: saved, back: back}, inputs...)
}

// needsGrad reports whether some input will record a node.
func needsGrad(ts ...*ember.Tensor) bool {
	if !ember.IsGradEnabled() {
		return false
	}
	for _, t := range ts {
		if t != nil && t.RequiresGrad() {
			return true
		}
	}
	return false
}

// mT is the transpose of the last two dims.
func mT(t *ember.Tensor) *ember.Tensor { return t.Transpose(-2, -1) }

// eyeLike is the n×n identity on t's device and dtype.
func eyeLike(t *ember.Tensor, n int) *ember.Tensor {
	return ember.Eye(n, ember.On(t.Device()), ember.Dtype(t.DType()))
}

// batchMsg prefixes a per-matrix error with PyTorch's "(Batch element i): ".
func batchMsg(batched bool, i int, msg string) string {
	if batched {
		return fmt.Sprintf("(Batch element %d): %s", i, msg)
	}
	return msg
}
