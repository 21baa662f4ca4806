package linalg

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// expectPanic fails unless f panics with an error of the type of target
// whose message contains msg.
func expectPanic[E error](t *testing.T, what, msg string, f func()) {
	t.Helper()
	err := ember.Try(f)
	var e E
	if !errors.As(err, &e) {
		t.Errorf("%s: got %v (%T), want a %T", what, err, err, e)
		return
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: message %q does not contain %q", what, err.Error(), msg)
	}
}

// TestErrors checks PyTorch's error conditions and messages (taken from
// PyTorch 1.13's RuntimeError / LinAlgError texts).
func TestErrors(t *testing.T) {
	eye := ember.Eye(3, ember.Dtype(ember.Float64))
	sing := ember.FromSlice([]float64{1, 2, 2, 4}, ember.Shape{2, 2})
	type (
		se = *ember.ShapeError
		de = *ember.DTypeError
		ve = *ember.ValueError
		ae = *ember.AutogradError
		me = *ember.DeviceMismatchError
	)
	expectPanic[se](t, "inv non-square", "linalg.inv: A must be batches of square matrices, but they are 3 by 4 matrices", func() { Inv(ember.Zeros(ember.Shape{3, 4})) })
	expectPanic[se](t, "inv 1-D", "linalg.inv: The input tensor A must have at least 2 dimensions.", func() { Inv(ember.Zeros(ember.Shape{3})) })
	expectPanic[de](t, "inv bf16", "linalg.inv: Low precision dtypes not supported. Got BFloat16", func() { Inv(ember.Zeros(ember.Shape{3, 3}, ember.Dtype(ember.BFloat16))) })
	expectPanic[de](t, "det f16", "Low precision dtypes not supported. Got Half", func() { Det(ember.Zeros(ember.Shape{3, 3}, ember.Dtype(ember.Float16))) })
	expectPanic[de](t, "inv int", "linalg.inv: Expected a floating point or complex tensor as input. Got Long", func() { Inv(ember.Zeros(ember.Shape{3, 3}, ember.Dtype(ember.Int64))) })
	expectPanic[ve](t, "inv singular", "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input matrix is singular.", func() { Inv(sing) })
	expectPanic[ve](t, "inv singular batched", "linalg.inv: (Batch element 1): The diagonal element 2 is zero", func() { Inv(ember.Stack([]*ember.Tensor{ember.Eye(2, ember.Dtype(ember.Float64)), sing}, 0)) })
	expectPanic[ve](t, "inv nil", "nil tensor", func() { Inv(nil) })
	expectPanic[ve](t, "solve singular", "linalg.solve: The solver failed because the input matrix is singular.", func() { Solve(sing, ember.Ones(ember.Shape{2}, ember.Dtype(ember.Float64))) })
	expectPanic[ve](t, "solve singular batched", "linalg.solve: (Batch element 1): The solver failed because the input matrix is singular.", func() {
		Solve(ember.Stack([]*ember.Tensor{ember.Eye(2, ember.Dtype(ember.Float64)), sing}, 0), ember.Ones(ember.Shape{2}, ember.Dtype(ember.Float64)))
	})
	expectPanic[se](t, "solve shapes", "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)", func() { Solve(eye, ember.Ones(ember.Shape{4}, ember.Dtype(ember.Float64))) })
	expectPanic[se](t, "solve batch", "linalg.solve", func() {
		Solve(eye.Expand(2, 3, 3), ember.Ones(ember.Shape{3, 3, 1}, ember.Dtype(ember.Float64)))
	})
	expectPanic[de](t, "solve dtypes", "linalg.solve: Expected A and B to have the same dtype, but found A of type Double and B of type Float instead", func() { Solve(eye, ember.Ones(ember.Shape{3})) })
	expectPanic[me](t, "solve devices", "linalg.solve", func() { Solve(eye, ember.Ones(ember.Shape{3}, ember.Dtype(ember.Float64), ember.On(ember.Meta))) })
	expectPanic[ve](t, "cholesky not PD", "linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the leading minor of order 2 is not positive-definite).", func() {
		Cholesky(ember.FromSlice([]float64{1, 2, 2, 1}, ember.Shape{2, 2}), false)
	})
	expectPanic[ve](t, "cholesky batched", "linalg.cholesky: (Batch element 0): The factorization could not be completed", func() { Cholesky(eye.Neg().Unsqueeze(0), false) })
	expectPanic[ve](t, "qr mode", "qr received unrecognized mode 'full' but expected one of 'reduced' (default), 'r', or 'complete'", func() { QR(eye, "full") })
	expectPanic[ve](t, "eigh uplo", "Expected UPLO argument to be 'L' or 'U', but got X", func() { Eigh(eye, "X") })
	expectPanic[ve](t, "matrix_norm ord", "linalg.matrix_norm: Order 3 not supported.", func() { MatrixNorm(eye, "3", false) })
	expectPanic[se](t, "matrix_norm dim", "linalg.matrix_norm: dim must be a 2-tuple. Got 1", func() { MatrixNorm(eye, "fro", false, 0) })
	expectPanic[se](t, "matrix_norm 1-D", "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.", func() { MatrixNorm(ember.Ones(ember.Shape{3}), "fro", false) })
	expectPanic[se](t, "norm 3-D", "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.", func() { Norm(eye.Unsqueeze(0), "2", false) })
	expectPanic[se](t, "norm fro 1-D", "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.", func() { Norm(ember.Ones(ember.Shape{2}), "fro", false) })
	expectPanic[se](t, "cross length", "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2", func() { Cross(ember.Ones(ember.Shape{2}), ember.Ones(ember.Shape{2}), -1) })
	expectPanic[de](t, "cross dtypes", "linalg.cross: expected scalar type Float but found Double", func() { Cross(ember.Ones(ember.Shape{3}), ember.Ones(ember.Shape{3}, ember.Dtype(ember.Float64)), -1) })
	expectPanic[de](t, "cross float and int", "linalg.cross: expected scalar type Float but found Long", func() { Cross(ember.Ones(ember.Shape{3}), ember.Ones(ember.Shape{3}, ember.Dtype(ember.Int64)), -1) })
	expectPanic[se](t, "cross dims", "linalg.cross: inputs must have the same number of dimensions.", func() { Cross(ember.Ones(ember.Shape{3}), ember.Ones(ember.Shape{2, 3}), -1) })
	expectPanic[se](t, "matrix_power non-square", "linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3 matrices", func() { MatrixPower(ember.Ones(ember.Shape{2, 3}), 2) })
	expectPanic[de](t, "matrix_power int negative", "linalg.inv: Expected a floating point or complex tensor as input. Got Long", func() {
		MatrixPower(ember.Ones(ember.Shape{2, 2}, ember.Dtype(ember.Int64)), -1)
	})
	expectPanic[se](t, "solve_triangular B 1-D", "linalg.solve_triangular: The input tensor B must have at least 2 dimensions.", func() { SolveTriangular(eye, ember.Ones(ember.Shape{3}, ember.Dtype(ember.Float64)), true, false) })
	expectPanic[se](t, "solve_triangular shapes", "linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)", func() {
		SolveTriangular(eye, ember.Ones(ember.Shape{4, 1}, ember.Dtype(ember.Float64)), true, false)
	})
	if v := SolveTriangular(ember.Zeros(ember.Shape{2, 2}), ember.Ones(ember.Shape{2, 1}), true, false).Float64s(); !math.IsNaN(v[0]) || !math.IsInf(v[1], 1) {
		t.Errorf("solve_triangular with a zero diagonal: %v, want [NaN +Inf] as PyTorch", v)
	}
	expectPanic[se](t, "lstsq dims", "linalg.lstsq: input.dim() must be greater or equal to other.dim()", func() { Lstsq(ember.Ones(ember.Shape{4, 3}), ember.Ones(ember.Shape{2, 4, 2})) })
	expectPanic[se](t, "lstsq rows", "linalg.lstsq: input.size(-2) should match other.size(-1)", func() { Lstsq(ember.Ones(ember.Shape{3, 2}), ember.Ones(ember.Shape{4})) })

	nan := ember.FromSlice([]float64{math.NaN(), 1, 1, 2}, ember.Shape{2, 2})
	for what, f := range map[string]func(){"svd": func() { SVD(nan, true) }, "pinv": func() { Pinv(nan) }, "matrix_rank": func() { MatrixRank(nan) }} {
		expectPanic[ve](t, what+" NaN", "linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values.", f)
	}

	// gradients PyTorch refuses
	w := ember.FromSlice([]float64{1, 2, 3, 4, 5, 7}, ember.Shape{3, 2}, ember.WithGrad())
	expectPanic[ae](t, "qr r backward", "The derivative of linalg.qr depends on Q, which is not computed when mode='r'", func() {
		_, r := QR(w, "r")
		r.Sum().Backward()
	})
	expectPanic[ae](t, "qr complete tall backward", "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.", func() {
		_, r := QR(w, "complete")
		r.Sum().Backward()
	})

	// upper reads the upper triangle (values from PyTorch 1.13)
	lowOK := ember.FromSlice([]float64{4, 100, 1, 3}, ember.Shape{2, 2})
	upOK := ember.FromSlice([]float64{4, 1, 100, 3}, ember.Shape{2, 2})
	expectPanic[ve](t, "cholesky upper reads the upper triangle", "leading minor of order 2", func() { Cholesky(lowOK, true) })
	expectPanic[ve](t, "cholesky lower reads the lower triangle", "leading minor of order 2", func() { Cholesky(upOK, false) })
	for what, got := range map[string]*ember.Tensor{"lower": Cholesky(lowOK, false), "upper": mT(Cholesky(upOK, true))} {
		if v := got.Float64s(); math.Abs(v[0]-2) > 1e-12 || v[1] != 0 || math.Abs(v[2]-0.5) > 1e-12 || math.Abs(v[3]-1.6583123951777) > 1e-12 {
			t.Errorf("cholesky %s: %v, want [2 0 0.5 1.6583123951777]", what, v)
		}
	}

	// CholeskyEx reports instead of panicking
	_, info := CholeskyEx(ember.Stack([]*ember.Tensor{eye, eye.Neg()}, 0), false)
	if got := info.Int32s(); info.DType() != ember.Int32 || got[0] != 0 || got[1] != 1 {
		t.Errorf("cholesky_ex info %v (%v), want [0 1]", got, info.DType())
	}
}

