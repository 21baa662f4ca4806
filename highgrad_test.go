package ember

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend"
)

// gradgradcheck compares the second-order gradients that Grad with
// CreateGraph gives, d/dx sum(dL/dx·v) for L = sum(f(xs)·w) and fixed
// weights w, v, with central differences of the first-order gradients
// (step 1e-6) in float64 on every device.
func gradgradcheck(t *testing.T, name string, f func(xs []*Tensor) *Tensor, ins ...gin) {
	t.Helper()
	for _, dev := range testDevices() {
		mk := func(k, j int, d float64) []*Tensor {
			xs := make([]*Tensor, len(ins))
			for i, in := range ins {
				data := in.data
				if i == k {
					data = append([]float64(nil), in.data...)
					data[j] += d
				}
				xs[i] = in.on(dev, data)
				if in.ints == nil {
					xs[i].SetRequiresGrad(true)
				}
			}
			return xs
		}
		var diff []*Tensor
		for _, in := range ins {
			if in.ints == nil {
				diff = append(diff, nil)
			}
		}
		pick := func(xs []*Tensor) []*Tensor {
			var d []*Tensor
			for i, in := range ins {
				if in.ints == nil {
					d = append(d, xs[i])
				}
			}
			return d
		}
		xs := mk(-1, 0, 0)
		out := f(xs)
		w := FromSlice(vals(out.shape, -1, 1, 7).data, out.shape, On(dev), Dtype(out.dtype))
		vs := make([]*Tensor, 0, len(diff))
		for i, in := range ins {
			if in.ints == nil {
				vs = append(vs, FromSlice(vals(in.shape, -1, 1, 3+i).data, in.shape, On(dev)))
			}
		}
		firstAt := func(xs []*Tensor, create bool) []*Tensor {
			o := f(xs)
			return Grad([]*Tensor{o.Mul(w).Sum()}, pick(xs), CreateGraph(create), AllowUnused(true))
		}
		gs := firstAt(xs, true)
		s := Zeros(Shape{}, On(dev), Dtype(Float64))
		for i, g := range gs {
			if g != nil && g.RequiresGrad() {
				s = s.Add(g.Mul(vs[i]).Sum())
			}
		}
		var second []*Tensor
		if s.RequiresGrad() {
			second = Grad([]*Tensor{s}, pick(xs), AllowUnused(true))
		} else {
			second = make([]*Tensor, len(gs))
		}
		// finite differences of sum(dL/dx·v)
		eval := func(k, j int, d float64) float64 {
			gs := firstAt(mk(k, j, d), false)
			var s float64
			for i, g := range gs {
				if g != nil {
					s += g.Mul(vs[i]).Sum().Item()
				}
			}
			return s
		}
		di := 0
		for k, in := range ins {
			if in.ints != nil {
				continue
			}
			var got []float64
			if second[di] != nil {
				got = second[di].Float64s()
			} else {
				got = make([]float64, in.shape.NumElements())
			}
			const h = 1e-6
			for j := range in.data {
				num := (eval(k, j, h) - eval(k, j, -h)) / (2 * h)
				if math.Abs(got[j]-num) > 1e-6+1e-4*math.Abs(num) {
					t.Errorf("%s on %v: d²/dx%d[%d] = %.10g, finite differences %.10g", name, dev, k, j, got[j], num)
				}
			}
			di++
		}
	}
}

