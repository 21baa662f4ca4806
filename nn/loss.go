package nn

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// Reduction says how a loss combines per-element values.
type Reduction int

// The reductions, as PyTorch's reduction="mean" | "sum" | "none" |
// "batchmean" (KLDivLoss's only; the other losses refuse it, as PyTorch).
const (
	Mean Reduction = iota
	Sum
	None
	BatchMean
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
	case BatchMean:
		return "batchmean"
	}
	return "mean"
}

func reduce(l *ember.Tensor, r Reduction) *ember.Tensor {
	switch r {
	case Sum:
		return l.Sum()
	case None:
		return l
	case BatchMean:
		panic(&ember.ShapeError{Op: "loss", Msg: "batchmean is not a valid value for reduction"})
	}
	return l.Mean()
}

// CrossEntropyLoss is log-softmax followed by the negative log likelihood,
// with optional label smoothing, as torch.nn.CrossEntropyLoss. Input is
// [N, C], [N, C, d...] or unbatched [C] logits; target holds class
// indices (an integer dtype, the input's shape without C; IgnoreIndex
// targets count for nothing) or class probabilities (a floating dtype, the
// input's shape).
type CrossEntropyLoss struct {
	LabelSmoothing float64
	Reduction      Reduction
	// Weight, when set, weights each class ([C]); the mean divides by the
	// targets' summed weight (by N for probability targets), as PyTorch.
	Weight *ember.Tensor
}

// Loss returns the cross entropy.
func (c CrossEntropyLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	if c.Weight == nil {
		return ember.CrossEntropy(input, target, c.LabelSmoothing, c.Reduction.String())
	}
	const op = "cross_entropy"
	if input.Dim() < 1 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{input.Shape()}, Msg: "Expected 1 or more dimensions (got 0)"})
	}
	if !(c.LabelSmoothing >= 0 && c.LabelSmoothing <= 1) { // (NaN too)
		panic(&ember.ShapeError{Op: op, Msg: fmt.Sprintf("label_smoothing must be between 0.0 and 1.0. Got: %v", c.LabelSmoothing)})
	}
	return weightedNLL(op, input.LogSoftmax(classDim(input)), target, c.Weight, c.LabelSmoothing, c.Reduction, true)
}

// classDim is a loss input's class dim: 1, or 0 for an unbatched [C].
func classDim(input *ember.Tensor) int {
	if input.Dim() == 1 {
		return 0
	}
	return 1
}

// weightedNLL is the class-weighted negative log likelihood of the
// log-probabilities logp at target, with label smoothing eps, as PyTorch's
// nll_loss and cross_entropy with weight: class-index targets go through
// ember.NLLLoss (which checks them and skips IgnoreIndex), the smoothing
// term leaves ignored targets out too, and the mean divides by the summed
// weight of the targets that count. Probability targets (prob) weight
// each class's term and the mean divides by N.
func weightedNLL(op string, logp, target, weight *ember.Tensor, eps float64, red Reduction, prob bool) *ember.Tensor {
	if logp.Dim() < 1 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{logp.Shape()}, Msg: "Expected 1 or more dimensions (got 0)"})
	}
	cd := classDim(logp)
	c := logp.Size(cd)
	if weight.Dim() != 1 || weight.Size(0) != c {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{logp.Shape(), weight.Shape()}, Msg: fmt.Sprintf("weight tensor should be defined either for all %d classes or no classes but got weight tensor of shape: %v", c, weight.Shape())})
	}
	shape := make([]int, logp.Dim())
	for i := range shape {
		shape[i] = 1
	}
	shape[cd] = c
	wb := weight.Reshape(shape...)
	wlogp := logp.Mul(wb)
	if prob && target.DType().IsFloat() {
		if !target.Shape().Equal(logp.Shape()) {
			panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{logp.Shape(), target.Shape()}, Msg: "probability targets must have the input's shape"})
		}
		tg := target
		if eps > 0 {
			tg = tg.MulScalar(1 - eps).AddScalar(eps / float64(c))
		}
		loss := wlogp.Mul(tg).Sum(ember.Dims(cd)).Neg()
		switch red {
		case Sum:
			return loss.Sum()
		case None:
			return loss
		}
		return loss.Sum().DivScalar(float64(loss.NumElements()))
	}
	nll := ember.NLLLoss(wlogp, target, "none")                                    // -w[t]·logp[t], 0 where ignored
	wt := ember.NLLLoss(wb.Detach().Expand(logp.Shape()...), target, "none").Neg() // w[t], 0 where ignored
	var smooth *ember.Tensor
	if eps > 0 {
		ignored := target.Cast(ember.Int64).EqScalar(ember.IgnoreIndex)
		smooth = ember.WhereScalar(ignored, 0, wlogp.Sum(ember.Dims(cd)).Neg())
	}
	combine := func(f func(*ember.Tensor) *ember.Tensor) *ember.Tensor {
		l := f(nll)
		if eps > 0 {
			l = l.MulScalar(1 - eps).Add(f(smooth).MulScalar(eps / float64(c)))
		}
		return l
	}
	switch red {
	case Sum:
		return combine(func(t *ember.Tensor) *ember.Tensor { return t.Sum() })
	case None:
		return combine(func(t *ember.Tensor) *ember.Tensor { return t })
	}
	n := wt.Sum()
	return combine(func(t *ember.Tensor) *ember.Tensor { return t.Sum().Div(n) })
}