// TestEmpty: 0×0 matrices and empty batches give PyTorch's results
// (det 1, slogdet (1, 0), empty factors, identity Vh), never a Go panic.
func TestEmpty(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		z := func(s ...int) *ember.Tensor {
			return ember.Zeros(ember.Shape(s), ember.On(dev), ember.Dtype(ember.Float64))
		}
		shape := func(what string, got *ember.Tensor, want ...int) {
			t.Helper()
			if !got.Shape().Equal(ember.Shape(want)) {
				t.Errorf("%s: shape %v, want %v", what, got.Shape(), want)
			}
		}
		d := Det(z(2, 0, 0))
		if v := d.Float64s(); len(v) != 2 || v[0] != 1 || v[1] != 1 {
			t.Errorf("det of 0×0: %v, want [1 1]", v)
		}
		s, l := Slogdet(z(0, 0))
		if s.Item() != 1 || l.Item() != 0 {
			t.Errorf("slogdet of 0×0: %v %v, want 1 0", s.Item(), l.Item())
		}
		shape("inv empty batch", Inv(z(0, 3, 3)), 0, 3, 3)
		shape("det empty batch", Det(z(0, 3, 3)), 0)
		shape("solve empty batch", Solve(z(0, 3, 3), z(0, 3, 2)), 0, 3, 2)
		shape("cholesky 0×0", Cholesky(z(0, 0), false), 0, 0)
		q, r := QR(z(2, 0, 3), "reduced")
		shape("qr Q", q, 2, 0, 0)
		shape("qr R", r, 2, 0, 3)
		q, r = QR(z(2, 0), "complete")
		shape("qr complete Q", q, 2, 2)
		shape("qr complete R", r, 2, 0)
		if v := q.Float64s(); v[0] != 1 || v[3] != 1 || v[1] != 0 {
			t.Errorf("qr complete of 2×0: Q %v, want the identity", v)
		}
		ev, vec := Eigh(z(0, 0), "L")
		shape("eigh L", ev, 0)
		shape("eigh V", vec, 0, 0)
		u, sv, vh := SVD(z(0, 3), true)
		shape("svd U", u, 0, 0)
		shape("svd S", sv, 0)
		shape("svd Vh", vh, 3, 3)
		if v := vh.Float64s(); v[0] != 1 || v[4] != 1 || v[8] != 1 || v[1] != 0 {
			t.Errorf("svd of 0×3: Vh %v, want the identity", v)
		}
		shape("pinv", Pinv(z(0, 3)), 3, 0)
		if rk := MatrixRank(z(3, 0)); rk.Item() != 0 {
			t.Errorf("matrix_rank of 3×0: %v", rk.Item())
		}
	})
}

