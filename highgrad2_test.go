package ember

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestGradGradNorm(t *testing.T) {
	x := vals(Shape{3, 2, 4}, -1.5, 1.5, 1)
	w := vals(Shape{2, 4}, 0.5, 1.5, 2)
	b := vals(Shape{2, 4}, -1, 1, 3)
	gradgradcheck(t, "layer_norm", func(xs []*Tensor) *Tensor {
		return LayerNorm(xs[0], []int{2, 4}, xs[1], xs[2], 1e-5).Tanh()
	}, x, w, b)
	gradgradcheck(t, "layer_norm_last", func(xs []*Tensor) *Tensor {
		return LayerNorm(xs[0].Sin(), []int{4}, nil, nil, 1e-3).Square()
	}, x)
	gradgradcheck(t, "layer_norm_const_x", func(xs []*Tensor) *Tensor {
		xc := FromSlice(x.data, x.shape, On(xs[0].Device()))
		return LayerNorm(xc, []int{2, 4}, xs[0], xs[1], 1e-5).Tanh()
	}, w, b)
	xb := vals(Shape{3, 2, 2, 2}, -1.5, 1.5, 4)
	wb := vals(Shape{2}, 0.5, 1.5, 5)
	bb := vals(Shape{2}, -1, 1, 6)
	for _, k := range []Kernels{NativeKernels, GenericKernels} {
		for _, training := range []bool{true, false} {
			name := fmt.Sprintf("batch_norm (generic %v, training %v)", k == GenericKernels, training)
			gradgradcheck(t, name, func(xs []*Tensor) *Tensor {
				dev := xs[0].Device()
				rm := FromSlice([]float64{0.1, -0.2}, Shape{2}, On(dev))
				rv := FromSlice([]float64{0.8, 1.3}, Shape{2}, On(dev))
				return k.BatchNorm(xs[0], rm, rv, xs[1], xs[2], training, 0.1, 1e-5).Tanh()
			}, xb, wb, bb)
			gradgradcheck(t, name+" no affine", func(xs []*Tensor) *Tensor {
				dev := xs[0].Device()
				rm := FromSlice([]float64{0.1, -0.2}, Shape{2}, On(dev))
				rv := FromSlice([]float64{0.8, 1.3}, Shape{2}, On(dev))
				return k.BatchNorm(xs[0].Reshape(6, 2, 2).Square(), rm, rv, nil, nil, training, 0.1, 1e-5).Sin()
			}, xb)
		}
	}
}

func TestGradGradEmbedding(t *testing.T) {
	// (the padding row is not looked up: the gradient it never gets would
	// differ from finite differences, in PyTorch too)
	for _, pad := range []int{-1, 1} {
		gradgradcheck(t, fmt.Sprintf("embedding pad %d", pad), func(xs []*Tensor) *Tensor {
			idx := FromSlice([]int64{0, 2, 3, 2, 2, 3}, Shape{2, 3}, On(xs[0].Device()))
			var e *Tensor
			if pad < 0 {
				e = Embedding(idx, xs[0].Square())
			} else {
				e = EmbeddingPadded(idx, xs[0].Square(), pad)
			}
			return e.Mul(xs[1]).Tanh()
		}, vals(Shape{4, 3}, -1.5, 1.5, 1), vals(Shape{3}, -1, 1, 2))
	}
}

func TestGradGradAttention(t *testing.T) {
	q := vals(Shape{2, 3, 4}, -1, 1, 1)
	k := vals(Shape{2, 5, 4}, -1, 1, 2)
	v := vals(Shape{2, 5, 3}, -1, 1, 3)
	bm := []bool{true, false, true, true, false, false, true, true, true, true, true, false, false, true, true}
	for _, kern := range []Kernels{NativeKernels, GenericKernels} {
		for name, o := range map[string]func(dev Device) AttentionOptions{
			"plain":  func(Device) AttentionOptions { return AttentionOptions{} },
			"causal": func(Device) AttentionOptions { return AttentionOptions{Causal: true, Scale: 0.7} },
			"bool": func(dev Device) AttentionOptions {
				return AttentionOptions{Mask: FromSlice(bm, Shape{3, 5}, On(dev))}
			},
			"float": func(dev Device) AttentionOptions {
				return AttentionOptions{Mask: FromSlice(vals(Shape{3, 5}, -1, 1, 9).data, Shape{3, 5}, On(dev))}
			},
		} {
			gradgradcheck(t, fmt.Sprintf("sdpa %s (generic %v)", name, kern == GenericKernels), func(xs []*Tensor) *Tensor {
				return kern.ScaledDotProductAttention(xs[0], xs[1].Tanh(), xs[2], o(xs[0].Device())).Square()
			}, q, k, v)
		}
	}
	gradgradcheck(t, "sdpa float mask with grad", func(xs []*Tensor) *Tensor {
		return ScaledDotProductAttention(xs[0], xs[1], xs[2], AttentionOptions{Mask: xs[3].Square()}).Square()
	}, q, k, v, vals(Shape{3, 5}, -1, 1, 9))
	gradgradcheck(t, "sdpa dropout", func(xs []*Tensor) *Tensor {
		ManualSeed(5)
		return ScaledDotProductAttention(xs[0], xs[1], xs[2], AttentionOptions{Dropout: 0.3}).Square()
	}, q, k, v)
}

