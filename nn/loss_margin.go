package nn

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// The losses of this file follow PyTorch 1.13's formulas op by op, so that
// values, gradients (at hinge kinks too) and errors agree. Those whose
// PyTorch defaults are not Go's zero values have a New function returning
// the defaults; a struct literal uses its fields as they are.

var inf = math.Inf(1)

// MarginRankingLoss is torch.nn.MarginRankingLoss: max(0, −y·(x1 − x2) +
// Margin) for targets y of 1 or −1 (shapes broadcast; the three must have
// the same number of dims).
type MarginRankingLoss struct {
	Margin    float64
	Reduction Reduction
}

// Loss returns the margin ranking loss of input1 and input2 against target.
func (m MarginRankingLoss) Loss(input1, input2, target *ember.Tensor) *ember.Tensor {
	const op = "margin_ranking_loss"
	if input1.Dim() != input2.Dim() || input1.Dim() != target.Dim() {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{input1.Shape(), input2.Shape(), target.Shape()},
			Msg: fmt.Sprintf("margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: %v, input2: %v, target: %v", input1.Shape(), input2.Shape(), target.Shape())})
	}
	l := target.Neg().Mul(input1.Sub(input2)).AddScalar(m.Margin).Clamp(0, inf)
	return reduce(l, m.Reduction)
}

// HingeEmbeddingLoss is torch.nn.HingeEmbeddingLoss: x where the target
// is 1, max(0, Margin − x) where it is −1 (a target that is neither gets
// both terms, as PyTorch's). NewHingeEmbeddingLoss gives PyTorch's
// default margin, 1.
type HingeEmbeddingLoss struct {
	Margin    float64
	Reduction Reduction
}

// NewHingeEmbeddingLoss returns a HingeEmbeddingLoss with margin 1.
func NewHingeEmbeddingLoss() HingeEmbeddingLoss { return HingeEmbeddingLoss{Margin: 1} }

// Loss returns the hinge embedding loss.
func (h HingeEmbeddingLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	marginClamp := input.RSubScalar(h.Margin).Clamp(0, inf)
	outMargin := ember.WhereTensorScalar(target.EqScalar(1).LogicalNot(), marginClamp, 0)
	outSelf := ember.WhereTensorScalar(target.EqScalar(-1).LogicalNot(), input, 0)
	return reduce(outMargin.Add(outSelf), h.Reduction)
}

// SoftMarginLoss is torch.nn.SoftMarginLoss: log(1 + e^(−y·x)) for
// targets y of 1 or −1.
type SoftMarginLoss struct{ Reduction Reduction }

// Loss returns the soft margin loss.
func (s SoftMarginLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	return reduce(input.Neg().Mul(target).Exp().Log1p(), s.Reduction)
}

// MultiLabelSoftMarginLoss is torch.nn.MultiLabelSoftMarginLoss: for
// input [N, C] (or [C]) and 0/1 targets of its shape, the mean over the C
// classes of −(y·logσ(x) + (1−y)·logσ(−x)), each class's term times
// Weight ([C], broadcast) when set; Reduction then combines the N values.
type MultiLabelSoftMarginLoss struct {
	Reduction Reduction
	Weight    *ember.Tensor
}

// Loss returns the multi-label soft margin loss.
func (m MultiLabelSoftMarginLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	if input.Dim() == 0 {
		panic(&ember.ShapeError{Op: "multilabel_soft_margin_loss", Shapes: []ember.Shape{input.Shape()}, Msg: "Dimension specified as -1 but tensor has no dimensions"})
	}
	l := target.Mul(LogSigmoid(input)).Add(target.RSubScalar(1).Mul(LogSigmoid(input.Neg()))).Neg()
	if m.Weight != nil {
		l = l.Mul(m.Weight)
	}
	c := input.Size(-1)
	return reduce(l.Sum(ember.Dims(input.Dim()-1)).DivScalar(float64(c)), m.Reduction)
}

// MultiMarginLoss is torch.nn.MultiMarginLoss, the multi-class hinge loss:
// for input [N, C] (or [C]) and class targets y (Int64 [N], or 0-d), the
// sum over the classes j ≠ y of Weight[y]·max(0, Margin − x[y] + x[j])^P,
// divided by C. P must be 1 or 2; Weight, when set, has C entries.
// NewMultiMarginLoss gives PyTorch's defaults, P 1 and margin 1.
type MultiMarginLoss struct {
	P         int
	Margin    float64
	Weight    *ember.Tensor
	Reduction Reduction
}