// TestMeta: shapes and dtypes without data.
func TestMeta(t *testing.T) {
	m := func(s ...int) *ember.Tensor { return ember.Empty(ember.Shape(s), ember.On(ember.Meta)) }
	check := func(what string, got *ember.Tensor, want ...int) {
		t.Helper()
		if got.Device() != ember.Meta || got.DType() != ember.Float32 || !got.Shape().Equal(ember.Shape(want)) {
			t.Errorf("%s: %v %v %v, want meta float32 %v", what, got.Device(), got.DType(), got.Shape(), want)
		}
	}
	check("inv", Inv(m(5, 3, 3)), 5, 3, 3)
	check("solve", Solve(m(5, 3, 3), m(3)), 5, 3)
	check("solve matrix", Solve(m(5, 1, 3, 3), m(4, 3, 2)), 5, 4, 3, 2)
	check("solve_triangular", SolveTriangular(m(3, 3), m(2, 3, 4), false, false), 2, 3, 4)
	check("det", Det(m(5, 3, 3)), 5)
	s, l := Slogdet(m(5, 3, 3))
	check("slogdet sign", s, 5)
	check("slogdet logabsdet", l, 5)
	check("cholesky", Cholesky(m(2, 4, 4), true), 2, 4, 4)
	q, r := QR(m(2, 5, 3), "reduced")
	check("qr Q", q, 2, 5, 3)
	check("qr R", r, 2, 3, 3)
	q, r = QR(m(2, 5, 3), "complete")
	check("qr complete Q", q, 2, 5, 5)
	check("qr complete R", r, 2, 5, 3)
	ev, v := Eigh(m(2, 4, 4), "U")
	check("eigh L", ev, 2, 4)
	check("eigh V", v, 2, 4, 4)
	check("eigvalsh", Eigvalsh(m(4, 4), "L"), 4)
	u, sv, vh := SVD(m(2, 5, 3), false)
	check("svd U", u, 2, 5, 3)
	check("svd S", sv, 2, 3)
	check("svd Vh", vh, 2, 3, 3)
	u, _, vh = SVD(m(2, 5, 3), true)
	check("svd full U", u, 2, 5, 5)
	check("svd full Vh", vh, 2, 3, 3)
	check("svdvals", Svdvals(m(3, 6)), 3)
	check("pinv", Pinv(m(2, 5, 3)), 2, 3, 5)
	check("lstsq", Lstsq(m(2, 5, 3), m(2, 5, 4)), 2, 3, 4)
	check("matrix_norm fro", MatrixNorm(m(2, 5, 3), "fro", false), 2)
	check("matrix_norm nuc keepdim", MatrixNorm(m(2, 5, 3), "nuc", true), 2, 1, 1)
	check("matrix_power", MatrixPower(m(2, 3, 3), -2), 2, 3, 3)
	check("cross", Cross(m(4, 3), m(1, 3), -1), 4, 3)
	check("cond", Cond(m(2, 3, 3), "1"), 2)
	if rk := MatrixRank(m(2, 5, 3)); !rk.Shape().Equal(ember.Shape{2}) || rk.DType() != ember.Int64 {
		t.Errorf("matrix_rank on meta: %v %v", rk.Shape(), rk.DType())
	}
}

