package linalg

import (
	"fmt"

	"github.com/emberml/ember"
)

// Inv returns the inverse of each square matrix of a, as torch.linalg.inv.
// A singular matrix panics with an *ember.ValueError carrying PyTorch's
// message ("The diagonal element 2 is zero, the inversion could not be
// completed because the input matrix is singular.").
func Inv(a *ember.Tensor) *ember.Tensor {
	const op = "linalg.inv"
	checkMatrix(op, "A", a, true)
	var out *ember.Tensor
	if isMeta(a) {
		out = empty(a, a.Shape())
	} else {
		b := load(a)
		parts := make([][]float64, len(b.data))
		for i, m := range b.data {
			lu := append([]float64(nil), m...)
			ipiv, info := luFactor(lu, b.n)
			if info > 0 {
				panic(&ember.ValueError{Op: op, Msg: batchMsg(len(b.batch) > 0, i, fmt.Sprintf("The diagonal element %d is zero, the inversion could not be completed because the input matrix is singular.", info))})
			}
			inverse(lu, ipiv, b.n)
			parts[i] = lu
		}
		out = store(a, a.Shape(), parts)
	}
	return record("LinalgInvExBackward0", out, saves(out), func(g *ember.Tensor) []*ember.Tensor {
		// gA = -A⁻ᵀ g A⁻ᵀ
		it := mT(out)
		return []*ember.Tensor{it.MatMul(g).MatMul(it).Neg()}
	}, a)
}

// Solve returns X with A X = B for each square matrix of a, as
// torch.linalg.solve (left=True). b is a batch of n×k matrices, or of
// vectors: b is taken as a vector when it is 1-D or has one dim fewer than
// a with the shape of a's dims but the last (PyTorch 1.13's rule), and X
// then has b's form. The batch dims of a and b broadcast. A singular matrix
// panics with an *ember.ValueError.
func Solve(a, b *ember.Tensor) *ember.Tensor {
	const op = "linalg.solve"
	checkFloat(op, a, b)
	checkMatrix(op, "A", a, true)
	sameDeviceDType(op, a, b)
	as, bs := a.Shape(), b.Shape()
	if len(bs) < 1 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{bs}, Msg: "The input tensor B must have at least 1 dimensions."})
	}
	n := as[len(as)-1]
	vec := len(bs) == 1 || (len(bs) == len(as)-1 && bs.Equal(as[:len(as)-1]))
	if vec {
		b = b.Unsqueeze(-1)
		bs = b.Shape()
	}
	if bs[len(bs)-2] != n {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{as, b.Shape()}, Msg: fmt.Sprintf("Incompatible shapes of A and B for the equation AX = B (%dx%d and %dx%d)", n, n, bs[len(bs)-2], bs[len(bs)-1])})
	}
	batch := ember.BroadcastShapes(op, as[:len(as)-2], bs[:len(bs)-2])
	x := solve(a.Expand(shapeOf(batch, n, n)...), b.Expand(shapeOf(batch, n, bs[len(bs)-1])...))
	if vec {
		x = x.Squeeze(-1)
	}
	return x
}

// solve is Solve for a and b of one batch shape, b a batch of matrices.
func solve(a, b *ember.Tensor) *ember.Tensor {
	const op = "linalg.solve"
	var out *ember.Tensor
	if isMeta(a) {
		out = empty(a, b.Shape())
	} else {
		am, bm := load(a), load(b)
		n, k := am.n, bm.n
		parts := make([][]float64, len(am.data))
		for i, m := range am.data {
			lu := append([]float64(nil), m...)
			ipiv, info := luFactor(lu, n)
			if info > 0 {
				panic(&ember.ValueError{Op: op, Msg: batchMsg(len(am.batch) > 0, i, "The solver failed because the input matrix is singular.")})
			}
			x := append([]float64(nil), bm.data[i]...)
			luSolve(lu, ipiv, n, x, k)
			parts[i] = x
		}
		out = store(a, b.Shape(), parts)
	}
	return record("LinalgSolveExBackward0", out, saves(out, a), func(g *ember.Tensor) []*ember.Tensor {
		// gB = A⁻ᵀ g, gA = -gB Xᵀ
		gb := solve(mT(a), g)
		return []*ember.Tensor{gb.MatMul(mT(out)).Neg(), gb}
	}, a, b)
}

// cofactors returns, per matrix, the determinant and (if want) the
// determinant's gradient det(A)·A⁻ᵀ. As in PyTorch 1.13, whose
// linalg_det_backward multiplies A⁻ᵀ by the determinant, it is zero at an
// exactly singular matrix (not the cofactor matrix).
func cofactors(b mats, want bool) (dets []float64, cofs [][]float64) {
	n := b.n
	dets = make([]float64, len(b.data))
	if want {
		cofs = make([][]float64, len(b.data))
	}
	for i, m := range b.data {
		lu := append([]float64(nil), m...)
		ipiv, info := luFactor(lu, n)
		dets[i] = luDet(lu, ipiv, n)
		if !want {
			continue
		}
		if info > 0 || dets[i] == 0 {
			cofs[i] = make([]float64, n*n)
			continue
		}
		inverse(lu, ipiv, n)
		c := transpose(lu, n, n)
		for j := range c {
			c[j] *= dets[i]
		}
		cofs[i] = c
	}
	return dets, cofs
}

