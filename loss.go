package ember

import "fmt"

// Losses (torch.nn.functional's): each takes a reduction, "mean", "sum"
// or "none", and records one node named as PyTorch's grad_fn where
// PyTorch does.

// checkReduction validates a loss's reduction: "mean", "sum" or "none".
func checkReduction(op, r string) {
	switch r {
	case "mean", "sum", "none":
	default:
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("%s is not a valid value for reduction", r)})
	}
}

// IgnoreIndex is the target class that NLLLoss and CrossEntropy skip, as
// PyTorch's default ignore_index.
const IgnoreIndex = -100

// needClassDim panics with a *ShapeError for a 0-d loss input, which has
// no class dim (as PyTorch's nll_loss_nd).
func needClassDim(op string, input *Tensor) {
	if input.Dim() < 1 {
		shapeErr(op, fmt.Sprintf("Expected 1 or more dimensions (got %d)", input.Dim()), input.shape)
	}
}

// classDim is the class dim of a loss input: 1, or 0 for an unbatched input.
func classDim(input *Tensor) int {
	if input.Dim() == 1 {
		return 0
	}
	return 1
}

func checkTarget(op string, input, target *Tensor) *Tensor {
	target.live(op)
	sameDevice(op, input, target)
	if !target.dtype.IsInt() {
		panic(&DTypeError{Op: op, DTypes: []DType{target.dtype}, Msg: "expected class-index targets of an integer dtype"})
	}
	cd := classDim(input)
	want := append(append(Shape{}, input.shape[:cd]...), input.shape[cd+1:]...)
	if input.Dim() < 1 || !target.shape.Equal(want) {
		shapeErr(op, "expected target of the input's shape without the class dim", input.shape, target.shape)
	}
	tg := target.Cast(Int64)
	checkClasses(op, tg, input.shape[cd])
	return tg
}

// checkClasses panics with a *ValueError when a target is outside [0, c)
// and is not IgnoreIndex, as PyTorch raises "Target n is out of bounds":
// at once on the CPU, at the next read from the device on CUDA (a deferred
// check, checks.go).
func checkClasses(op string, tg *Tensor, c int) {
	if tg.dev.Type == MetaType || tg.NumElements() == 0 {
		return
	}
	bad := func() *Tensor {
		out := tg.LtScalar(0).LogicalOr(tg.Ge(Full(Shape{}, float64(c), On(tg.dev), Dtype(Int64))))
		return out.LogicalAnd(tg.Ne(Full(Shape{}, IgnoreIndex, On(tg.dev), Dtype(Int64)))).Any()
	}
	checkValues(tg.dev, bad, func() error {
		if tg.st.released.Load() { // released (by a Scope) before the check was read
			return &ValueError{Op: op, Msg: fmt.Sprintf("a target is out of bounds (%d classes)", c)}
		}
		for _, v := range tg.CPU().Contiguous().Int64s() {
			if v != IgnoreIndex && (v < 0 || v >= int64(c)) {
				return &ValueError{Op: op, Msg: fmt.Sprintf("Target %d is out of bounds (%d classes)", v, c)}
			}
		}
		return &ValueError{Op: op, Msg: fmt.Sprintf("a target is out of bounds (%d classes)", c)}
	})
}

// NLLLoss is the negative log-likelihood loss of log-probabilities input
// ([N, C], [N, C, d...] or [C]) at the class indices target ([N], [N, d...]
// or []), as torch.nn.functional.nll_loss: targets equal to IgnoreIndex
// count for nothing, and "mean" divides by the number of the others.
func NLLLoss(input, target *Tensor, reduction string) *Tensor {
	if autocastF32(input) {
		return NLLLoss(autocastCast(input, Float32), target, reduction)
	}
	const name = "nll_loss"
	input.live(name)
	needClassDim(name, input)
	checkReduction(name, reduction)
	tg := checkTarget(name, input, target)
	cd := classDim(input)
	c := input.shape[cd]
	mask := oneHot(tg.Unsqueeze(cd), cd, c) // ignored targets match no class
	xd := input.Detach()
	loss := Where(mask, xd, zeroLike(xd)).Sum(Dims(cd)).Neg()
	var count *Tensor
	out := loss
	switch reduction {
	case "sum":
		out = loss.Sum()
	case "mean":
		count = tg.Ne(Full(Shape{}, IgnoreIndex, On(tg.dev), Dtype(Int64))).Sum().Cast(xd.dtype)
		out = loss.Sum().Div(count)
	}
	// linear in g (mask and count are constants): differentiable as it is
	return selfTwice(record("NllLossBackward0", out, []*Tensor{input}, []*Tensor{mask}, func(g *Tensor) []*Tensor {
		gk := g.Neg()
		switch reduction {
		case "none":
			gk = gk.Unsqueeze(cd)
		case "mean":
			gk = gk.Div(count)
		}
		return []*Tensor{Where(mask, gk, zeroLike(g))}
	}))
}

