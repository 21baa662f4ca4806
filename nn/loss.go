package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// Reduction says how a loss combines per-element values.
type Reduction int

// The reductions, as PyTorch's reduction="mean" | "sum" | "none".
const (
	Mean Reduction = iota
	Sum
	None
)

// Loss is a criterion comparing a prediction with a target.
type Loss interface {
	Loss(input, target *ember.Tensor) *ember.Tensor
}

func (r Reduction) String() string {
	switch r {
	case Sum:
		return "sum"
	case None:
		return "none"
	}
	return "mean"
}

func reduce(l *ember.Tensor, r Reduction) *ember.Tensor {
	switch r {
	case Sum:
		return l.Sum()
	case None:
		return l
	}
	return l.Mean()
}

// CrossEntropyLoss is log-softmax followed by the negative log likelihood
// of int64 class targets, with optional label smoothing, as
// torch.nn.CrossEntropyLoss. Input is [N, C] logits, target [N].
type CrossEntropyLoss struct {
	LabelSmoothing float64
	Reduction      Reduction
	// Weight, when set, weights each class ([C]); the mean divides by the
	// targets' summed weight, as PyTorch.
	Weight *ember.Tensor
}

// Loss returns the cross entropy.
func (c CrossEntropyLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	if input.Dim() != 2 || target.Dim() != 1 || target.Size(0) != input.Size(0) {
		panic(&ember.ShapeError{Op: "cross_entropy", Shapes: []ember.Shape{input.Shape(), target.Shape()}, Msg: "expected [N, C] input and [N] target"})
	}
	if c.Weight == nil {
		return ember.CrossEntropy(input, target, c.LabelSmoothing, c.Reduction.String())
	}
	logp := input.LogSoftmax(1)
	return nllSmoothed(logp, target, c.Weight, c.LabelSmoothing, c.Reduction)
}

func nllSmoothed(logp, target, weight *ember.Tensor, eps float64, red Reduction) *ember.Tensor {
	nc := logp.Size(1)
	oh := oneHot(target, nc, logp.DType())
	wlogp := logp
	if weight != nil {
		wlogp = logp.Mul(weight)
	}
	nll := wlogp.Mul(oh).Sum(ember.Dims(1)).Neg() // [N]
	var smooth *ember.Tensor
	if eps > 0 {
		smooth = wlogp.Sum(ember.Dims(1)).Neg().DivScalar(float64(nc)) // [N]
	}
	if red == Mean && weight != nil {
		wsum := oh.Mul(weight).Sum()
		l := nll.Sum().Div(wsum)
		if eps > 0 {
			l = l.MulScalar(1 - eps).Add(smooth.Sum().Div(wsum).MulScalar(eps))
		}
		return l
	}
	l := nll
	if eps > 0 {
		l = nll.MulScalar(1 - eps).Add(smooth.MulScalar(eps))
	}
	return reduce(l, red)
}

// NLLLoss is the negative log likelihood of log-probabilities [N, C] at
// int64 targets [N].
type NLLLoss struct {
	Reduction Reduction
	Weight    *ember.Tensor
}

// Loss returns the NLL.
func (n NLLLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	if input.Dim() != 2 || target.Dim() != 1 {
		panic(&ember.ShapeError{Op: "nll_loss", Shapes: []ember.Shape{input.Shape(), target.Shape()}, Msg: "expected [N, C] input and [N] target"})
	}
	if n.Weight == nil {
		return ember.NLLLoss(input, target, n.Reduction.String())
	}
	return nllSmoothed(input, target, n.Weight, 0, n.Reduction)
}

// MSELoss is the squared error.
type MSELoss struct{ Reduction Reduction }

// Loss returns the MSE.
func (m MSELoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	return ember.MSELoss(input, target, m.Reduction.String())
}

// BCEWithLogitsLoss is binary cross entropy on logits, computed stably as
// max(x,0) - x·y + log(1+e^-|x|), with an optional PosWeight for positives
// (broadcast to the input, as torch.nn.BCEWithLogitsLoss's pos_weight).
// Either way the loss records one BinaryCrossEntropyWithLogitsBackward0
// node, as PyTorch's; with a PosWeight it is an ember.Function.
type BCEWithLogitsLoss struct {
	Reduction Reduction
	PosWeight *ember.Tensor
}

// Loss returns the BCE.
func (b BCEWithLogitsLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	if !input.Shape().Equal(target.Shape()) {
		panic(&ember.ShapeError{Op: "binary_cross_entropy_with_logits", Shapes: []ember.Shape{input.Shape(), target.Shape()}, Msg: fmt.Sprintf("target size %v must equal input size %v", target.Shape(), input.Shape())})
	}
	if b.PosWeight == nil {
		return ember.BCEWithLogits(input, target, b.Reduction.String())
	}
	return ember.Apply(bceWithLogitsPosWeight{b.Reduction}, input, target, b.PosWeight)
}

// bceWithLogitsPosWeight is binary cross entropy on logits x with a
// positive weight pw (broadcast to x), as one node: the loss is
// (1−y)·x + c·softplus(−x) with c = 1 + (pw−1)·y, and
// softplus(−x) = max(−x, 0) + log1p(e^−|x|). Its gradients are
// ∂x = (1−y) − c·σ(−x), ∂y = −x + (pw−1)·softplus(−x) and
// ∂pw = y·softplus(−x), times the reduction's.
type bceWithLogitsPosWeight struct{ red Reduction }

// Name is PyTorch's grad_fn for binary_cross_entropy_with_logits.
func (bceWithLogitsPosWeight) Name() string { return "BinaryCrossEntropyWithLogitsBackward0" }

func (f bceWithLogitsPosWeight) Forward(ctx *ember.FunctionCtx, in []*ember.Tensor) *ember.Tensor {
	x, y, pw := in[0], in[1], in[2]
	spNeg := x.Neg().ReLU().Add(x.Abs().Neg().Exp().Log1p())
	coef := pw.SubScalar(1).Mul(y).AddScalar(1)
	ctx.SaveForBackward(x, y, pw, spNeg, coef)
	return reduce(y.RSubScalar(1).Mul(x).Add(coef.Mul(spNeg)), f.red)
}

func (f bceWithLogitsPosWeight) Backward(ctx *ember.FunctionCtx, g *ember.Tensor) []*ember.Tensor {
	s := ctx.Saved()
	x, y, pw, spNeg, coef := s[0], s[1], s[2], s[3], s[4]
	if f.red == Mean {
		g = g.DivScalar(float64(x.NumElements()))
	}
	gs := make([]*ember.Tensor, 3)
	if ctx.NeedsInputGrad(0) {
		gs[0] = g.Mul(y.RSubScalar(1).Sub(coef.Mul(x.Neg().Sigmoid())))
	}
	if ctx.NeedsInputGrad(1) {
		gs[1] = g.Mul(pw.SubScalar(1).Mul(spNeg).Sub(x))
	}
	if ctx.NeedsInputGrad(2) {
		gs[2] = g.Mul(y.Mul(spNeg)) // x's shape: Apply sums it to pw's
	}
	return gs
}