// Det returns the determinant of each square matrix of a, as
// torch.linalg.det (1 for a 0×0 matrix). Its gradient is det(A)·A⁻ᵀ,
// zero at an exactly singular matrix as in PyTorch 1.13.
func Det(a *ember.Tensor) *ember.Tensor {
	const op = "linalg.det"
	checkMatrix(op, "A", a, true)
	s := a.Shape()
	batch := s[:len(s)-2]
	if isMeta(a) {
		out := empty(a, batch)
		return record("LinalgDetBackward0", out, saves(a, out), func(g *ember.Tensor) []*ember.Tensor {
			return []*ember.Tensor{g.Unsqueeze(-1).Unsqueeze(-1).Expand(s...)}
		}, a)
	}
	b := load(a)
	dets, cofs := cofactors(b, needsGrad(a))
	out := ember.FromSlice(dets, batch, ember.On(a.Device()), ember.Dtype(a.DType()))
	if cofs == nil {
		return out
	}
	cof := store(a, s, cofs)
	return record("LinalgDetBackward0", out, saves(a, out), func(g *ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{g.Unsqueeze(-1).Unsqueeze(-1).Mul(cof)}
	}, a)
}

// Slogdet returns the sign and the natural log of the absolute value of
// the determinant of each square matrix of a, as torch.linalg.slogdet: a
// singular matrix gives sign 0 and logabsdet -Inf. Only logabsdet has a
// gradient (A⁻ᵀ times its cotangent); sign's is zero, as PyTorch's for
// real inputs.
func Slogdet(a *ember.Tensor) (sign, logabsdet *ember.Tensor) {
	const op = "linalg.slogdet"
	checkMatrix(op, "A", a, true)
	s := a.Shape()
	batch := s[:len(s)-2]
	if isMeta(a) {
		sign, logabsdet = empty(a, batch), empty(a, batch)
	} else {
		b := load(a)
		sg, la := make([]float64, len(b.data)), make([]float64, len(b.data))
		for i, m := range b.data {
			lu := append([]float64(nil), m...)
			ipiv, _ := luFactor(lu, b.n)
			sg[i], la[i] = luSlogdet(lu, ipiv, b.n)
		}
		sign = ember.FromSlice(sg, batch, ember.On(a.Device()), ember.Dtype(a.DType()))
		logabsdet = ember.FromSlice(la, batch, ember.On(a.Device()), ember.Dtype(a.DType()))
	}
	if !needsGrad(a) {
		return sign, logabsdet
	}
	sign = record("LinalgSlogdetBackward0", sign, saves(a), func(g *ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{ember.ZerosLike(a)}
	}, a)
	var invT *ember.Tensor
	if isMeta(a) {
		invT = empty(a, s)
	} else {
		// A⁻ᵀ = (det·A⁻ᵀ)/det: NaN for a singular matrix.
		b := load(a)
		dets, cofs := cofactors(b, true)
		for i, c := range cofs {
			for j := range c {
				c[j] /= dets[i]
			}
		}
		invT = store(a, s, cofs)
	}
	logabsdet = record("LinalgSlogdetBackward0", logabsdet, saves(a), func(g *ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{g.Unsqueeze(-1).Unsqueeze(-1).Mul(invT)}
	}, a)
	return sign, logabsdet
}

// Cholesky returns the lower triangular L with A = L Lᵀ for each
// symmetric positive-definite matrix of a, reading only its lower
// triangle, or the upper U with A = Uᵀ U, reading only its upper triangle,
// when upper is set, as torch.linalg.cholesky. A matrix that is not positive-definite panics
// with an *ember.ValueError carrying PyTorch's message; CholeskyEx
// reports it instead.
func Cholesky(a *ember.Tensor, upper bool) *ember.Tensor {
	l, info := cholesky3("linalg.cholesky", a, upper)
	for i, k := range info {
		if k > 0 {
			panic(&ember.ValueError{Op: "linalg.cholesky", Msg: batchMsg(a.Dim() > 2, i, fmt.Sprintf("The factorization could not be completed because the input is not positive-definite (the leading minor of order %d is not positive-definite).", k))})
		}
	}
	return l
}

// CholeskyEx is Cholesky that does not panic on a matrix that is not
// positive-definite, as torch.linalg.cholesky_ex: info (int32, a's batch
// shape) is 0 where the factorization succeeded and the order of the
// first leading minor that is not positive-definite elsewhere, where L is
// only partly computed.
func CholeskyEx(a *ember.Tensor, upper bool) (l, info *ember.Tensor) {
	l, inf := cholesky3("linalg.cholesky_ex", a, upper)
	s := a.Shape()
	dev := a.Device()
	if isMeta(a) {
		return l, ember.Empty(s[:len(s)-2], ember.On(dev), ember.Dtype(ember.Int32))
	}
	v := make([]int32, len(inf))
	for i, k := range inf {
		v[i] = int32(k)
	}
	return l, ember.FromSlice(v, s[:len(s)-2], ember.On(dev))
}

