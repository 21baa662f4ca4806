package nn

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// LogSigmoid returns log(1/(1 + e^−x)), computed stably as min(x, 0) −
// log1p(e^−|x|), as torch.nn.functional.logsigmoid; its gradient is
// σ(−x) (1/2 at 0) and it records one LogSigmoidBackward0 node.
func LogSigmoid(x *ember.Tensor) *ember.Tensor {
	return ember.Apply(logSigmoid{}, x)
}

type logSigmoid struct{}

// Name is PyTorch's grad_fn for log_sigmoid.
func (logSigmoid) Name() string { return "LogSigmoidBackward0" }

func (logSigmoid) Forward(ctx *ember.FunctionCtx, in []*ember.Tensor) *ember.Tensor {
	x := in[0]
	if !x.DType().IsFloat() {
		panic(&ember.DTypeError{Op: "log_sigmoid", DTypes: []ember.DType{x.DType()}, Msg: "\"log_sigmoid_forward\" not implemented for '" + x.DType().String() + "'"})
	}
	ctx.SaveForBackward(x)
	return x.Neg().ReLU().Neg().Sub(x.Abs().Neg().Exp().Log1p())
}

func (logSigmoid) Backward(ctx *ember.FunctionCtx, g *ember.Tensor) []*ember.Tensor {
	return []*ember.Tensor{g.Mul(ctx.Saved()[0].Neg().Sigmoid())}
}

// scalarLike is a 0-d tensor of v with x's dtype (floating, else Float32)
// and device.
func scalarLike(x *ember.Tensor, v float64) *ember.Tensor {
	dt := x.DType()
	if !dt.IsFloat() {
		dt = ember.Float32
	}
	return ember.Full(ember.Shape{}, v, ember.On(x.Device()), ember.Dtype(dt))
}

// NewLogSigmoid returns the LogSigmoid layer, log(1/(1 + e^−x)) (see
// LogSigmoid).
func NewLogSigmoid() *Activation { return act("LogSigmoid", LogSigmoid) }

// NewSoftsign returns the Softsign layer, x/(1 + |x|).
func NewSoftsign() *Activation {
	return act("Softsign", func(x *ember.Tensor) *ember.Tensor { return x.Div(x.Abs().AddScalar(1)) })
}

// NewTanhshrink returns the Tanhshrink layer, x − tanh(x).
func NewTanhshrink() *Activation {
	return act("Tanhshrink", func(x *ember.Tensor) *ember.Tensor { return x.Sub(x.Tanh()) })
}

// NewSoftshrink returns the Softshrink layer: x − lambda above lambda,
// x + lambda below −lambda, 0 between (and for NaN, as PyTorch 1.13's
// kernel); PyTorch's default lambda is 0.5, a negative one panics with a
// *ember.ValueError. Its gradient is 1 outside [−lambda, lambda], else 0.
func NewSoftshrink(lambda float64) *Activation {
	if !(lambda >= 0) {
		panic(&ember.ValueError{Op: "softshrink", Msg: "lambda must be greater or equal to 0, but found to be " + pyFloat(lambda) + "."})
	}
	a := act("Softshrink", func(x *ember.Tensor) *ember.Tensor {
		return ember.Where(x.GtScalar(lambda), x.SubScalar(lambda), ember.WhereTensorScalar(x.LtScalar(-lambda), x.AddScalar(lambda), 0))
	})
	a.extra = pyFloat(lambda)
	return a
}

// NewHardshrink returns the Hardshrink layer: x outside [−lambda, lambda]
// (NaN included), else 0; PyTorch's default lambda is 0.5.
func NewHardshrink(lambda float64) *Activation {
	a := act("Hardshrink", func(x *ember.Tensor) *ember.Tensor {
		in := x.Ge(scalarLike(x, -lambda)).LogicalAnd(x.Le(scalarLike(x, lambda)))
		return ember.WhereScalar(in, 0, x)
	})
	a.extra = pyFloat(lambda)
	return a
}

// NewThreshold returns the Threshold layer: x where x > threshold (NaN
// included), else value; its gradient is 0 where x ≤ threshold.
func NewThreshold(threshold, value float64) *Activation {
	a := act("Threshold", func(x *ember.Tensor) *ember.Tensor {
		return ember.WhereScalar(x.Le(scalarLike(x, threshold)), value, x)
	})
	a.extra = "threshold=" + pyFloat(threshold) + ", value=" + pyFloat(value)
	return a
}

// GLU returns the gated linear unit a·σ(b) of x's halves a and b along
// dim (negative counts from the end), as torch.nn.functional.glu; an odd
// size panics with a *ember.ShapeError.
func GLU(x *ember.Tensor, dim int) *ember.Tensor {
	const op = "glu"
	if x.Dim() == 0 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{x.Shape()}, Msg: "glu does not support scalars because halving size must be even"})
	}
	d := dim
	if d < 0 {
		d += x.Dim()
	}
	if d < 0 || d >= x.Dim() {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{x.Shape()}, Msg: fmt.Sprintf("Dimension out of range (expected to be in range of [%d, %d], but got %d)", -x.Dim(), x.Dim()-1, dim)})
	}
	n := x.Size(d)
	if n%2 != 0 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{x.Shape()}, Msg: fmt.Sprintf("Halving dimension must be even, but dimension %d is size %d", d, n)})
	}
	return x.Narrow(d, 0, n/2).Mul(x.Narrow(d, n/2, n/2).Sigmoid())
}

