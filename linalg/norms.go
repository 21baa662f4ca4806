package linalg

import (
	"fmt"
	"math"
	"strconv"

	"github.com/emberml/ember"
)

// VectorNorm is torch.linalg.vector_norm(x, ord, dim, keepdim): the
// ord-norm of x over dims (all when none are given); ord may be ±Inf or 0.
// It is x.Norm.
func VectorNorm(x *ember.Tensor, ord float64, keepdim bool, dim ...int) *ember.Tensor {
	if x == nil {
		panic(&ember.ValueError{Op: "linalg.vector_norm", Msg: "nil tensor"})
	}
	opts := []ember.ReduceOption{}
	if len(dim) > 0 {
		opts = append(opts, ember.Dims(dim...))
	}
	if keepdim {
		opts = append(opts, ember.KeepDim())
	}
	return x.Norm(ord, opts...)
}

// matrixDims resolves MatrixNorm's dims against a (default -2, -1).
func matrixDims(op string, a *ember.Tensor, dim []int) (int, int) {
	if len(dim) == 0 {
		dim = []int{-2, -1}
	}
	if len(dim) != 2 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{a.Shape()}, Msg: fmt.Sprintf("dim must be a 2-tuple. Got %d", len(dim))})
	}
	r := a.Dim()
	wrap := func(d int) int {
		if d < -r || d >= r {
			panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{a.Shape()}, Msg: fmt.Sprintf("Dimension out of range (expected to be in range of [%d, %d], but got %d)", -r, r-1, d)})
		}
		if d < 0 {
			d += r
		}
		return d
	}
	d0, d1 := wrap(dim[0]), wrap(dim[1])
	if d0 == d1 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{a.Shape()}, Msg: fmt.Sprintf("dims must be different. Got (%d, %d)", dim[0], dim[1])})
	}
	return d0, d1
}

// MatrixNorm is torch.linalg.matrix_norm(A, ord, dim, keepdim): ord is
// "fro" (the default in PyTorch), "nuc", "inf", "-inf", "1", "-1", "2" or
// "-2"; dim names the two matrix dims (default -2, -1).
func MatrixNorm(a *ember.Tensor, ord string, keepdim bool, dim ...int) *ember.Tensor {
	const op = "linalg.matrix_norm"
	checkMatrix(op, "A", a, false)
	d0, d1 := matrixDims(op, a, dim)
	keep := func(t *ember.Tensor) *ember.Tensor {
		if keepdim {
			return t
		}
		return t.Squeeze(d0, d1)
	}
	kd := ember.KeepDim()
	switch ord {
	case "fro":
		return keep(a.Norm(2, ember.Dims(d0, d1), kd))
	case "1":
		return keep(a.Abs().Sum(ember.Dims(d0), kd).Max(ember.Dims(d1), kd))
	case "-1":
		return keep(a.Abs().Sum(ember.Dims(d0), kd).Min(ember.Dims(d1), kd))
	case "inf", "Inf":
		return keep(a.Abs().Sum(ember.Dims(d1), kd).Max(ember.Dims(d0), kd))
	case "-inf", "-Inf":
		return keep(a.Abs().Sum(ember.Dims(d1), kd).Min(ember.Dims(d0), kd))
	case "nuc", "2", "-2":
		var perm []int
		for i := 0; i < a.Dim(); i++ {
			if i != d0 && i != d1 {
				perm = append(perm, i)
			}
		}
		s := Svdvals(a.Permute(append(perm, d0, d1)...))
		var out *ember.Tensor
		switch ord {
		case "nuc":
			out = s.Sum(ember.Dims(-1))
		case "2":
			out = s.Max(ember.Dims(-1))
		default:
			out = s.Min(ember.Dims(-1))
		}
		if keepdim {
			ks := a.Shape()
			ks[d0], ks[d1] = 1, 1
			out = out.Reshape(ks...)
		}
		return out
	}
	panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("Order %s not supported.", ord)})
}