func cholesky3(op string, a *ember.Tensor, upper bool) (*ember.Tensor, []int) {
	checkMatrix(op, "A", a, true)
	var out *ember.Tensor
	var info []int
	if isMeta(a) {
		out = empty(a, a.Shape())
	} else {
		b := load(a)
		parts := make([][]float64, len(b.data))
		info = make([]int, len(b.data))
		for i, m := range b.data {
			if upper { // U = Lᵀ of Aᵀ: reads A's upper triangle, as LAPACK's potrf('U')
				l, k := cholesky(transpose(m, b.n, b.n), b.n)
				parts[i], info[i] = transpose(l, b.n, b.n), k
				continue
			}
			parts[i], info[i] = cholesky(m, b.n)
		}
		out = store(a, a.Shape(), parts)
	}
	return record("LinalgCholeskyExBackward0", out, saves(out), func(g *ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{choleskyBackward(g, out, upper)}
	}, a), info
}

// choleskyBackward is PyTorch's cholesky_backward (Murray 2016):
// gA = sym(L⁻ᵀ Φ(Lᵀ gL) L⁻¹), Φ taking the lower triangle with the
// diagonal halved.
func choleskyBackward(gL, L *ember.Tensor, upper bool) *ember.Tensor {
	if upper {
		L, gL = mT(L), mT(gL)
	}
	li := Inv(L)
	phi := mT(L).MatMul(gL).Tril(0)
	phi = phi.Sub(phi.Diagonal(0, -2, -1).MulScalar(0.5).DiagEmbed(0, -2, -1))
	ga := mT(li).MatMul(phi).MatMul(li)
	return ga.Add(mT(ga)).MulScalar(0.5)
}

// SolveTriangular returns X with A X = B for each triangular matrix of a
// (upper or lower; only that triangle is read, and its diagonal is taken
// as ones when unitriangular is set), as torch.linalg.solve_triangular(A,
// B, upper=upper, left=True, unitriangular=unitriangular). b is a batch of
// n×k matrices; the batch dims broadcast. A zero on the diagonal gives Inf
// or NaN, not an error, as in PyTorch.
func SolveTriangular(a, b *ember.Tensor, upper, unitriangular bool) *ember.Tensor {
	const op = "linalg.solve_triangular"
	checkFloat(op, a, b)
	checkMatrix(op, "A", a, true)
	checkMatrix(op, "B", b, false)
	sameDeviceDType(op, a, b)
	as, bs := a.Shape(), b.Shape()
	n, k := as[len(as)-1], bs[len(bs)-1]
	if bs[len(bs)-2] != n {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{as, bs}, Msg: fmt.Sprintf("Incompatible shapes of A and B for the equation AX = B (%dx%d and %dx%d)", n, n, bs[len(bs)-2], k)})
	}
	batch := ember.BroadcastShapes(op, as[:len(as)-2], bs[:len(bs)-2])
	return solveTri(a.Expand(shapeOf(batch, n, n)...), b.Expand(shapeOf(batch, n, k)...), upper, unitriangular)
}

func solveTri(a, b *ember.Tensor, upper, unit bool) *ember.Tensor {
	var out *ember.Tensor
	if isMeta(a) {
		out = empty(a, b.Shape())
	} else {
		am, bm := load(a), load(b)
		n, k := am.n, bm.n
		parts := make([][]float64, len(am.data))
		for i, m := range am.data {
			x := append([]float64(nil), bm.data[i]...)
			for step := 0; step < n; step++ {
				r := step
				if upper {
					r = n - 1 - step
				}
				lo, hi := 0, r // the solved rows: below r if upper, above if lower
				if upper {
					lo, hi = r+1, n
				}
				for c := 0; c < k; c++ {
					s := x[r*k+c]
					for j := lo; j < hi; j++ {
						s -= m[r*n+j] * x[j*k+c]
					}
					if !unit {
						s /= m[r*n+r]
					}
					x[r*k+c] = s
				}
			}
			parts[i] = x
		}
		out = store(a, b.Shape(), parts)
	}
	return record("LinalgSolveTriangularBackward0", out, saves(a, out), func(g *ember.Tensor) []*ember.Tensor {
		// gB = A⁻ᵀ g (Aᵀ has the other triangle), gA = -gB Xᵀ on A's triangle
		gb := solveTri(mT(a), g, !upper, unit)
		ga := gb.MatMul(mT(out)).Neg()
		d := 0
		if unit {
			d = 1
		}
		if upper {
			ga = ga.Triu(d)
		} else {
			ga = ga.Tril(-d)
		}
		return []*ember.Tensor{ga, gb}
	}, a, b)
}