// TestGradGradElementwise checks the second derivatives of every
// differentiable row of the op table (unary rows with each parameter set,
// binary rows with and without broadcasting) against finite differences.
func TestGradGradElementwise(t *testing.T) {
	s23 := Shape{2, 3}
	for op := range backend.NumUnaryOps {
		row := op.Row()
		if row.GradFn == "" {
			continue
		}
		lo, hi := row.Domain[0], row.Domain[1]
		if lo == 0 && hi == 0 {
			lo, hi = -1.9, 1.9
		}
		sets := row.Args
		if len(sets) == 0 {
			sets = [][]float64{nil}
		}
		for _, p := range sets {
			gradgradcheck(t, fmt.Sprintf("%s%v", op, p), func(xs []*Tensor) *Tensor { return unary(op, xs[0], p...) }, vals(s23, lo, hi, 1))
		}
	}
	for op := range backend.NumBinaryOps {
		row := op.Row()
		if row.GradFn == "" || !op.Supports(Float64) {
			continue
		}
		lo, hi := row.Domain[0], row.Domain[1]
		if lo == 0 && hi == 0 {
			lo, hi = 0.2, 2
		}
		f := func(xs []*Tensor) *Tensor { return binary(op, xs[0], xs[1], false) }
		gradgradcheck(t, op.String(), f, vals(s23, lo, hi, 3), vals(s23, lo+0.1, hi-0.1, 4))
		gradgradcheck(t, op.String()+"/bcast", f, vals(s23, lo, hi, 3), vals(Shape{3}, lo+0.1, hi-0.1, 5))
	}
	scalar := map[string]func(x *Tensor) *Tensor{
		"add_scalar": func(x *Tensor) *Tensor { return x.AddScalar(2) },
		"sub_scalar": func(x *Tensor) *Tensor { return x.SubScalar(2) },
		"mul_scalar": func(x *Tensor) *Tensor { return x.MulScalar(-3) },
		"div_scalar": func(x *Tensor) *Tensor { return x.DivScalar(-3) },
		"rsub":       func(x *Tensor) *Tensor { return x.RSubScalar(1).Mul(x) },
		"pow_scalar": func(x *Tensor) *Tensor { return x.PowScalar(3) },
		"sqrt_pow":   func(x *Tensor) *Tensor { return x.AddScalar(2).PowScalar(0.5) },
		"gelu":       GELU,
		"silu":       (*Tensor).SiLU,
		"softplus":   func(x *Tensor) *Tensor { return x.Softplus(2, 20) },
		"where":      func(x *Tensor) *Tensor { return Where(x.GtScalar(0), x.Mul(x), x.Exp()) },
		"clamp":      func(x *Tensor) *Tensor { return x.Clamp(-0.5, 0.6).Mul(x) },
	}
	for name, f := range scalar {
		gradgradcheck(t, name, func(xs []*Tensor) *Tensor { return f(xs[0]) }, vals(s23, -1.9, 1.9, 1))
	}
}

