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
// max(x,0) - x·y + log(1+e^-|x|), with an optional PosWeight for positives.
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
	// softplus(-x) = log(1+e^-x) = max(-x,0) + log1p(e^-|x|)
	spNeg := input.Neg().ReLU().Add(input.Abs().Neg().Exp().Log1p())
	// (1-y)·x + (1+(pw-1)·y)·softplus(-x)
	coef := b.PosWeight.SubScalar(1).Mul(target).AddScalar(1)
	l := target.RSubScalar(1).Mul(input).Add(coef.Mul(spNeg))
	return reduce(l, b.Reduction)
}
