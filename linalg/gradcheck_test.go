package linalg

import (
	"math"
	"testing"

	"github.com/emberml/ember"
)

// gin is a float64 gradcheck input.
type gin struct {
	shape ember.Shape
	data  []float64
}

// spread returns deterministic values of shape in about [-1, 1], plus
// diag on the diagonal of each trailing square matrix.
func spread(seed float64, diag float64, shape ...int) gin {
	s := ember.Shape(shape)
	d := make([]float64, s.NumElements())
	for i := range d {
		d[i] = math.Sin(1.7*float64(i*i) + seed) // not a plain sinusoid: those are rank 2
	}
	if r := len(s); r >= 2 && s[r-1] == s[r-2] {
		n := s[r-1]
		for i := range d {
			if j := i % (n * n); j/n == j%n {
				d[i] += diag
			}
		}
	}
	return gin{s, d}
}

// weights returns deterministic weights for an output of shape s.
func weights(s ember.Shape, k int) *ember.Tensor {
	d := make([]float64, s.NumElements())
	for i := range d {
		d[i] = math.Cos(0.9*float64(i*i) + float64(k))
	}
	return ember.FromSlice(d, s)
}

// gradcheck compares the gradient of Σ_k sum(w_k · f(x)_k) with central
// differences, in float64 on the CPU.
func gradcheck(t *testing.T, name string, f func(in []*ember.Tensor) []*ember.Tensor, ins ...gin) {
	t.Helper()
	loss := func(in []*ember.Tensor) *ember.Tensor {
		var l *ember.Tensor
		for k, o := range f(in) {
			term := o.Mul(weights(o.Shape(), k)).Sum()
			if l == nil {
				l = term
			} else {
				l = l.Add(term)
			}
		}
		return l
	}
	leaves := make([]*ember.Tensor, len(ins))
	for i, g := range ins {
		leaves[i] = ember.FromSlice(append([]float64(nil), g.data...), g.shape, ember.WithGrad())
	}
	loss(leaves).Backward()
	const h = 1e-6
	for i, g := range ins {
		an := leaves[i].Grad().Float64s()
		for j := range g.data {
			eval := func(delta float64) float64 {
				in := make([]*ember.Tensor, len(ins))
				for k, gk := range ins {
					d := append([]float64(nil), gk.data...)
					if k == i {
						d[j] += delta
					}
					in[k] = ember.FromSlice(d, gk.shape)
				}
				var v float64
				ember.NoGrad(func() { v = loss(in).Item() })
				return v
			}
			num := (eval(h) - eval(-h)) / (2 * h)
			if math.Abs(num-an[j]) > 1e-5*(1+math.Abs(num)) {
				t.Errorf("%s: d/d input %d [%d]: analytic %v, numeric %v", name, i, j, an[j], num)
				return
			}
		}
	}
}

func outs(ts ...*ember.Tensor) []*ember.Tensor { return ts }

