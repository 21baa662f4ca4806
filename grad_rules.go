package ember

import (
	"math"

	"github.com/emberml/ember/backend"
)

// The gradient rules of the op table's elementwise ops, indexed by op. A
// row that names a GradFn must have a rule here: TestEveryOpHasAGradient
// checks that and runs a finite-difference gradcheck of every such op on
// every device, and recording an op without its rule panics rather than
// return an undifferentiable result.
//
// A rule gets the incoming gradient g and the detached tensors its row's
// Saves names (nil otherwise): x (the promoted input) and y (the result).

// unaryRule returns the gradient with respect to x.
type unaryRule func(g, x, y *Tensor, p backend.Params) *Tensor

// binaryRule returns the gradients with respect to a and b; need says
// which are wanted (the other may be left nil).
type binaryRule func(g, a, b, y *Tensor, need [2]bool) (ga, gb *Tensor)

// scalarOf is a zero-dim tensor of v with t's dtype and device.
func scalarOf(t *Tensor, v float64) *Tensor { return Full(Shape{}, v, On(t.dev), Dtype(t.dtype)) }

func zeroGrad(g, _, _ *Tensor, _ backend.Params) *Tensor { return ZerosLike(g) }

var (
	unaryRules  [backend.NumUnaryOps]unaryRule
	binaryRules [backend.NumBinaryOps]binaryRule
)

// The rules call ops that record through these tables: set them in init
// to break the initialization cycle.
func init() { unaryRules, binaryRules = unaryRuleTable(), binaryRuleTable() }