// NewMultiMarginLoss returns a MultiMarginLoss with P 1 and margin 1.
func NewMultiMarginLoss() MultiMarginLoss { return MultiMarginLoss{P: 1, Margin: 1} }

// marginInput checks a multi-class margin loss's input, as PyTorch's
// multi_margin_loss and multilabel_margin_loss, and returns it as
// [N, C] with N and C.
func marginInput(op string, input *ember.Tensor) (x *ember.Tensor, n, c int) {
	d := input.Dim()
	if !(d == 2 && input.Size(1) != 0 || d == 1 && input.Size(0) != 0 || d == 0) {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{input.Shape()}, Msg: fmt.Sprintf("Expected non-empty vector or matrix with optional 0-dim batch size, but got: %v", input.Shape())})
	}
	switch d {
	case 0:
		return input.Reshape(1, 1), 1, 1
	case 1:
		return input.Reshape(1, input.Size(0)), 1, input.Size(0)
	}
	return input, input.Size(0), input.Size(1)
}

// targetValues returns an Int64 target's values, read from its device
// (nil on the meta device, which has none).
func targetValues(op string, target *ember.Tensor) []int64 {
	if target.DType() != ember.Int64 {
		panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{target.DType()}, Msg: fmt.Sprintf("expected scalar type Long but found %v", target.DType())})
	}
	if target.Device().Type == ember.MetaType {
		return nil
	}
	return target.CPU().Contiguous().Int64s()
}

// Loss returns the multi-margin loss.
func (m MultiMarginLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	const op = "multi_margin_loss"
	if m.P != 1 && m.P != 2 {
		panic(&ember.ValueError{Op: op, Msg: "only p == 1 and p == 2 supported"})
	}
	x, n, c := marginInput(op, input)
	if target.Dim() > 1 || target.NumElements() != n {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{input.Shape(), target.Shape()}, Msg: fmt.Sprintf("inconsistent target size, got: %v", target.Shape())})
	}
	for _, v := range targetValues(op, target) {
		if v < 0 || v >= int64(c) {
			panic(&ember.ValueError{Op: op, Msg: "target out of range"})
		}
	}
	if m.Weight != nil && m.Weight.NumElements() != c {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{input.Shape(), m.Weight.Shape()}, Msg: fmt.Sprintf("weight tensor should be defined either for all %d classes or no classes but got weight tensor of shape: %v", c, m.Weight.Shape())})
	}
	t := target.Reshape(n)
	xy := x.Gather(1, t.Reshape(n, 1))
	h := x.Sub(xy).AddScalar(m.Margin).ReLU() // PyTorch counts z > 0 only: ReLU's gradient at 0 is 0
	if m.P == 2 {
		h = h.Square()
	}
	if m.Weight != nil {
		h = h.Mul(m.Weight.Reshape(c).IndexSelect(0, t).Reshape(n, 1))
	}
	own := ember.OneHot(t, c).EqScalar(1) // j = y counts for nothing
	l := ember.WhereScalar(own, 0, h).Sum(ember.Dims(1)).DivScalar(float64(c))
	if input.Dim() < 2 {
		l = l.Reshape()
	}
	return reduce(l, m.Reduction)
}

// MultiLabelMarginLoss is torch.nn.MultiLabelMarginLoss: input [N, C] (or
// [C]) and Int64 targets of its shape, each row listing the target
// classes up to the first −1; the loss of a row is the sum over its
// target classes j and its non-target classes k of max(0, 1 − (x[j] −
// x[k])), divided by C (a class listed twice counts twice, as PyTorch's).
// The targets are read on the host.
type MultiLabelMarginLoss struct{ Reduction Reduction }

