package nn

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// CTCLoss is torch.nn.CTCLoss, the connectionist temporal classification
// loss: the negative log likelihood of the targets summed over every
// alignment with the inputs, computed by the alpha recursion (one
// log-sum-exp over the states and their two shifts per time step, in
// ember ops, so it runs on every device and autograd gives the gradient).
// Blank is the blank label; ZeroInfinity turns the infinite losses of
// impossible alignments (and their gradients) into 0. The mean reduction
// divides each loss by its target length (at least 1), then averages over
// the batch, as PyTorch's.
//
// The gradient with respect to the log-probabilities is PyTorch's:
// e^lp − (the alignments' posterior), which is the true gradient once it
// goes back through the log_softmax that makes log-probabilities (the
// e^lp terms of a time step sum to 0 there). For an impossible alignment
// without ZeroInfinity, PyTorch's gradient is NaN, ember's e^lp.
type CTCLoss struct {
	Blank        int
	ZeroInfinity bool
	Reduction    Reduction
}

// ctcLSE is log Σ e^tᵢ, −Inf where every tᵢ is −Inf, without the NaN
// gradients of that case (unreachable states are common): the shift is
// the detached maximum, 0 where that is −Inf.
func ctcLSE(ts ...*ember.Tensor) *ember.Tensor {
	m := ts[0].Detach()
	for _, t := range ts[1:] {
		m = m.Maximum(t.Detach())
	}
	none := m.EqScalar(math.Inf(-1))
	ms := ember.WhereScalar(none, 0, m)
	var s *ember.Tensor
	for _, t := range ts {
		e := t.Sub(ms).Exp()
		if s == nil {
			s = e
		} else {
			s = s.Add(e)
		}
	}
	out := ember.WhereScalar(none, 1, s).Log().Add(ms)
	return ember.WhereScalar(none, math.Inf(-1), out)
}

// lengths reads a CTC length argument: an integer tensor of n values
// (or, unbatched, one).
func ctcLengths(op, what string, t *ember.Tensor, n int) []int64 {
	if t.DType().IsFloat() || t.DType() == ember.Bool {
		panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{t.DType()}, Msg: what + " must be integral"})
	}
	if t.Dim() > 1 || t.NumElements() != n {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{t.Shape()}, Msg: what + " must be of size batch_size"})
	}
	return t.CPU().Contiguous().Cast(ember.Int64).Int64s()
}