// Norm is torch.linalg.norm(A, ord, dim, keepdim). ord "" is PyTorch's
// None: the 2-norm of the flattened input when dim is empty, the vector
// 2-norm over one dim, the Frobenius norm over two. Otherwise ord is a
// matrix order (see MatrixNorm) when dim has two dims or a is 2-D and dim
// is empty, and a vector order ("2", "0.5", "inf", ...) when dim has one
// dim or a is 1-D.
func Norm(a *ember.Tensor, ord string, keepdim bool, dim ...int) *ember.Tensor {
	const op = "linalg.norm"
	checkFloat(op, a)
	if ord == "" {
		switch len(dim) {
		case 0:
			if keepdim {
				return VectorNorm(a, 2, true)
			}
			return VectorNorm(a.Flatten(0, -1), 2, false)
		case 1:
			return VectorNorm(a, 2, keepdim, dim...)
		case 2:
			return MatrixNorm(a, "fro", keepdim, dim...)
		}
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{a.Shape()}, Msg: fmt.Sprintf("dim must be an int or a 2-tuple. Got %d dims", len(dim))})
	}
	n := len(dim)
	if n == 0 {
		if a.Dim() != 1 && a.Dim() != 2 {
			panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{a.Shape()}, Msg: fmt.Sprintf("If dim is not specified but ord is, the input must be 1D or 2D. Got %dD.", a.Dim())})
		}
		n = a.Dim()
	}
	if n == 2 {
		return MatrixNorm(a, ord, keepdim, dim...)
	}
	if n != 1 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{a.Shape()}, Msg: fmt.Sprintf("dim must be an int or a 2-tuple. Got %d dims", n)})
	}
	if ord == "fro" || ord == "nuc" {
		panic(&ember.ShapeError{Op: "linalg.matrix_norm", Shapes: []ember.Shape{a.Shape()}, Msg: "The input tensor A must have at least 2 dimensions."})
	}
	p, err := strconv.ParseFloat(ord, 64)
	if err != nil {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("Order %s not supported.", ord)})
	}
	return VectorNorm(a, p, keepdim, dim...)
}

// MatrixPower returns A^n for each square matrix of a, as
// torch.linalg.matrix_power: the identity for n = 0 (with no gradient),
// Inv(A)^|n| for n < 0 (float inputs only), repeated squaring otherwise.
func MatrixPower(a *ember.Tensor, n int) *ember.Tensor {
	const op = "linalg.matrix_power"
	if a == nil {
		panic(&ember.ValueError{Op: op, Msg: "nil tensor"})
	}
	s := a.Shape()
	if len(s) < 2 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{s}, Msg: "The input tensor A must have at least 2 dimensions."})
	}
	if s[len(s)-1] != s[len(s)-2] {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{s}, Msg: fmt.Sprintf("A must be batches of square matrices, but they are %d by %d matrices", s[len(s)-2], s[len(s)-1])})
	}
	if n == 0 { // the identity, with a zero gradient as in PyTorch
		eye := ember.Eye(s[len(s)-1], ember.On(a.Device()), ember.Dtype(a.DType())).Expand(s...).Clone()
		if !a.DType().IsFloat() || !needsGrad(a) {
			return eye
		}
		return record("LinalgMatrixPowerBackward0", eye, nil, func(g *ember.Tensor) []*ember.Tensor {
			return []*ember.Tensor{ember.ZerosLike(a)}
		}, a)
	}
	u := uint64(n) // |n| as an unsigned count: -math.MinInt does not fit an int
	if n < 0 {
		a = Inv(a)
		u = -u
	}
	var out *ember.Tensor
	p := a
	for {
		if u&1 == 1 {
			if out == nil {
				out = p
			} else {
				out = out.MatMul(p)
			}
		}
		u >>= 1
		if u == 0 {
			break
		}
		p = p.MatMul(p)
	}
	if out == a {
		out = a.Clone()
	}
	return out
}

// MatrixRank returns the number of singular values of each matrix of a
// above PyTorch's default tolerance eps·max(m, n)·σ_max (eps of a's
// dtype), as torch.linalg.matrix_rank(A), an int64 tensor of a's batch
// shape.
func MatrixRank(a *ember.Tensor) *ember.Tensor {
	sh := a.Shape()
	if len(sh) >= 2 {
		return MatrixRankTol(a, 0, eps(a.DType())*float64(max(sh[len(sh)-2], sh[len(sh)-1])))
	}
	return MatrixRankTol(a, 0, 0)
}

// MatrixRankTol is torch.linalg.matrix_rank(A, atol=atol, rtol=rtol): the
// number of singular values above max(atol, rtol·σ_max).
func MatrixRankTol(a *ember.Tensor, atol, rtol float64) *ember.Tensor {
	const op = "linalg.matrix_rank"
	checkMatrix(op, "A", a, false)
	if atol < 0 || rtol < 0 || math.IsNaN(atol) || math.IsNaN(rtol) {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("atol and rtol must be non-negative, got %v and %v", atol, rtol)})
	}
	sh := a.Shape()
	batch := sh[:len(sh)-2]
	if min(sh[len(sh)-2], sh[len(sh)-1]) == 0 {
		return ember.Zeros(batch, ember.On(a.Device()), ember.Dtype(ember.Int64))
	}
	s := Svdvals(a.Detach())
	tol := s.Narrow(-1, 0, 1).MulScalar(rtol).Maximum(ember.Full(ember.Shape{}, atol, ember.On(a.Device()), ember.Dtype(a.DType())))
	return s.Gt(tol).Cast(ember.Int64).Sum(ember.Dims(-1))
}