// CrossEntropy is torch.nn.functional.cross_entropy: log-softmax of logits
// over the class dim (1, or 0 for [C]) followed by NLLLoss, with label
// smoothing as PyTorch mixes it in. target holds class indices (an integer
// dtype; IgnoreIndex is skipped) or, with logits' shape and a floating
// dtype, class probabilities.
func CrossEntropy(logits, target *Tensor, labelSmoothing float64, reduction string) *Tensor {
	if autocastF32(logits) || autocastF32(target) {
		return CrossEntropy(autocastCast(logits, Float32), autocastCast(target, Float32), labelSmoothing, reduction)
	}
	const name = "cross_entropy"
	logits.live(name)
	target.live(name)
	needClassDim(name, logits)
	checkReduction(name, reduction)
	if !(labelSmoothing >= 0 && labelSmoothing <= 1) { // (NaN too)
		panic(&ShapeError{Op: name, Msg: fmt.Sprintf("label_smoothing must be between 0.0 and 1.0. Got: %v", labelSmoothing)})
	}
	cd := classDim(logits)
	c := float64(logits.shape[cd])
	lsm := logits.LogSoftmax(cd)
	if target.dtype.IsFloat() {
		if !target.shape.Equal(logits.shape) {
			shapeErr(name, "probability targets must have the input's shape", logits.shape, target.shape)
		}
		tg := target
		if labelSmoothing > 0 {
			tg = tg.MulScalar(1 - labelSmoothing).AddScalar(labelSmoothing / c)
		}
		loss := lsm.Mul(tg).Sum(Dims(cd)).Neg()
		switch reduction {
		case "sum":
			return loss.Sum()
		case "mean":
			return loss.Sum().DivScalar(float64(logits.NumElements()) / c)
		}
		return loss
	}
	nll := NLLLoss(lsm, target, reduction)
	if labelSmoothing == 0 {
		return nll
	}
	tg := target.Cast(Int64)
	ignore := tg.Eq(Full(Shape{}, IgnoreIndex, On(tg.dev), Dtype(Int64)))
	smooth := lsm.Sum(Dims(cd)).Neg()
	smooth = Where(ignore, zeroLike(smooth), smooth)
	switch reduction {
	case "sum":
		smooth = smooth.Sum()
	case "mean":
		smooth = smooth.Sum().Div(ignore.LogicalNot().Sum().Cast(smooth.dtype))
	}
	return nll.MulScalar(1 - labelSmoothing).Add(smooth.MulScalar(labelSmoothing / c))
}

// reduceLoss applies a reduction to an elementwise loss (detached) and
// returns the scale the gradient of each element gets: g itself, or g/n.
func reduceLoss(loss *Tensor, reduction string) *Tensor {
	switch reduction {
	case "sum":
		return loss.Sum()
	case "mean":
		return loss.Mean()
	}
	return loss
}

func lossGrad(g *Tensor, reduction string, n int) *Tensor {
	if reduction == "mean" {
		return g.DivScalar(float64(n))
	}
	return g
}

// MSELoss is the squared error of input against target (shapes broadcast),
// as torch.nn.functional.mse_loss.
func MSELoss(input, target *Tensor, reduction string) *Tensor {
	if autocastF32(input) || autocastF32(target) {
		return MSELoss(autocastCast(input, Float32), autocastCast(target, Float32), reduction)
	}
	const name = "mse_loss"
	input.live(name)
	target.live(name)
	sameDevice(name, input, target)
	checkReduction(name, reduction)
	// diffG: the difference with its graph (a Sub node that saves
	// nothing), for twice; backward reads its data alone
	diffG := input.Sub(target)
	diff := diffG.Detach()
	out := reduceLoss(diff.Mul(diff), reduction)
	n := diff.NumElements()
	back := func(g, diff *Tensor) []*Tensor {
		d := lossGrad(g, reduction, n).Mul(diff).MulScalar(2)
		return []*Tensor{d, d.Neg()}
	}
	return recordTwice("MseLossBackward0", out, []*Tensor{input, target}, []*Tensor{diff},
		func(g *Tensor) []*Tensor { return back(g, diff) }, func(g *Tensor) []*Tensor { return back(g, diffG) })
}

// BCEWithLogits is the binary cross-entropy of sigmoid(input) against
// target in [0, 1], computed stably, as
// torch.nn.functional.binary_cross_entropy_with_logits.
func BCEWithLogits(input, target *Tensor, reduction string) *Tensor {
	if autocastF32(input) || autocastF32(target) {
		return BCEWithLogits(autocastCast(input, Float32), autocastCast(target, Float32), reduction)
	}
	const name = "binary_cross_entropy_with_logits"
	input.live(name)
	target.live(name)
	sameDevice(name, input, target)
	checkReduction(name, reduction)
	if !target.shape.Equal(input.shape) {
		shapeErr(name, "Target size must be the same as input size", target.shape, input.shape)
	}
	xd, yd := input.Detach(), target.Detach()
	// max(x, 0) - x*y + log(1 + exp(-|x|))
	loss := xd.ReLU().Sub(xd.Mul(yd)).Add(xd.Abs().Neg().Exp().Log1p())
	out := reduceLoss(loss, reduction)
	n := loss.NumElements()
	back := func(g, xd, yd *Tensor) []*Tensor {
		gs := lossGrad(g, reduction, n)
		return []*Tensor{
			gradIf(input, func() *Tensor { return gs.Mul(xd.Sigmoid().Sub(yd)) }),
			gradIf(target, func() *Tensor { return gs.Mul(xd).Neg() })}
	}
	// twice: input and target, whose storages are xd's and yd's
	return recordTwice("BinaryCrossEntropyWithLogitsBackward0", out, []*Tensor{input, target}, []*Tensor{xd, yd},
		func(g *Tensor) []*Tensor { return back(g, xd, yd) }, func(g *Tensor) []*Tensor { return back(g, input, target) })
}