// Loss returns the CTC loss of logProbs [T, N, C] (log-softmax outputs;
// [T, C] unbatched) against targets, either padded [N, S] or the targets
// concatenated [Σ targetLengths] ([S] unbatched), with inputLengths and
// targetLengths integer tensors of N values (0-d unbatched). The lengths
// and targets are read on the host.
func (l CTCLoss) Loss(logProbs, targets, inputLengths, targetLengths *ember.Tensor) *ember.Tensor {
	const op = "ctc_loss"
	unbatched := logProbs.Dim() == 2
	if unbatched {
		logProbs = logProbs.Unsqueeze(1)
		targets = targets.Unsqueeze(0)
		inputLengths, targetLengths = inputLengths.Reshape(1), targetLengths.Reshape(1)
	}
	if logProbs.Dim() != 3 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{logProbs.Shape()}, Msg: "log_probs must be 3-D (input_length, batch_size, num_labels) or 2-D unbatched"})
	}
	if !logProbs.DType().IsFloat() {
		panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{logProbs.DType()}, Msg: "log_probs must be floating point"})
	}
	T, n, c := logProbs.Size(0), logProbs.Size(1), logProbs.Size(2)
	if l.Blank < 0 || l.Blank >= c {
		panic(&ember.ValueError{Op: op, Msg: "blank must be in label range"})
	}
	if l.Reduction == BatchMean {
		reduce(logProbs, l.Reduction) // panics
	}
	if targets.DType().IsFloat() || targets.DType() == ember.Bool {
		panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{targets.DType()}, Msg: "targets must be integral"})
	}
	dev, dt := logProbs.Device(), logProbs.DType()
	if dev.Type == ember.MetaType { // shapes only
		out := ember.Zeros(ember.Shape{n}, ember.On(dev), ember.Dtype(dt))
		if l.Reduction != None {
			return out.Sum()
		} else if unbatched {
			return out.Reshape()
		}
		return out
	}
	il := ctcLengths(op, "input_lengths", inputLengths, n)
	tl := ctcLengths(op, "target_lengths", targetLengths, n)
	tv := targets.CPU().Contiguous().Cast(ember.Int64).Int64s()
	// each sample's targets, from the padded or the concatenated form
	labels := make([][]int64, n)
	smax := 0
	var sum int64
	for i := range n {
		if il[i] < 1 || il[i] > int64(T) {
			if il[i] > int64(T) {
				panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("Expected input_lengths to have value at most %d, but got value %d (while checking arguments for ctc_loss_cpu)", T, il[i])})
			}
			panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("input_lengths must be positive, got %d", il[i])})
		}
		if tl[i] < 0 {
			panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("target_lengths must be non-negative, got %d", tl[i])})
		}
		smax = max(smax, int(tl[i]))
		sum += tl[i]
	}
	if targets.Dim() == 2 {
		if targets.Size(0) != n {
			panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{targets.Shape()}, Msg: fmt.Sprintf("Expected tensor to have size %d at dimension 0, but got size %d for argument #2 'targets' (while checking arguments for ctc_loss_cpu)", n, targets.Size(0))})
		}
		if smax > targets.Size(1) {
			panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{targets.Shape()}, Msg: fmt.Sprintf("Expected tensor to have size at least %d at dimension 1, but got size %d for argument #2 'targets' (while checking arguments for ctc_loss_cpu)", smax, targets.Size(1))})
		}
		s := targets.Size(1)
		for i := range n {
			labels[i] = tv[i*s : i*s+int(tl[i])]
		}
	} else if targets.Dim() == 1 {
		if int64(targets.Size(0)) != sum {
			panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{targets.Shape()}, Msg: fmt.Sprintf("Expected tensor to have size %d at dimension 0, but got size %d for argument #2 'targets' (while checking arguments for ctc_loss_cpu)", sum, targets.Size(0))})
		}
		off := 0
		for i := range n {
			labels[i] = tv[off : off+int(tl[i])]
			off += int(tl[i])
		}
	} else {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{targets.Shape()}, Msg: "targets must be padded [N, S] or concatenated [sum(target_lengths)]"})
	}
	// the extended labels l′ (blank, l1, blank, l2, ..., blank), where a
	// state may come from two back (a label unlike the one two back), the
	// initial states, and the final ones
	S := 2*smax + 1
	ext := make([]int64, n*S)
	skip := make([]bool, n*S)
	init := make([]bool, n*S)
	final := make([]int64, 2*n)
	second := make([]bool, n)
	for i, lab := range labels {
		for s := range S {
			ext[i*S+s] = int64(l.Blank)
			if s%2 == 1 && s/2 < len(lab) {
				v := lab[s/2]
				if v < 0 || v >= int64(c) {
					panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("target %d is out of the label range [0, %d)", v, c)})
				}
				ext[i*S+s] = v
				skip[i*S+s] = s >= 3 && v != int64(l.Blank) && v != lab[s/2-1]
			}
		}
		init[i*S] = true
		if len(lab) > 0 {
			init[i*S+1] = true
		}
		final[2*i], final[2*i+1] = int64(2*len(lab)), int64(max(2*len(lab)-1, 0))
		second[i] = len(lab) > 0
	}
	on := ember.On(dev)
	extT := ember.FromSlice(ext, ember.Shape{n, S}, on)
	skipT := ember.FromSlice(skip, ember.Shape{n, S}, on)
	ninf := math.Inf(-1)
	emit := func(t int) *ember.Tensor { return logProbs.Select(0, t).Gather(1, extT) }
	alpha := ember.WhereTensorScalar(ember.FromSlice(init, ember.Shape{n, S}, on), emit(0), ninf)
	negCol := func(k int) *ember.Tensor { return ember.Full(ember.Shape{n, k}, ninf, on, ember.Dtype(dt)) }
	for t := 1; t < T; t++ {
		var sh1, sh2 *ember.Tensor
		if S > 1 {
			sh1 = ember.Cat([]*ember.Tensor{negCol(1), alpha.Narrow(1, 0, S-1)}, 1)
		} else {
			sh1 = negCol(1)
		}
		if S > 2 {
			sh2 = ember.WhereTensorScalar(skipT, ember.Cat([]*ember.Tensor{negCol(2), alpha.Narrow(1, 0, S-2)}, 1), ninf)
		} else {
			sh2 = negCol(S)
		}
		next := ctcLSE(alpha, sh1, sh2).Add(emit(t))
		live := make([]bool, n)
		for i := range n {
			live[i] = int64(t) < il[i]
		}
		alpha = ember.Where(ember.FromSlice(live, ember.Shape{n, 1}, on), next, alpha)
	}
	ends := alpha.Gather(1, ember.FromSlice(final, ember.Shape{n, 2}, on))
	last := ember.WhereTensorScalar(ember.FromSlice(second, ember.Shape{n}, on), ends.Select(1, 1), ninf)
	nll := ctcLSE(ends.Select(1, 0), last).Neg()
	// PyTorch's gradient adds e^lp at every time step within the input:
	// a term of value 0 with that gradient
	within := make([]float64, T*n)
	for t := range T {
		for i := range n {
			if int64(t) < il[i] {
				within[t*n+i] = 1
			}
		}
	}
	e := logProbs.Exp()
	q := e.Sub(e.Detach()).Mul(ember.FromSlice(within, ember.Shape{T, n, 1}, on).Cast(dt)).Sum(ember.Dims(0, 2))
	loss := nll.Add(q)
	if l.ZeroInfinity {
		loss = ember.WhereScalar(nll.IsInf(), 0, loss)
	}
	switch l.Reduction {
	case None:
		if unbatched {
			return loss.Reshape()
		}
		return loss
	case Sum:
		return loss.Sum()
	}
	div := make([]float64, n)
	for i := range n {
		div[i] = float64(max(tl[i], 1))
	}
	return loss.Div(ember.FromSlice(div, ember.Shape{n}, on).Cast(dt)).Mean()
}