// Cond returns the condition number of each matrix of a in the norm ord,
// as torch.linalg.cond: ord "" (PyTorch's None) or "2" is σ_max/σ_min,
// "-2" σ_min/σ_max (any m×n); "fro", "nuc", "inf", "-inf", "1" and "-1"
// are MatrixNorm(A)·MatrixNorm(A⁻¹) for square A, +Inf where A is
// singular.
func Cond(a *ember.Tensor, ord string) *ember.Tensor {
	const op = "linalg.cond"
	checkMatrix(op, "A", a, false)
	switch ord {
	case "", "2", "-2":
		s := Svdvals(a)
		k := s.Shape()[s.Dim()-1]
		if k == 0 {
			sh := a.Shape()
			return ember.Zeros(sh[:len(sh)-2], ember.On(a.Device()), ember.Dtype(a.DType()))
		}
		hi, lo := s.Select(-1, 0), s.Select(-1, k-1)
		if ord == "-2" {
			return lo.Div(hi)
		}
		return hi.Div(lo)
	case "fro", "nuc", "inf", "-inf", "1", "-1":
	default:
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("Order %s not supported.", ord)})
	}
	checkMatrix(op, "A", a, true)
	sh := a.Shape()
	batch := sh[:len(sh)-2]
	if isMeta(a) {
		return empty(a, batch)
	}
	// singular matrices: +Inf, as PyTorch (linalg_inv_ex's info)
	sign, _ := Slogdet(a.Detach())
	singular := sign.EqScalar(0)
	if singular.Any().Item() == 0 {
		return MatrixNorm(a, ord, false).Mul(MatrixNorm(Inv(a), ord, false))
	}
	eye := ember.Eye(sh[len(sh)-1], ember.On(a.Device()), ember.Dtype(a.DType()))
	safe := ember.Where(singular.Unsqueeze(-1).Unsqueeze(-1), eye.Expand(sh...), a)
	c := MatrixNorm(safe, ord, false).Mul(MatrixNorm(Inv(safe), ord, false))
	return ember.WhereScalar(singular, math.Inf(1), c)
}

// Cross is torch.linalg.cross(a, b, dim): the cross product of the
// 3-vectors along dim of a and b, which must have the same number of dims
// and dtype and broadcast.
func Cross(a, b *ember.Tensor, dim int) *ember.Tensor {
	const op = "linalg.cross"
	if a == nil || b == nil {
		panic(&ember.ValueError{Op: op, Msg: "nil tensor"})
	}
	if a.Dim() != b.Dim() {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{a.Shape(), b.Shape()}, Msg: "inputs must have the same number of dimensions."})
	}
	if a.DType() != b.DType() { // no type promotion, as in PyTorch
		panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{a.DType(), b.DType()}, Msg: fmt.Sprintf("expected scalar type %s but found %s", torchName(a.DType()), torchName(b.DType()))})
	}
	r := a.Dim()
	d := dim
	if d < -r || d >= r || r == 0 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{a.Shape(), b.Shape()}, Msg: fmt.Sprintf("Dimension out of range (expected to be in range of [%d, %d], but got %d)", -max(r, 1), max(r, 1)-1, dim)})
	}
	if d < 0 {
		d += r
	}
	if a.Shape()[d] != 3 || b.Shape()[d] != 3 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{a.Shape(), b.Shape()}, Msg: fmt.Sprintf("inputs dimension %d must have length 3. Got %d and %d", dim, a.Shape()[d], b.Shape()[d])})
	}
	c := func(t *ember.Tensor, i int) *ember.Tensor { return t.Narrow(d, i, 1) }
	x := c(a, 1).Mul(c(b, 2)).Sub(c(a, 2).Mul(c(b, 1)))
	y := c(a, 2).Mul(c(b, 0)).Sub(c(a, 0).Mul(c(b, 2)))
	z := c(a, 0).Mul(c(b, 1)).Sub(c(a, 1).Mul(c(b, 0)))
	return ember.Cat([]*ember.Tensor{x, y, z}, d)
}