// cubeFn is x³·y as a Function whose Backward uses ember ops over the
// saved inputs: it can be differentiated twice.
type cubeFn struct{}

func (cubeFn) Name() string { return "CubeBackward" }

func (cubeFn) Forward(ctx *FunctionCtx, in []*Tensor) *Tensor {
	ctx.SaveForBackward(in[0], in[1])
	return in[0].PowScalar(3).Mul(in[1])
}

func (cubeFn) Backward(ctx *FunctionCtx, g *Tensor) []*Tensor {
	s := ctx.Saved()
	x, y := s[0], s[1]
	return []*Tensor{g.Mul(x.Square()).Mul(y).MulScalar(3), g.Mul(x.PowScalar(3))}
}

// expOutFn saves its output, as PyTorch's Exp example.
type expOutFn struct{}

func (expOutFn) Name() string { return "ExpOutBackward" }

func (expOutFn) Forward(ctx *FunctionCtx, in []*Tensor) *Tensor {
	y := in[0].Exp()
	ctx.SaveForBackward(y)
	return y
}

func (expOutFn) Backward(ctx *FunctionCtx, g *Tensor) []*Tensor {
	return []*Tensor{g.Mul(ctx.Saved()[0])}
}

// rawSquareFn computes its gradient from raw data: right to first order
// only.
type rawSquareFn struct{}

func (rawSquareFn) Name() string { return "RawSquareBackward" }

func (rawSquareFn) Forward(ctx *FunctionCtx, in []*Tensor) *Tensor {
	ctx.SaveForBackward(in[0])
	return in[0].Square()
}

func (rawSquareFn) Backward(ctx *FunctionCtx, g *Tensor) []*Tensor {
	x, gd := ctx.Saved()[0].Float64s(), g.Float64s()
	out := make([]float64, len(x))
	for i := range x {
		out[i] = 2 * x[i] * gd[i]
	}
	return []*Tensor{FromSlice(out, g.Shape(), On(g.Device()))}
}

// onceSquareFn is rawSquareFn marked OnceDifferentiable.
type onceSquareFn struct{ rawSquareFn }

func (onceSquareFn) OnceDifferentiable() {}

func TestGradGradFunction(t *testing.T) {
	gradgradcheck(t, "function over inputs", func(xs []*Tensor) *Tensor {
		return Apply(cubeFn{}, xs[0].Sin(), xs[1]).Tanh()
	}, vals(Shape{2, 3}, -1.5, 1.5, 1), vals(Shape{2, 3}, -1, 1, 2))
	gradgradcheck(t, "function over its output", func(xs []*Tensor) *Tensor {
		return Apply(expOutFn{}, xs[0].Square()).Sin()
	}, vals(Shape{2, 3}, -1, 1, 1))
	for _, dev := range testDevices() {
		x := FromSlice([]float64{0.5, -1, 2}, Shape{3}, On(dev)).SetRequiresGrad(true)
		y := Apply(rawSquareFn{}, x.Exp()).Sum()
		g := Grad([]*Tensor{y}, []*Tensor{x}, CreateGraph(true))[0]
		// d/dx e^{2x} = 2e^{2x}
		closeTo(t, "raw-data Function in create-graph mode on "+dev.String(), g, fixTensor{Shape: []int{3},
			Data: []float64{2 * math.Exp(1), 2 * math.Exp(-2), 2 * math.Exp(4)}})
		g = Grad([]*Tensor{Apply(onceSquareFn{}, x.Exp()).Sum()}, []*Tensor{x}, CreateGraph(true))[0]
		closeTo(t, "OnceDifferentiable Function on "+dev.String(), g, fixTensor{Shape: []int{3},
			Data: []float64{2 * math.Exp(1), 2 * math.Exp(-2), 2 * math.Exp(4)}})
		err := catch(func() { g.Sum().Backward() })
		var ae *AutogradError
		if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "the derivative for 'RawSquareBackward' is not implemented") {
			t.Errorf("on %v: double backward through a OnceDifferentiable Function: %v", dev, err)
		}
	}
}

func TestGradGradProdScan(t *testing.T) {
	x := vals(Shape{3, 4}, -1.5, 1.5, 1)
	z := vals(Shape{3, 4}, -1.5, 1.5, 1)
	z.data = append([]float64(nil), z.data...)
	z.data[1], z.data[6], z.data[7], z.data[9] = 0, 0, 0, 0 // one zero, two zeros, a late zero
	for name, f := range map[string]func(x *Tensor) *Tensor{
		"prod":      func(x *Tensor) *Tensor { return x.Prod() },
		"prod_dim":  func(x *Tensor) *Tensor { return x.Prod(Dims(1)) },
		"prod_keep": func(x *Tensor) *Tensor { return x.Prod(Dims(0), KeepDim()) },
		"cumsum":    func(x *Tensor) *Tensor { return x.Square().Cumsum(1) },
		"cumsum0":   func(x *Tensor) *Tensor { return x.Sin().Cumsum(0).Square() },
		"cumprod":   func(x *Tensor) *Tensor { return x.Cumprod(1) },
		"cumprod0":  func(x *Tensor) *Tensor { return x.Cumprod(0).Sin() },
	} {
		gradgradcheck(t, name, func(xs []*Tensor) *Tensor { return f(xs[0]).Tanh() }, x)
		gradgradcheck(t, name+" with zeros", func(xs []*Tensor) *Tensor { return f(xs[0]).Tanh() }, z)
	}
}