// Loss returns the multi-label margin loss.
func (m MultiLabelMarginLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	const op = "multilabel_margin_loss"
	x, n, c := marginInput(op, input)
	if input.Dim() <= 1 && !(target.Dim() <= 1 && target.NumElements() == c) ||
		input.Dim() == 2 && !(target.Dim() == 2 && target.Size(0) == n && target.Size(1) == c) {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{input.Shape(), target.Shape()}, Msg: fmt.Sprintf("inconsistent size %v for argument #2 'target'", target.Shape())})
	}
	tv := targetValues(op, target)
	var l *ember.Tensor
	if tv == nil {
		l = x.Sum(ember.Dims(1)).MulScalar(0)
	} else {
		for _, v := range tv {
			if v < -1 || v >= int64(c) {
				panic(&ember.ValueError{Op: op, Msg: "argument #2 'target' is out of range"})
			}
		}
		// each row's listed targets (up to its first −1, repeats kept), mt
		// at most: js[n, mt] and their weights (0 pads); other[n, c]: 1 for
		// the classes a row does not list. O(n·mt·c), not O(n·c²): rows
		// list few targets, and c may be large.
		mt := 0
		for r := 0; r < n; r++ {
			k := 0
			for k < c && tv[r*c+k] >= 0 {
				k++
			}
			mt = max(mt, k)
		}
		mt = max(mt, 1)
		js := make([]int64, n*mt)
		jw := make([]float64, n*mt)
		other := make([]float64, n*c)
		for r := 0; r < n; r++ {
			for k := range c {
				other[r*c+k] = 1
			}
			for k, v := range tv[r*c : (r+1)*c] {
				if v < 0 {
					break
				}
				js[r*mt+k], jw[r*mt+k] = v, 1
				other[r*c+int(v)] = 0
			}
		}
		on := ember.On(x.Device())
		xj := x.Gather(1, ember.FromSlice(js, ember.Shape{n, mt}, on)) // x[j]
		w := ember.FromSlice(jw, ember.Shape{n, mt, 1}, on).Cast(x.DType()).Mul(ember.FromSlice(other, ember.Shape{n, 1, c}, on).Cast(x.DType()))
		z := x.Unsqueeze(1).Sub(xj.Unsqueeze(2)).AddScalar(1) // z[n, j, k] = 1 − x[j] + x[k]
		l = z.ReLU().Mul(w).Sum(ember.Dims(1, 2))
	}
	l = l.DivScalar(float64(c))
	if input.Dim() < 2 {
		l = l.Reshape()
	}
	return reduce(l, m.Reduction)
}

// CosineEmbeddingLoss is torch.nn.CosineEmbeddingLoss: with cos the cosine
// similarity of input1 and input2 along their last dim (each squared norm
// plus 1e-12, as PyTorch), 1 − cos where the target is 1 and max(0, cos −
// Margin) where it is −1 (0 for other targets). Inputs [N, D] take
// targets [N]; inputs [D] a 0-d target.
type CosineEmbeddingLoss struct {
	Margin    float64
	Reduction Reduction
}

// Loss returns the cosine embedding loss.
func (ce CosineEmbeddingLoss) Loss(input1, input2, target *ember.Tensor) *ember.Tensor {
	const op = "cosine_embedding_loss"
	td := target.Dim()
	if td > 1 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{target.Shape()}, Msg: "0D or 1D target tensor expected, multi-target not supported"})
	}
	if input1.Dim() != td+1 || input2.Dim() != td+1 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{input1.Shape(), input2.Shape()},
			Msg: fmt.Sprintf("%dD target tensor expects %dD input tensors, but found inputs with sizes %v and %v.", td, td+1, input1.Shape(), input2.Shape())})
	}
	const eps = 1e-12
	prod := input1.Mul(input2).Sum(ember.Dims(td))
	mag1 := input1.Mul(input1).Sum(ember.Dims(td)).AddScalar(eps)
	mag2 := input2.Mul(input2).Sum(ember.Dims(td)).AddScalar(eps)
	cos := prod.Div(mag1.Mul(mag2).Sqrt())
	pos := ember.WhereTensorScalar(target.EqScalar(1), cos.RSubScalar(1), 0)
	neg := ember.WhereTensorScalar(target.EqScalar(-1), cos.SubScalar(ce.Margin).Clamp(0, inf), 0)
	return reduce(pos.Add(neg), ce.Reduction)
}

// TripletMarginLoss is torch.nn.TripletMarginLoss: max(0, Margin +
// d(anchor, positive) − d(anchor, negative)), d the P-norm of a − b + Eps
// along the last dim (torch.pairwise_distance); with Swap, d(anchor,
// negative) is replaced by d(positive, negative) where that is smaller.
// NewTripletMarginLoss gives PyTorch's defaults: margin 1, P 2, Eps 1e-6.
type TripletMarginLoss struct {
	Margin, P, Eps float64
	Swap           bool
	Reduction      Reduction
}

// NewTripletMarginLoss returns a TripletMarginLoss with margin 1, P 2 and
// Eps 1e-6.
func NewTripletMarginLoss() TripletMarginLoss {
	return TripletMarginLoss{Margin: 1, P: 2, Eps: 1e-6}
}