func unaryRuleTable() [backend.NumUnaryOps]unaryRule {
	return [backend.NumUnaryOps]unaryRule{
		backend.Neg:  func(g, _, _ *Tensor, _ backend.Params) *Tensor { return g.Neg() },
		backend.Abs:  func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Mul(x.Sign()) },
		backend.Exp:  func(g, _, y *Tensor, _ backend.Params) *Tensor { return g.Mul(y) },
		backend.Log:  func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Div(x) },
		backend.Sqrt: func(g, _, y *Tensor, _ backend.Params) *Tensor { return g.Div(y.MulScalar(2)) },
		backend.Rsqrt: func(g, _, y *Tensor, _ backend.Params) *Tensor {
			return g.Mul(y.Mul(y).Mul(y)).MulScalar(-0.5)
		},
		backend.Sin:     func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Mul(x.Cos()) },
		backend.Cos:     func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Mul(x.Sin()).Neg() },
		backend.Tanh:    func(g, _, y *Tensor, _ backend.Params) *Tensor { return g.Mul(y.Mul(y).RSubScalar(1)) },
		backend.Sigmoid: func(g, _, y *Tensor, _ backend.Params) *Tensor { return g.Mul(y.Mul(y.RSubScalar(1))) },
		// zero where y <= 0; NaN passes the gradient (PyTorch's threshold_backward)
		backend.ReLU: func(g, _, y *Tensor, _ backend.Params) *Tensor {
			if d := reluGradFused(g, y); d != nil {
				return d
			}
			return Where(y.Le(zeroLike(y)), zeroLike(g), g)
		},
		backend.Sign:   zeroGrad,
		backend.Floor:  zeroGrad,
		backend.Ceil:   zeroGrad,
		backend.Round:  zeroGrad,
		backend.Trunc:  zeroGrad,
		backend.Square: func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Mul(x).MulScalar(2) },
		backend.Log1p:  func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Div(x.AddScalar(1)) },
		backend.Expm1:  func(g, _, y *Tensor, _ backend.Params) *Tensor { return g.Mul(y.AddScalar(1)) },
		backend.Erf: func(g, x, _ *Tensor, _ backend.Params) *Tensor {
			return g.Mul(x.Mul(x).Neg().Exp()).MulScalar(2 / math.Sqrt(math.Pi))
		},
		backend.Reciprocal: func(g, _, y *Tensor, _ backend.Params) *Tensor { return g.Mul(y.Mul(y)).Neg() },
		backend.Clamp: func(g, x, _ *Tensor, p backend.Params) *Tensor {
			in := x.Ge(scalarOf(x, p[0])).LogicalAnd(x.Le(scalarOf(x, p[1])))
			return Where(in, g, zeroLike(g))
		},
		backend.PowScalar: func(g, x, _ *Tensor, p backend.Params) *Tensor {
			if p[0] == 0 {
				return ZerosLike(g)
			}
			return g.Mul(x.PowScalar(p[0] - 1)).MulScalar(p[0])
		},
		backend.LeakyReLU: func(g, x, _ *Tensor, p backend.Params) *Tensor {
			return Where(x.GtScalar(0), g, g.MulScalar(p[0]))
		},

		// d/dx x·σ(x) = σ(x)·(1 + x·(1 - σ(x))), in PyTorch's silu_backward's
		// order of ops: σ = 1/(1 + e^-x), g·σ·(1 + x·(1 - σ)) (each op
		// rounds in a two-byte float there, as in PyTorch 1.13's kernel)
		backend.SiLU: func(g, x, _ *Tensor, _ backend.Params) *Tensor {
			s := x.Neg().Exp().AddScalar(1).Reciprocal()
			return g.Mul(s).Mul(x.Mul(s.RSubScalar(1)).AddScalar(1))
		},
		// σ(beta·x) below the threshold, 1 above (as PyTorch's softplus_backward)
		backend.Softplus: func(g, x, _ *Tensor, p backend.Params) *Tensor {
			bx := x.MulScalar(p[0])
			return Where(bx.GtScalar(p[1]), g, g.Mul(bx.Sigmoid()))
		},
		// d/dx x·tanh(sp(x)) = tanh(sp) + x·σ(x)·(1 - tanh²(sp))
		backend.Mish: func(g, x, _ *Tensor, _ backend.Params) *Tensor {
			t := x.Softplus(1, 20).Tanh()
			return g.Mul(t.Add(x.Mul(x.Sigmoid()).Mul(t.Mul(t).RSubScalar(1))))
		},
		// 0 below -3, x/3 + 1/2 between, 1 above 3 (PyTorch's hardswish_backward)
		backend.Hardswish: func(g, x, _ *Tensor, _ backend.Params) *Tensor {
			mid := g.Mul(x.DivScalar(3).AddScalar(0.5))
			return Where(x.LtScalar(-3), zeroLike(g), Where(x.Le(scalarOf(x, 3)), mid, g))
		},
		// 1/6 strictly inside (-3, 3), 0 outside (PyTorch's hardsigmoid_backward)
		backend.Hardsigmoid: func(g, x, _ *Tensor, _ backend.Params) *Tensor {
			in := x.GtScalar(-3).LogicalAnd(x.LtScalar(3))
			// PyTorch multiplies by the float32 constant 1/6 whatever the dtype
			return Where(in, g.MulScalar(float64(float32(1.0/6))), zeroLike(g))
		},
		// alpha·e^x where x <= 0, else 1 (NaN passes g, as PyTorch's
		// elu_backward; alpha·e^x rather than y + alpha, which cancels)
		backend.ELU: func(g, x, _ *Tensor, p backend.Params) *Tensor {
			return Where(x.Le(zeroLike(x)), g.Mul(x.Exp()).MulScalar(p[0]), g)
		},
		// d/dx x/2·(1+tanh(u)), u = β(x + κx³): (1+tanh u)/2 + x/2·(1-tanh²u)·β(1+3κx²)
		backend.GELUTanh: func(g, x, _ *Tensor, _ backend.Params) *Tensor {
			const beta, kappa = 0.7978845608028654, 0.044715
			x2 := x.Mul(x)
			t := x.Add(x2.Mul(x).MulScalar(kappa)).MulScalar(beta).Tanh()
			du := x2.MulScalar(3 * kappa).AddScalar(1).MulScalar(beta)
			left := t.AddScalar(1).MulScalar(0.5)
			right := x.MulScalar(0.5).Mul(t.Mul(t).RSubScalar(1)).Mul(du)
			return g.Mul(left.Add(right))
		},
		backend.Log2:  func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Div(x.MulScalar(math.Ln2)) },
		backend.Log10: func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Div(x.MulScalar(math.Ln10)) },
		backend.Exp2:  func(g, _, y *Tensor, _ backend.Params) *Tensor { return g.Mul(y).MulScalar(math.Ln2) },
		// the gradient passes where x is finite
		backend.NanToNum: func(g, x, _ *Tensor, _ backend.Params) *Tensor {
			return Where(x.IsNaN().LogicalOr(x.IsInf()), zeroLike(g), g)
		},
		backend.Tan:     func(g, _, y *Tensor, _ backend.Params) *Tensor { return g.Mul(y.Mul(y).AddScalar(1)) },
		backend.Asin:    func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Mul(x.Mul(x).RSubScalar(1).Rsqrt()) },
		backend.Acos:    func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Mul(x.Mul(x).RSubScalar(1).Rsqrt()).Neg() },
		backend.Atan:    func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Div(x.Mul(x).AddScalar(1)) },
		backend.Sinh:    func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Mul(x.Cosh()) },
		backend.Cosh:    func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Mul(x.Sinh()) },
		backend.Asinh:   func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Mul(x.Mul(x).AddScalar(1).Rsqrt()) },
		backend.Acosh:   func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Mul(x.Mul(x).SubScalar(1).Rsqrt()) },
		backend.Atanh:   func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Div(x.Mul(x).RSubScalar(1)) },
		backend.Lgamma:  func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Mul(x.Digamma()) },
		backend.Digamma: func(g, x, _ *Tensor, _ backend.Params) *Tensor { return g.Mul(x.Polygamma(1)) },
		backend.Polygamma: func(g, x, _ *Tensor, p backend.Params) *Tensor {
			return g.Mul(x.Polygamma(int(p[0]) + 1))
		},
		backend.Erfc: func(g, x, _ *Tensor, _ backend.Params) *Tensor {
			return g.Mul(x.Mul(x).Neg().Exp()).MulScalar(-2 / math.Sqrt(math.Pi))
		},
		// √π/2·e^(y²), y = erfinv(x)
		backend.Erfinv: func(g, _, y *Tensor, _ backend.Params) *Tensor {
			return g.Mul(y.Mul(y).Exp()).MulScalar(math.Sqrt(math.Pi) / 2)
		},
		// (πx·cos(πx) − sin(πx))/(πx²), 0 at 0 (PyTorch's sinc_backward)
		backend.Sinc: func(g, x, _ *Tensor, _ backend.Params) *Tensor {
			px := x.MulScalar(math.Pi)
			den := x.Mul(x).MulScalar(math.Pi)
			d := g.Mul(px.Mul(px.Cos()).Sub(px.Sin())).Div(den)
			return Where(den.EqScalar(0), zeroLike(d), d)
		},
		// 1/(x(1−x)); outside [0, 1] NaN without eps, 0 outside [eps, 1−eps]
		// with it (PyTorch's logit_backward)
		backend.Logit: func(g, x, _ *Tensor, p backend.Params) *Tensor {
			d := g.Div(x.Mul(x.Neg().AddScalar(1))) // 1 − x as +0 at 1 (RSubScalar gives −0)
			if p[0] < 0 {
				out := x.LtScalar(0).LogicalOr(x.GtScalar(1))
				return WhereTensorScalar(out.LogicalNot(), d, math.NaN())
			}
			out := x.LtScalar(p[0]).LogicalOr(x.GtScalar(1 - p[0]))
			return Where(out, zeroLike(d), d)
		},
		backend.Deg2rad: func(g, _, _ *Tensor, _ backend.Params) *Tensor { return g.MulScalar(math.Pi / 180) },
		backend.Rad2deg: func(g, _, _ *Tensor, _ backend.Params) *Tensor { return g.MulScalar(180 / math.Pi) },
	}
}