// NLLLoss is the negative log likelihood of log-probabilities ([N, C],
// [N, C, d...] or [C]) at integer class targets (IgnoreIndex skipped), as
// torch.nn.NLLLoss; Weight, when set, weights each class ([C]) and the
// mean divides by the targets' summed weight.
type NLLLoss struct {
	Reduction Reduction
	Weight    *ember.Tensor
}

// Loss returns the NLL.
func (n NLLLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	if n.Weight == nil {
		return ember.NLLLoss(input, target, n.Reduction.String())
	}
	return weightedNLL("nll_loss", input, target, n.Weight, 0, n.Reduction, false)
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
	if anyRequiresGrad(x, y, pw) {
		// a graph of the gradients is being built (Saved gives the
		// inputs with their graphs): the intermediates again, from them
		spNeg = x.Neg().ReLU().Add(x.Abs().Neg().Exp().Log1p())
		coef = pw.SubScalar(1).Mul(y).AddScalar(1)
	}
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

// inF32 returns ts with each two-byte float tensor cast to Float32 where
// autocast is on for its device: the pointwise losses run in float32
// under autocast, as PyTorch's autocast lists them (binary_cross_entropy,
// which PyTorch's autocast refuses, too).
func inF32(ts ...*ember.Tensor) []*ember.Tensor {
	out := make([]*ember.Tensor, len(ts))
	for i, t := range ts {
		out[i] = t
		if t != nil && t.DType().IsHalf() {
			if _, on := ember.AutocastDType(t.Device()); on {
				out[i] = t.Cast(ember.Float32)
			}
		}
	}
	return out
}

// L1Loss is the absolute error |input − target| (shapes broadcast), as
// torch.nn.L1Loss; its gradient at a zero difference is 0.
type L1Loss struct{ Reduction Reduction }

// Loss returns the L1 loss.
func (l L1Loss) Loss(input, target *ember.Tensor) *ember.Tensor {
	_, a := diffAbs(input, target)
	return reduce(a, l.Reduction)
}

// SmoothL1Loss is torch.nn.SmoothL1Loss: 0.5·d²/Beta where |d| < Beta,
// else |d| − 0.5·Beta, d = input − target (shapes broadcast). A zero Beta
// means PyTorch's default, 1 (PyTorch's beta = 0 is L1Loss); a negative
// one panics with a *ember.ValueError.
type SmoothL1Loss struct {
	Reduction Reduction
	Beta      float64
}

// Loss returns the smooth L1 loss.
func (s SmoothL1Loss) Loss(input, target *ember.Tensor) *ember.Tensor {
	beta := kink("smooth_l1_loss", "negative values for beta", s.Beta)
	d, a := diffAbs(input, target)
	quad := d.Square().MulScalar(0.5 / beta)
	return reduce(ember.Where(a.LtScalar(beta), quad, a.SubScalar(0.5*beta)), s.Reduction)
}

// kink returns the smooth L1 and Huber losses' kink v, 0 meaning PyTorch's
// default 1; a negative or NaN v panics with op's *ember.ValueError
// ("op does not support what.").
func kink(op, what string, v float64) float64 {
	if v < 0 || v != v {
		panic(&ember.ValueError{Op: op, Msg: op + " does not support " + what + "."})
	}
	if v == 0 {
		return 1
	}
	return v
}

// diffAbs returns input − target (widened as inF32 widens) and its
// absolute value.
func diffAbs(input, target *ember.Tensor) (d, a *ember.Tensor) {
	c := inF32(input, target)
	d = c[0].Sub(c[1])
	return d, d.Abs()
}

// HuberLoss is torch.nn.HuberLoss: 0.5·d² where |d| < Delta, else
// Delta·(|d| − 0.5·Delta), d = input − target (shapes broadcast). A zero
// Delta means PyTorch's default, 1; a negative one panics with a
// *ember.ValueError.
type HuberLoss struct {
	Reduction Reduction
	Delta     float64
}

// Loss returns the Huber loss.
func (h HuberLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	delta := kink("huber_loss", "non-positive values for delta", h.Delta)
	d, a := diffAbs(input, target)
	quad := d.Square().MulScalar(0.5)
	return reduce(ember.Where(a.LtScalar(delta), quad, a.SubScalar(0.5*delta).MulScalar(delta)), h.Reduction)
}

// KLDivLoss is torch.nn.KLDivLoss: the pointwise target·(log target −
// input) of log-probabilities input (0 where target is 0), or, with
// LogTarget, exp(target)·(target − input). Reduction may be BatchMean
// (the sum divided by input's first dim, the true KL divergence per
// sample) as well as Mean (over every element, as PyTorch's default).
// The target's gradient where target is 0 is −input (PyTorch's is NaN).
type KLDivLoss struct {
	Reduction Reduction
	LogTarget bool
}

// Loss returns the KL divergence.
func (k KLDivLoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	c := inF32(input, target)
	input, target = c[0], c[1]
	var l *ember.Tensor
	if k.LogTarget {
		l = target.Exp().Mul(target.Sub(input))
	} else {
		zero := target.EqScalar(0)
		safe := ember.WhereTensorScalar(zero.LogicalNot(), target, 1) // log(1) = 0 where target is 0
		l = target.Mul(safe.Log()).Sub(target.Mul(input))
	}
	if k.Reduction == BatchMean {
		if input.Dim() == 0 {
			return l.Sum()
		}
		return l.Sum().DivScalar(float64(input.Size(0)))
	}
	return reduce(l, k.Reduction)
}

// BCELoss is torch.nn.BCELoss, the binary cross-entropy of probabilities
// input in [0, 1] against target (the same shape): −w·(t·log x +
// (1−t)·log(1−x)), each log clamped to at least −100 as PyTorch does, so
// that x = 0 or 1 gives a finite loss; Weight, when set, broadcasts to the
// input. Inputs outside [0, 1] are not checked (PyTorch raises): they give
// NaN. It records one BinaryCrossEntropyBackward0 node, whose input
// gradient is w·(x − t)/max(x·(1−x), 1e-12), as PyTorch's.
type BCELoss struct {
	Reduction Reduction
	Weight    *ember.Tensor
}

// Loss returns the BCE.
func (b BCELoss) Loss(input, target *ember.Tensor) *ember.Tensor {
	if !input.Shape().Equal(target.Shape()) {
		panic(&ember.ShapeError{Op: "binary_cross_entropy", Shapes: []ember.Shape{target.Shape(), input.Shape()}, Msg: fmt.Sprintf("Using a target size (%v) that is different to the input size (%v) is deprecated. Please ensure they have the same size.", target.Shape(), input.Shape())})
	}
	w := b.Weight
	if w == nil {
		w = ember.OnesLike(input)
	}
	if b.Reduction == BatchMean {
		reduce(input, b.Reduction) // panics
	}
	c := inF32(input, target, w)
	return ember.Apply(bce{b.Reduction}, c[0], c[1], c[2])
}

type bce struct{ red Reduction }

// Name is PyTorch's grad_fn for binary_cross_entropy.
func (bce) Name() string { return "BinaryCrossEntropyBackward0" }

func (f bce) Forward(ctx *ember.FunctionCtx, in []*ember.Tensor) *ember.Tensor {
	x, y, w := in[0], in[1], in[2]
	logx := x.Log().Clamp(-100, math.Inf(1))
	log1mx := x.Neg().Log1p().Clamp(-100, math.Inf(1))
	ctx.SaveForBackward(x, y, w, logx, log1mx)
	l := y.Mul(logx).Add(y.RSubScalar(1).Mul(log1mx)).Neg().Mul(w)
	return reduce(l, f.red)
}

func (f bce) Backward(ctx *ember.FunctionCtx, g *ember.Tensor) []*ember.Tensor {
	s := ctx.Saved()
	x, y, w, logx, log1mx := s[0], s[1], s[2], s[3], s[4]
	if anyRequiresGrad(x, y, w) { // create_graph: as bceWithLogitsPosWeight's
		logx = x.Log().Clamp(-100, math.Inf(1))
		log1mx = x.Neg().Log1p().Clamp(-100, math.Inf(1))
	}
	if f.red == Mean {
		g = g.DivScalar(float64(x.NumElements()))
	}
	gw := g.Mul(w)
	gs := make([]*ember.Tensor, 3)
	if ctx.NeedsInputGrad(0) {
		// PyTorch's EPSILON, 1e-12, as it reaches the kernel: a float32
		den := x.Mul(x.RSubScalar(1)).Clamp(float64(float32(1e-12)), math.Inf(1))
		gs[0] = gw.Mul(x.Sub(y)).Div(den)
	}
	if ctx.NeedsInputGrad(1) {
		gs[1] = gw.Mul(log1mx.Sub(logx))
	}
	if ctx.NeedsInputGrad(2) {
		gs[2] = g.Mul(y.Mul(logx).Add(y.RSubScalar(1).Mul(log1mx)).Neg())
	}
	return gs
}

// anyRequiresGrad reports whether one of ts (nil allowed) requires grad:
// in a Function's Backward, that a graph of the gradients is being built.
func anyRequiresGrad(ts ...*ember.Tensor) bool {
	for _, t := range ts {
		if t != nil && t.RequiresGrad() {
			return true
		}
	}
	return false
}