// Loss returns the triplet margin loss.
func (tm TripletMarginLoss) Loss(anchor, positive, negative *ember.Tensor) *ember.Tensor {
	const op = "triplet_margin_loss"
	a, p, n := anchor.Dim(), positive.Dim(), negative.Dim()
	if a != p || a != n {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{anchor.Shape(), positive.Shape(), negative.Shape()},
			Msg: fmt.Sprintf("All inputs should have same dimension but got %dD, %dD and %dD inputs.", a, p, n)})
	}
	dist := func(x, y *ember.Tensor) *ember.Tensor {
		d := max(x.Dim(), y.Dim()) - 1
		if d < 0 {
			d = 0
		}
		return x.Sub(y).AddScalar(tm.Eps).Norm(tm.P, ember.Dims(d))
	}
	dPos := dist(anchor, positive)
	dNeg := dist(anchor, negative)
	if tm.Swap {
		dNeg = dNeg.Minimum(dist(positive, negative))
	}
	return reduce(dPos.Sub(dNeg).AddScalar(tm.Margin).Clamp(0, inf), tm.Reduction)
}

// PoissonNLLLoss is torch.nn.PoissonNLLLoss, the negative log likelihood
// of a Poisson target: e^x − y·x with LogInput (x the log of the rate),
// else x − y·log(x + Eps); Full adds Stirling's approximation of log(y!),
// y·log(y) − y + ½·log(2πy), where y > 1. NewPoissonNLLLoss gives
// PyTorch's defaults: LogInput, Eps 1e-8.
type PoissonNLLLoss struct {
	LogInput, Full bool
	Eps            float64
	Reduction      Reduction
}

// NewPoissonNLLLoss returns a PoissonNLLLoss with LogInput and Eps 1e-8.
func NewPoissonNLLLoss() PoissonNLLLoss { return PoissonNLLLoss{LogInput: true, Eps: 1e-8} }

// Loss returns the Poisson NLL.
func (pl PoissonNLLLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	var l *ember.Tensor
	if pl.LogInput {
		l = input.Exp().Sub(target.Mul(input))
	} else {
		l = input.Sub(target.Mul(input.AddScalar(pl.Eps).Log()))
	}
	if pl.Full {
		st := target.Mul(target.Log()).Sub(target).Add(target.MulScalar(2 * math.Pi).Log().MulScalar(0.5))
		l = l.Add(ember.WhereTensorScalar(target.GtScalar(1), st, 0))
	}
	return reduce(l, pl.Reduction)
}

// GaussianNLLLoss is torch.nn.GaussianNLLLoss: ½·(log v + (x − y)²/v),
// plus ½·log(2π) with Full, v the variance var clamped to at least Eps
// (the clamp does not reach the gradient, as PyTorch's in-place no-grad
// clamp). Var has the input's shape, or its shape without the last dim,
// or with a last dim of 1 (one variance per row); a negative variance
// panics with a *ember.ValueError. NewGaussianNLLLoss gives PyTorch's
// default Eps, 1e-6.
type GaussianNLLLoss struct {
	Full      bool
	Eps       float64
	Reduction Reduction
}

// NewGaussianNLLLoss returns a GaussianNLLLoss with Eps 1e-6.
func NewGaussianNLLLoss() GaussianNLLLoss { return GaussianNLLLoss{Eps: 1e-6} }

// Loss returns the Gaussian NLL of input (the means) against target.
func (gl GaussianNLLLoss) Loss(input, target, variance *ember.Tensor) *ember.Tensor {
	const op = "gaussian_nll_loss"
	is, vs := input.Shape(), variance.Shape()
	if !is.Equal(vs) {
		switch {
		case len(is) > 0 && ember.Shape(is[:len(is)-1]).Equal(vs):
			variance = variance.Unsqueeze(-1)
		case len(is) > 0 && len(vs) > 0 && ember.Shape(is[:len(is)-1]).Equal(vs[:len(vs)-1]) && vs[len(vs)-1] == 1:
		default:
			panic(&ember.ValueError{Op: op, Msg: "var is of incorrect size"})
		}
	}
	if gl.Reduction == BatchMean {
		reduce(input, gl.Reduction) // panics
	}
	if variance.Device().Type != ember.MetaType && variance.NumElements() > 0 && variance.LtScalar(0).Any().Item() != 0 {
		panic(&ember.ValueError{Op: op, Msg: "var has negative entry/entries"})
	}
	// the clamped value, with the gradient of var itself
	v := variance.Add(variance.Detach().Clamp(gl.Eps, inf).Sub(variance.Detach()))
	l := v.Log().Add(input.Sub(target).Square().Div(v)).MulScalar(0.5)
	if gl.Full {
		l = l.AddScalar(0.5 * math.Log(2*math.Pi))
	}
	return reduce(l, gl.Reduction)
}