// TestNoGradNoGraph: without an input that requires grad, no node is
// recorded; with one, each output of a decomposition has its own node.
func TestGradFns(t *testing.T) {
	a := ember.FromSlice([]float64{4, 1, 1, 3}, ember.Shape{2, 2})
	if Inv(a).GradFn() != "" {
		t.Errorf("inv without grad recorded %q", Inv(a).GradFn())
	}
	a.SetRequiresGrad(true)
	for what, got := range map[string]string{
		"inv": Inv(a).GradFn(), "det": Det(a).GradFn(), "cholesky": Cholesky(a, false).GradFn(),
		"pinv": Pinv(a).GradFn(), "eigvalsh": Eigvalsh(a, "L").GradFn(),
	} {
		if !strings.HasPrefix(got, "Linalg") {
			t.Errorf("%s: grad_fn %q", what, got)
		}
	}
	if v := Det(ember.FromSlice([]float64{math.Inf(1), 0, 0, 1}, ember.Shape{2, 2})).Item(); !math.IsInf(v, 1) {
		t.Errorf("det with Inf: %v", v)
	}
}

// TestInPlaceAfterward: an output (or input) a backward reads, modified in
// place before Backward, fails as in PyTorch.
func TestInPlaceAfterward(t *testing.T) {
	a := ember.FromSlice([]float64{4, 1, 1, 3}, ember.Shape{2, 2}, ember.WithGrad())
	inv := Inv(a)
	loss := inv.Sum()
	inv.Detach().MulScalarInPlace(2)
	expectPanic[*ember.AutogradError](t, "inv output modified", "modified by an inplace operation", func() { loss.Backward() })

	b := ember.FromSlice([]float64{1, 2}, nil, ember.WithGrad())
	aa := a.MulScalar(1)
	x := Solve(aa, b)
	aa.MulScalarInPlace(2)
	expectPanic[*ember.AutogradError](t, "solve input modified", "modified by an inplace operation", func() { x.Sum().Backward() })

	p := MatrixPower(a, 0)
	p.Sum().Backward()
	if g := a.Grad(); g == nil || g.Abs().Sum().Item() != 0 {
		t.Errorf("matrix_power(A, 0): gradient %v, want zeros", g)
	}
}

// The extreme powers finish (|math.MinInt| does not fit an int: the loop
// once never ended) and give the identity's powers.
func TestMatrixPowerExtremeExponents(t *testing.T) {
	eye := ember.Eye(2, ember.Dtype(ember.Float64))
	for _, n := range []int{math.MinInt, math.MaxInt, math.MinInt + 1} {
		got := MatrixPower(eye, n).Float64s()
		want := []float64{1, 0, 0, 1}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("MatrixPower(I, %d) = %v, want %v", n, got, want)
			}
		}
	}
	// a diagonal [[-1, 0], [0, 1]]: even powers are I, odd ones itself
	d := ember.FromSlice([]float64{-1, 0, 0, 1}, ember.Shape{2, 2})
	if got := MatrixPower(d, math.MinInt).Float64s(); got[0] != 1 {
		t.Fatalf("MatrixPower(d, MinInt) = %v, want the identity", got)
	}
	if got := MatrixPower(d, math.MaxInt).Float64s(); got[0] != -1 {
		t.Fatalf("MatrixPower(d, MaxInt) = %v, want d", got)
	}
}