func TestGradGradReductionsViews(t *testing.T) {
	x := vals(Shape{2, 3, 4}, -1.5, 1.5, 2)
	cube := func(f func(x *Tensor) *Tensor) func(xs []*Tensor) *Tensor {
		// x³ first, so that every linear op's second derivative is not 0
		return func(xs []*Tensor) *Tensor { return f(xs[0].PowScalar(3)) }
	}
	for name, f := range map[string]func(x *Tensor) *Tensor{
		"sum":         func(x *Tensor) *Tensor { return x.Sum() },
		"sum_dims":    func(x *Tensor) *Tensor { return x.Sum(Dims(0, 2)) },
		"mean":        func(x *Tensor) *Tensor { return x.Mean() },
		"mean_dim":    func(x *Tensor) *Tensor { return x.Mean(Dims(1), KeepDim()) },
		"var":         func(x *Tensor) *Tensor { return x.Var(Dims(1)) },
		"std":         func(x *Tensor) *Tensor { return x.Std(Dims(2)) },
		"amax":        func(x *Tensor) *Tensor { return x.Max(Dims(2)) },
		"softmax":     func(x *Tensor) *Tensor { return x.Softmax(1) },
		"logsumexp":   func(x *Tensor) *Tensor { return x.LogSumExp(Dims(1)) },
		"logsumexp_k": func(x *Tensor) *Tensor { return x.LogSumExp(Dims(0, 2), KeepDim()) },
		"log_softmax": func(x *Tensor) *Tensor { return x.LogSoftmax(2) },
		"norm2":       func(x *Tensor) *Tensor { return x.Norm(2, Dims(1)) },
		"norm2_all":   func(x *Tensor) *Tensor { return x.Norm(2) },
		"norm3":       func(x *Tensor) *Tensor { return x.Norm(3, Dims(2)) },
		"norm1":       func(x *Tensor) *Tensor { return x.Norm(1, Dims(0)) },
		"reshape":     func(x *Tensor) *Tensor { return x.Reshape(4, 6) },
		"view":        func(x *Tensor) *Tensor { return x.View(6, 4) },
		"permute":     func(x *Tensor) *Tensor { return x.Permute(2, 0, 1) },
		"transpose":   func(x *Tensor) *Tensor { return x.Transpose(0, 2) },
		"expand":      func(x *Tensor) *Tensor { return x.Unsqueeze(0).Expand(2, 2, 3, 4) },
		"squeeze":     func(x *Tensor) *Tensor { return x.Narrow(1, 1, 1).Squeeze(1) },
		"narrow":      func(x *Tensor) *Tensor { return x.Narrow(2, 1, 2) },
		"select":      func(x *Tensor) *Tensor { return x.Select(1, 2) },
		"slice":       func(x *Tensor) *Tensor { return x.Slice(2, 0, 4, 2) },
		"index":       func(x *Tensor) *Tensor { return x.Index(1, 0) },
		"cat":         func(x *Tensor) *Tensor { return Cat([]*Tensor{x, x.Exp()}, 1) },
		"stack":       func(x *Tensor) *Tensor { return Stack([]*Tensor{x, x.Sin()}, 0) },
		"gather": func(x *Tensor) *Tensor {
			return x.Gather(2, FromSlice([]int64{0, 3, 3, 1, 2, 0, 1, 1, 2, 3, 0, 0, 1, 2, 3, 3, 2, 1}, Shape{2, 3, 3}, On(x.Device())))
		},
		"index_select": func(x *Tensor) *Tensor {
			return x.IndexSelect(2, FromSlice([]int64{3, 0, 3}, Shape{3}, On(x.Device())))
		},
		"to_float32": func(x *Tensor) *Tensor { return x.Cast(Float32).Cast(Float64) },
		"clone":      func(x *Tensor) *Tensor { return x.Clone().Mul(x) },
	} {
		gradgradcheck(t, name, cube(f), x)
	}
	for name, f := range map[string]func(xs []*Tensor) *Tensor{
		"matmul": func(xs []*Tensor) *Tensor { return xs[0].MatMul(xs[1]) },
		"mv":     func(xs []*Tensor) *Tensor { return xs[0].MatMul(xs[1].Select(1, 0)) },
		"bmm": func(xs []*Tensor) *Tensor {
			return Bmm(xs[0].Unsqueeze(0).Expand(2, 2, 3).Mul(xs[0]), xs[1].Unsqueeze(0).Expand(2, 3, 4).Tanh())
		},
		"linear":  func(xs []*Tensor) *Tensor { return Linear(xs[0], xs[1].T(), xs[1].Select(0, 0)).Tanh() },
		"linear3": func(xs []*Tensor) *Tensor { return Linear(xs[0].Unsqueeze(0), xs[1].T(), nil).Sigmoid() },
		"mse": func(xs []*Tensor) *Tensor {
			return MSELoss(xs[0].Tanh(), xs[1].Narrow(0, 0, 2).Narrow(1, 0, 3).Sin(), "mean")
		},
		"mse_none": func(xs []*Tensor) *Tensor { return MSELoss(xs[0], xs[1].Narrow(0, 1, 2).Narrow(1, 1, 3), "none") },
		"where2": func(xs []*Tensor) *Tensor {
			return Where(xs[0].GtScalar(0), xs[0], xs[1].Narrow(0, 0, 2).Narrow(1, 0, 3)).Square()
		},
		"baddbmm": func(xs []*Tensor) *Tensor {
			return Baddbmm(xs[0].Select(0, 0), xs[0].Unsqueeze(0).Tanh(), xs[1].Unsqueeze(0).Sin().Narrow(2, 0, 3), 0.5, 2).Square()
		},
		"bce_logits": func(xs []*Tensor) *Tensor {
			return BCEWithLogits(xs[0].Square(), xs[1].Narrow(0, 0, 2).Narrow(1, 0, 3).Sigmoid(), "mean")
		},
		"dropout": func(xs []*Tensor) *Tensor {
			ManualSeed(3)
			return Dropout(xs[0].Square(), 0.4, true).Mul(xs[0])
		},
	} {
		gradgradcheck(t, name, f, vals(Shape{2, 3}, -1.5, 1.5, 4), vals(Shape{3, 4}, -1.5, 1.5, 5))
	}
	gradgradcheck(t, "cross_entropy", func(xs []*Tensor) *Tensor {
		return CrossEntropy(xs[0].Square(), xs[1], 0, "mean")
	}, vals(Shape{3, 4}, -1.5, 1.5, 4), ints(Shape{3}, 0, 3, 1))
	gradgradcheck(t, "cross_entropy_smooth", func(xs []*Tensor) *Tensor {
		return CrossEntropy(xs[0].Square(), xs[1], 0.2, "sum")
	}, vals(Shape{3, 4}, -1.5, 1.5, 4), ints(Shape{3}, 0, 3, 1))
}