// NewGLU returns the GLU layer over dim (PyTorch's default −1).
func NewGLU(dim int) *Activation {
	a := act("GLU", func(x *ember.Tensor) *ember.Tensor { return GLU(x, dim) })
	a.extra = fmt.Sprintf("dim=%d", dim)
	return a
}

// The SELU constants (Klambauer et al., PyTorch's).
const (
	seluAlpha = 1.6732632423543772848170429916717
	seluScale = 1.0507009873554804934193349852946
)

// NewSELU returns the SELU layer, scale·ELU(x, alpha) with PyTorch's
// constants alpha ≈ 1.6733 and scale ≈ 1.0507.
func NewSELU() *Activation {
	return act("SELU", func(x *ember.Tensor) *ember.Tensor { return x.ELU(seluAlpha).MulScalar(seluScale) })
}

// NewCELU returns the CELU layer, max(0, x) + min(0, alpha·(e^(x/alpha) −
// 1)) (PyTorch's default alpha 1); alpha 0 panics with a
// *ember.ValueError.
func NewCELU(alpha float64) *Activation {
	if alpha == 0 {
		panic(&ember.ValueError{Op: "celu", Msg: "ZeroDivisionError: alpha cannot be 0 for CELU"})
	}
	a := act("CELU", func(x *ember.Tensor) *ember.Tensor {
		neg := x.Clamp(math.Inf(-1), 0).DivScalar(alpha).Expm1().MulScalar(alpha)
		return ember.Where(x.GtScalar(0), x, neg)
	})
	a.extra = "alpha=" + pyFloat(alpha)
	return a
}

// RReLU is torch.nn.RReLU, the randomized leaky ReLU: in training mode
// each negative element is scaled by its own slope drawn from U(Lower,
// Upper) (ember's generator, so not PyTorch's draws); in evaluation mode
// by the mean slope (Lower + Upper)/2.
type RReLU struct {
	stateless
	Lower, Upper float64
}

// NewRReLU returns an RReLU layer (PyTorch's defaults are 1/8 and 1/3);
// lower > upper panics with a *ember.ValueError.
func NewRReLU(lower, upper float64) *RReLU {
	if !(lower <= upper) {
		panic(&ember.ValueError{Op: "rrelu", Msg: "Lower bound should be less than or equal to the upper bound"})
	}
	r := &RReLU{Lower: lower, Upper: upper}
	r.Init(r)
	return r
}

// Forward applies the layer.
func (r *RReLU) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(r, "Forward")
	if !r.Training() {
		return x.LeakyReLU((r.Lower + r.Upper) / 2)
	}
	slope := ember.Rand(x.Shape(), ember.On(x.Device()), ember.Dtype(scalarLike(x, 0).DType())).MulScalar(r.Upper - r.Lower).AddScalar(r.Lower)
	return ember.Where(x.Ge(scalarLike(x, 0)), x, x.Mul(slope))
}

// ExtraRepr is "lower=0.125, upper=0.3333333333333333".
func (r *RReLU) ExtraRepr() string {
	CheckNil(r, "ExtraRepr")
	return "lower=" + pyFloat(r.Lower) + ", upper=" + pyFloat(r.Upper)
}

// PReLU is torch.nn.PReLU: x where x > 0, else a·x, with a learnt slope
// Weight of NumParameters entries (one for every channel, dim 1 of the
// input, or one shared), initialised to Init (PyTorch's 0.25).
type PReLU struct {
	Base
	Weight        *ember.Tensor
	NumParameters int
}

// NewPReLU returns a PReLU layer with numParameters slopes of init.
func NewPReLU(numParameters int, init float64) *PReLU {
	if numParameters < 1 {
		argErr("NewPReLU", "num_parameters must be at least 1, got %d", numParameters)
	}
	p := &PReLU{NumParameters: numParameters}
	p.Init(p)
	p.Weight = param(ember.Full(ember.Shape{numParameters}, init))
	p.RegisterParameter("weight", &p.Weight)
	return p
}

// Forward applies the layer.
func (p *PReLU) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(p, "Forward")
	w := p.Weight
	if n := w.NumElements(); n != 1 {
		if x.Dim() == 0 {
			panic(&ember.ShapeError{Op: "prelu", Shapes: []ember.Shape{x.Shape()}, Msg: "Not allow zero-dim input tensor."})
		}
		c := 1
		if x.Dim() >= 2 {
			c = x.Size(1)
		}
		if c != n {
			panic(&ember.ShapeError{Op: "prelu", Shapes: []ember.Shape{x.Shape(), w.Shape()}, Msg: fmt.Sprintf("Mismatch of parameter numbers and input channel size. Found parameter numbers = %d and channel size = %d.", n, c)})
		}
		shape := make([]int, x.Dim())
		for i := range shape {
			shape[i] = 1
		}
		shape[1] = n
		w = w.Reshape(shape...)
	} else {
		w = w.Reshape()
	}
	return ember.Where(x.GtScalar(0), x, x.Mul(w))
}