// TestGradcheck checks every differentiable function's gradient against
// finite differences in float64 (the fixtures check PyTorch's values).
func TestGradcheck(t *testing.T) {
	sq := spread(0.3, 3, 2, 3, 3)
	tall, wide := spread(1.1, 0, 2, 4, 3), spread(2.2, 0, 2, 3, 5)
	sym := func(x *ember.Tensor) *ember.Tensor { return x.Add(mT(x)) }
	spd := func(x *ember.Tensor) *ember.Tensor { return x.MatMul(mT(x)).Add(eyeLike(x, 3)) }
	svdOuts := func(full bool) func(in []*ember.Tensor) []*ember.Tensor {
		return func(in []*ember.Tensor) []*ember.Tensor {
			u, s, vh := SVD(in[0], full)
			k := s.Shape()[s.Dim()-1]
			u, vh = u.Narrow(-1, 0, k), vh.Narrow(-2, 0, k)
			return outs(s, u.Mul(u), vh.Mul(vh), u.Mul(s.Unsqueeze(-2)).MatMul(vh))
		}
	}
	cases := []struct {
		name string
		f    func(in []*ember.Tensor) []*ember.Tensor
		ins  []gin
	}{
		{"inv", func(in []*ember.Tensor) []*ember.Tensor { return outs(Inv(in[0])) }, []gin{sq}},
		{"solve", func(in []*ember.Tensor) []*ember.Tensor { return outs(Solve(in[0], in[1])) }, []gin{sq, spread(0.5, 0, 3, 2)}},
		{"solve_vec", func(in []*ember.Tensor) []*ember.Tensor { return outs(Solve(in[0], in[1])) }, []gin{sq, spread(0.7, 0, 2, 3)}},
		{"solve_triangular", func(in []*ember.Tensor) []*ember.Tensor {
			return outs(SolveTriangular(in[0], in[1], true, false), SolveTriangular(in[0], in[1], false, true))
		}, []gin{sq, spread(0.5, 0, 3, 2)}},
		{"det", func(in []*ember.Tensor) []*ember.Tensor { return outs(Det(in[0])) }, []gin{sq}},
		{"slogdet", func(in []*ember.Tensor) []*ember.Tensor { _, l := Slogdet(in[0]); return outs(l) }, []gin{sq}},
		{"cholesky", func(in []*ember.Tensor) []*ember.Tensor { return outs(Cholesky(spd(in[0]), false)) }, []gin{sq}},
		{"cholesky_upper", func(in []*ember.Tensor) []*ember.Tensor { return outs(Cholesky(spd(in[0]), true)) }, []gin{sq}},
		{"qr_tall", func(in []*ember.Tensor) []*ember.Tensor { q, r := QR(in[0], "reduced"); return outs(q, r) }, []gin{tall}},
		{"qr_wide", func(in []*ember.Tensor) []*ember.Tensor { q, r := QR(in[0], "reduced"); return outs(q, r) }, []gin{wide}},
		{"qr_complete", func(in []*ember.Tensor) []*ember.Tensor { q, r := QR(in[0], "complete"); return outs(q, r) }, []gin{wide}},
		{"eigh", func(in []*ember.Tensor) []*ember.Tensor {
			l, v := Eigh(sym(in[0]), "L")
			return outs(l, v.Mul(v), v.MatMul(l.DiagEmbed(0, -2, -1)).MatMul(mT(v)))
		}, []gin{sq}},
		{"eigvalsh", func(in []*ember.Tensor) []*ember.Tensor { return outs(Eigvalsh(sym(in[0]), "U")) }, []gin{sq}},
		{"svd_tall", svdOuts(false), []gin{tall}},
		{"svd_wide", svdOuts(false), []gin{wide}},
		{"svd_full", svdOuts(true), []gin{wide}},
		{"svdvals", func(in []*ember.Tensor) []*ember.Tensor { return outs(Svdvals(in[0])) }, []gin{tall}},
		{"pinv_tall", func(in []*ember.Tensor) []*ember.Tensor { return outs(Pinv(in[0])) }, []gin{tall}},
		{"pinv_wide", func(in []*ember.Tensor) []*ember.Tensor { return outs(Pinv(in[0])) }, []gin{wide}},
		{"lstsq", func(in []*ember.Tensor) []*ember.Tensor { return outs(Lstsq(in[0], in[1])) }, []gin{tall, spread(0.9, 0, 2, 4, 2)}},
		{"matrix_power", func(in []*ember.Tensor) []*ember.Tensor { return outs(MatrixPower(in[0], -3), MatrixPower(in[0], 5)) }, []gin{sq}},
		{"cond", func(in []*ember.Tensor) []*ember.Tensor { return outs(Cond(in[0], ""), Cond(in[0], "fro")) }, []gin{sq}},
		{"cross", func(in []*ember.Tensor) []*ember.Tensor { return outs(Cross(in[0], in[1], 1)) }, []gin{spread(0.1, 0, 2, 3, 2), spread(0.4, 0, 1, 3, 2)}},
	}
	for _, o := range []string{"fro", "nuc", "inf", "-inf", "1", "-1", "2", "-2"} {
		cases = append(cases, struct {
			name string
			f    func(in []*ember.Tensor) []*ember.Tensor
			ins  []gin
		}{"matrix_norm_" + o, func(in []*ember.Tensor) []*ember.Tensor { return outs(MatrixNorm(in[0], o, false)) }, []gin{tall}})
	}
	for _, c := range cases {
		gradcheck(t, c.name, c.f, c.ins...)
	}
}