func TestGradGradConv2d(t *testing.T) {
	for _, c := range []struct {
		x, w                      Shape
		stride, padding, dilation [2]int
		groups                    int
	}{
		{Shape{2, 2, 5, 4}, Shape{3, 2, 3, 2}, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}, 1},
		{Shape{1, 4, 6, 5}, Shape{4, 2, 2, 3}, [2]int{2, 1}, [2]int{1, 2}, [2]int{1, 2}, 2},
	} {
		gradgradcheck(t, fmt.Sprintf("conv2d%v", c), func(xs []*Tensor) *Tensor {
			return Conv2d(xs[0], xs[1], xs[2], c.stride, c.padding, c.dilation, c.groups).Tanh()
		}, vals(c.x, -1, 1, 1), vals(c.w, -1, 1, 2), vals(Shape{c.w[0]}, -1, 1, 3))
	}
}

// The generic (im2col) convolution, which CUDA runs, rebuilds its input
// from the saved columns for its double backward.
func TestGradGradConv2dGeneric(t *testing.T) {
	for _, c := range []struct {
		x, w                      Shape
		stride, padding, dilation [2]int
		groups                    int
	}{
		{Shape{2, 2, 5, 4}, Shape{3, 2, 3, 2}, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}, 1},
		{Shape{1, 4, 6, 5}, Shape{4, 2, 2, 3}, [2]int{2, 1}, [2]int{1, 2}, [2]int{1, 2}, 2},
		{Shape{1, 2, 7, 7}, Shape{2, 2, 2, 2}, [2]int{3, 3}, [2]int{0, 0}, [2]int{1, 1}, 1}, // pixels no window covers
	} {
		gradgradcheck(t, fmt.Sprintf("generic conv2d%v", c), func(xs []*Tensor) *Tensor {
			return GenericKernels.Conv2d(xs[0], xs[1], xs[2], c.stride, c.padding, c.dilation, c.groups).Tanh()
		}, vals(c.x, -1, 1, 1), vals(c.w, -1, 1, 2), vals(Shape{c.w[0]}, -1, 1, 3))
		gradgradcheck(t, fmt.Sprintf("generic conv2d, constant input%v", c), func(xs []*Tensor) *Tensor {
			x := FromSlice(vals(c.x, -1, 1, 1).data, c.x, On(xs[0].Device()))
			return GenericKernels.Conv2d(x, xs[0], nil, c.stride, c.padding, c.dilation, c.groups).Tanh()
		}, vals(c.w, -1, 1, 2))
	}
}

func TestGradGradPool(t *testing.T) {
	x := vals(Shape{2, 2, 5, 6}, -1, 1, 1)
	for _, k := range []Kernels{NativeKernels, GenericKernels} {
		for name, f := range map[string]func(x *Tensor) *Tensor{
			"max":         func(x *Tensor) *Tensor { return k.MaxPool2d(x, [2]int{2, 2}, [2]int{2, 2}, [2]int{0, 0}) },
			"max_overlap": func(x *Tensor) *Tensor { return k.MaxPool2d(x, [2]int{3, 2}, [2]int{1, 2}, [2]int{1, 1}) },
			"avg":         func(x *Tensor) *Tensor { return k.AvgPool2d(x, [2]int{2, 3}, [2]int{2, 1}, [2]int{1, 1}, false) },
			"avg_pad":     func(x *Tensor) *Tensor { return k.AvgPool2d(x, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, true) },
		} {
			gradgradcheck(t, fmt.Sprintf("%s pool (%v)", name, k == GenericKernels), func(xs []*Tensor) *Tensor {
				return f(xs[0].PowScalar(3)).Tanh()
			}, x)
		}
	}
}