// ExtraRepr is "num_parameters=3".
func (p *PReLU) ExtraRepr() string {
	CheckNil(p, "ExtraRepr")
	return fmt.Sprintf("num_parameters=%d", p.NumParameters)
}

// Bilinear is torch.nn.Bilinear: y = x1ᵀ·A·x2 + b for each output, with
// Weight [Out, In1, In2] and Bias [Out] (nil without bias), both
// initialised from U(−1/√In1, 1/√In1) as PyTorch's reset_parameters.
type Bilinear struct {
	Base
	Weight, Bias  *ember.Tensor
	In1, In2, Out int
}

// NewBilinear returns a Bilinear layer; bias=false leaves Bias nil.
func NewBilinear(in1, in2, out int, bias bool) *Bilinear {
	b := &Bilinear{In1: in1, In2: in2, Out: out}
	b.Init(b)
	bound := kaimingBound(in1)
	b.Weight = uniform(ember.Shape{out, in1, in2}, bound)
	if bias {
		b.Bias = uniform(ember.Shape{out}, bound)
	}
	b.RegisterParameter("weight", &b.Weight)
	b.RegisterParameter("bias", &b.Bias)
	return b
}

// Forward panics: a bilinear layer takes two inputs (call Bilinear2).
func (b *Bilinear) Forward(*ember.Tensor) *ember.Tensor {
	CheckNil(b, "Forward")
	useErr("*nn.Bilinear", "Forward", "a bilinear layer takes two inputs: call Bilinear2(x1, x2)")
	return nil
}

// Bilinear2 is PyTorch's forward(input1, input2): the layer applied to
// x1 [..., In1] and x2 [..., In2] with the same leading dims, giving
// [..., Out].
func (b *Bilinear) Bilinear2(x1, x2 *ember.Tensor) *ember.Tensor {
	CheckNil(b, "Bilinear2")
	return BilinearForward(x1, x2, b.Weight, b.Bias)
}

// BilinearForward is torch.nn.functional.bilinear: x1ᵀ·weight[o]·x2 +
// bias[o] for x1 [..., In1], x2 [..., In2] (the same leading dims),
// weight [Out, In1, In2] and bias [Out] or nil.
func BilinearForward(x1, x2, weight, bias *ember.Tensor) *ember.Tensor {
	const op = "bilinear"
	bad := func(msg string, args ...any) {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{x1.Shape(), x2.Shape(), weight.Shape()}, Msg: "bilinear(): " + fmt.Sprintf(msg, args...)})
	}
	if x1.Dim() != x2.Dim() {
		bad("input dimensions do not match: got %d and %d", x1.Dim(), x2.Dim())
	}
	if x1.Dim() == 0 {
		bad("input dimensions do not match: got 0 and 0")
	}
	for i := 0; i < x1.Dim()-1; i++ {
		if x1.Size(i) != x2.Size(i) {
			bad("input batch dimensions do not match at dim %d: got %d and %d", i, x1.Size(i), x2.Size(i))
		}
	}
	if weight.Dim() != 3 {
		bad("weight must be three-dimensional, got %d dims", weight.Dim())
	}
	out, in1, in2 := weight.Size(0), weight.Size(1), weight.Size(2)
	if x1.Size(-1) != in1 {
		bad("input1 size does not match weight size: got %d but expected %d", x1.Size(-1), in1)
	}
	if x2.Size(-1) != in2 {
		bad("input2 size does not match weight size: got %d but expected %d", x2.Size(-1), in2)
	}
	if bias != nil && (bias.Dim() != 1 || bias.Size(0) != out) {
		bad("bias size does not match weight size: got %v but expected %d", bias.Shape(), out)
	}
	lead := x1.Shape()[:x1.Dim()-1]
	a := x1.Reshape(-1, in1)
	c := x2.Reshape(-1, in2)
	// [B, In1] · [In1, Out·In2] → [B, Out, In2], times x2, summed over In2
	t := a.MatMul(weight.Permute(1, 0, 2).Reshape(in1, out*in2)).Reshape(-1, out, in2)
	y := t.Mul(c.Unsqueeze(1)).Sum(ember.Dims(2))
	if bias != nil {
		y = y.Add(bias)
	}
	return y.Reshape(append(append([]int(nil), lead...), out)...)
}

// ExtraRepr is "in1_features=3, in2_features=4, out_features=5, bias=True".
func (b *Bilinear) ExtraRepr() string {
	CheckNil(b, "ExtraRepr")
	return fmt.Sprintf("in1_features=%d, in2_features=%d, out_features=%d, bias=%s", b.In1, b.In2, b.Out, pyBool(b.Bias != nil))
}