func binaryRuleTable() [backend.NumBinaryOps]binaryRule {
	return [backend.NumBinaryOps]binaryRule{
		backend.Add: func(g, _, _, _ *Tensor, _ [2]bool) (*Tensor, *Tensor) { return g, g },
		backend.Sub: func(g, _, _, _ *Tensor, need [2]bool) (*Tensor, *Tensor) {
			return g, when(need[1], g.Neg)
		},
		backend.Mul: func(g, a, b, _ *Tensor, need [2]bool) (*Tensor, *Tensor) {
			return when(need[0], func() *Tensor { return g.Mul(b) }), when(need[1], func() *Tensor { return g.Mul(a) })
		},
		backend.Div: func(g, a, b, _ *Tensor, need [2]bool) (*Tensor, *Tensor) {
			return when(need[0], func() *Tensor { return g.Div(b) }),
				when(need[1], func() *Tensor { return g.Mul(a).Div(b.Mul(b)).Neg() })
		},
		backend.Pow: func(g, a, b, y *Tensor, need [2]bool) (*Tensor, *Tensor) {
			ga := when(need[0], func() *Tensor {
				// b * a^(b-1), zero where b == 0 (as PyTorch masks it)
				d := b.Mul(a.Pow(b.SubScalar(1)))
				return g.Mul(Where(b.EqScalar(0), zeroLike(d), d))
			})
			gb := when(need[1], func() *Tensor {
				d := y.Mul(a.Log())
				// zero where a == 0 and b >= 0
				mask := a.EqScalar(0).LogicalAnd(b.Ge(zeroLike(b)))
				return g.Mul(Where(mask, zeroLike(d), d))
			})
			return ga, gb
		},
		backend.Maximum: func(g, a, b, _ *Tensor, _ [2]bool) (*Tensor, *Tensor) { return extremeGrad(g, a, b, true) },
		backend.Minimum: func(g, a, b, _ *Tensor, _ [2]bool) (*Tensor, *Tensor) { return extremeGrad(g, a, b, false) },
		backend.Atan2: func(g, a, b, _ *Tensor, _ [2]bool) (*Tensor, *Tensor) {
			den := a.Mul(a).Add(b.Mul(b))
			return g.Mul(b).Div(den), g.Mul(a).Div(den).Neg()
		},
		backend.Remainder: func(g, a, b, _ *Tensor, need [2]bool) (*Tensor, *Tensor) {
			return g, when(need[1], func() *Tensor { return g.Mul(a.Div(b).Floor()).Neg() })
		},
		// d/db fmod(a, b) = -trunc(a/b)
		backend.Fmod: func(g, a, b, _ *Tensor, need [2]bool) (*Tensor, *Tensor) {
			return g, when(need[1], func() *Tensor { return g.Mul(a.Div(b).Trunc()).Neg() })
		},
		backend.Hypot: func(g, a, b, y *Tensor, need [2]bool) (*Tensor, *Tensor) {
			return when(need[0], func() *Tensor { return g.Mul(a).Div(y) }), when(need[1], func() *Tensor { return g.Mul(b).Div(y) })
		},
		// y/a (the sign flip), 0 where a == 0; nothing flows to the sign's source
		backend.Copysign: func(g, a, _, y *Tensor, need [2]bool) (*Tensor, *Tensor) {
			ga := when(need[0], func() *Tensor {
				r := y.Div(a)
				return g.Mul(Where(a.EqScalar(0), zeroLike(r), r))
			})
			return ga, when(need[1], func() *Tensor { return ZerosLike(g) })
		},
		// xlogy(g, b), 0 where a = 0 and b ≤ 0 (PyTorch 1.13: log(b) at
		// a = 0 too when b > 0), a/b
		backend.Xlogy: func(g, a, b, _ *Tensor, need [2]bool) (*Tensor, *Tensor) {
			ga := when(need[0], func() *Tensor {
				r := g.Xlogy(b)
				return Where(a.EqScalar(0).LogicalAnd(binaryScalar(backend.Le, b, 0)), zeroLike(r), r)
			})
			return ga, when(need[1], func() *Tensor { return g.Mul(a).Div(b) })
		},
		// g/(1 + e^(b-a)) and g/(1 + e^(a-b)) (PyTorch's formulas)
		backend.Logaddexp: func(g, a, b, _ *Tensor, need [2]bool) (*Tensor, *Tensor) {
			return when(need[0], func() *Tensor { return g.Div(b.Sub(a).Exp().AddScalar(1)) }),
				when(need[1], func() *Tensor { return g.Div(a.Sub(b).Exp().AddScalar(1)) })
		},
		backend.Logaddexp2: func(g, a, b, _ *Tensor, need [2]bool) (*Tensor, *Tensor) {
			return when(need[0], func() *Tensor { return g.Div(b.Sub(a).Exp2().AddScalar(1)) }),
				when(need[1], func() *Tensor { return g.Div(a.Sub(b).Exp2().AddScalar(1)) })
		},
		backend.Fmax: func(g, a, b, _ *Tensor, need [2]bool) (*Tensor, *Tensor) { return fextremeGrad(g, a, b, a.Ge(b), need) },
		backend.Fmin: func(g, a, b, _ *Tensor, need [2]bool) (*Tensor, *Tensor) { return fextremeGrad(g, a, b, a.Le(b), need) },
	}
}

// fextremeGrad routes g as torch.fmax/fmin's backward does: all of it to a
// where a wins (ties included) or b is NaN, else all of it to b.
func fextremeGrad(g, a, b, aWins *Tensor, need [2]bool) (*Tensor, *Tensor) {
	toA := aWins.LogicalOr(b.IsNaN())
	z := zeroLike(g)
	return when(need[0], func() *Tensor { return Where(toA, g, z) }), when(need[1], func() *Tensor { return Where(toA, z, g) })
}

// extremeGrad shares g between a and b as torch.maximum/minimum do: to the
// larger (smaller) operand, halved between equal ones.
func extremeGrad(g, a, b *Tensor, isMax bool) (*Tensor, *Tensor) {
	half := Where(a.Eq(b), g.MulScalar(0.5), g)
	z := zeroLike(g)
	aLose, bLose := a.Lt(b), a.Gt(b)
	if !isMax {
		aLose, bLose = bLose, aLose
	}
	return Where(aLose, z, half), Where(bLose, z, half)
}
