package optim

import (
	"iter"
	"math"
	"slices"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
)

//go:generate go run github.com/emberml/ember/internal/nilguard/gen

// AveragedModel is torch.optim.swa_utils.AveragedModel, the running
// average of a model's parameters for stochastic weight averaging (or an
// exponential moving average with an AvgFn of one's own). It is a module:
// Module, a deep copy of the model made by NewAveragedModel, is its child
// "module", and NAveraged (int64, the number of UpdateParameters calls)
// its buffer "n_averaged", so its StateDict has torch's keys
// ("module.weight", ..., "n_averaged"). Forward runs Module.
type AveragedModel struct {
	nn.Base
	Module    nn.Module
	NAveraged *ember.Tensor
	// UseBuffers averages the buffers too (torch's use_buffers=True);
	// otherwise only the parameters are averaged.
	UseBuffers bool
	avg        AvgFn
}

// AvgFn averages one tensor: from averaged (the average so far, of n
// models) and model (the new model's), the new average. It must not
// change either.
type AvgFn func(averaged, model *ember.Tensor, n int64) *ember.Tensor

// NewAveragedModel returns an AveragedModel of a deep copy of m (see
// nn.DeepCopy); avg nil is torch's running average, averaged +
// (model-averaged)/(n+1).
//
//	ema := optim.NewAveragedModel(model, func(a, m *ember.Tensor, _ int64) *ember.Tensor {
//		return a.MulScalar(0.999).Add(m.MulScalar(0.001))
//	})
func NewAveragedModel(m nn.Module, avg AvgFn) *AveragedModel {
	hyperErr("optim.NewAveragedModel", m != nil, "nil model")
	if avg == nil {
		avg = func(a, m *ember.Tensor, n int64) *ember.Tensor { return a.Add(m.Sub(a).DivScalar(float64(n + 1))) }
	}
	a := &AveragedModel{Module: nn.DeepCopy(m), avg: avg}
	dev := ember.CPU
	if ps := a.Module.Parameters(); len(ps) > 0 {
		dev = ps[0].Device()
	}
	a.NAveraged = ember.Zeros(ember.Shape{}, ember.Dtype(ember.Int64)).To(dev)
	a.Init(a)
	a.RegisterModule("module", a.Module)
	a.RegisterBuffer("n_averaged", &a.NAveraged)
	return a
}

// Forward runs the averaged module.
func (a *AveragedModel) Forward(x *ember.Tensor) *ember.Tensor {
	nn.CheckNil(a, "Forward")
	return a.made("Forward").Module.Forward(x)
}

// made refuses a zero AveragedModel, one not made by NewAveragedModel.
func (a *AveragedModel) made(op string) *AveragedModel {
	hyperErr("optim.AveragedModel."+op, a.Module != nil && a.NAveraged != nil && a.avg != nil, "called on a zero *optim.AveragedModel (make it with NewAveragedModel)")
	return a
}

func (a *AveragedModel) tensors(m nn.Module) []*ember.Tensor {
	ts := m.Parameters()
	if a.UseBuffers {
		ts = append(ts, m.Buffers()...)
	}
	return ts
}

// UpdateParameters folds m's parameters (and buffers with UseBuffers) into
// the average, as torch's update_parameters: the first call copies them.
// m must have the averaged module's parameters, in order and shapes.
func (a *AveragedModel) UpdateParameters(m nn.Module) {
	nn.CheckNil(a, "UpdateParameters")
	const op = "optim.AveragedModel.UpdateParameters"
	a.made("UpdateParameters")
	hyperErr(op, m != nil, "nil model")
	mine, theirs := a.tensors(a.Module), a.tensors(m)
	hyperErr(op, len(mine) == len(theirs), "the model has %d parameters, the averaged model %d", len(theirs), len(mine))
	for i, p := range mine {
		hyperErr(op, theirs[i] != nil && p != nil && p.Shape().Equal(theirs[i].Shape()), "parameter %d has shape %v, the averaged one %v", i, shapeOf(theirs[i]), shapeOf(p))
	}
	n := int64(a.NAveraged.Item())
	for i, p := range mine {
		pm := theirs[i].Detach().To(p.Device())
		if n == 0 {
			p.Detach().CopyFrom(pm)
		} else {
			var next *ember.Tensor
			ember.NoGrad(func() { next = a.avg(p.Detach(), pm, n) })
			hyperErr(op, next != nil && next.Shape().Equal(p.Shape()), "the AvgFn returned shape %v for a parameter of shape %v", shapeOf(next), p.Shape())
			p.Detach().CopyFrom(next.Detach())
		}
	}
	a.NAveraged.AddScalarInPlace(1)
}

func shapeOf(t *ember.Tensor) any {
	if t == nil {
		return "nil"
	}
	return t.Shape()
}

// batchNorms lists m's BatchNorm modules with running statistics, m's
// own included, depth first, each once (as torch's modules()) however
// often it is registered.
func batchNorms(m nn.Module) []*nn.BatchNorm {
	var out []*nn.BatchNorm
	seen := map[*nn.BatchNorm]bool{}
	var walk func(m nn.Module)
	walk = func(m nn.Module) {
		if bn, ok := m.(*nn.BatchNorm); ok && bn != nil && bn.RunningMean != nil && bn.RunningVar != nil && !seen[bn] {
			seen[bn] = true
			out = append(out, bn)
		}
		_, kids := m.Registry().Children()
		for _, k := range kids {
			if k != nil {
				walk(k)
			}
		}
	}
	walk(m)
	return out
}

// UpdateBN is torch.optim.swa_utils.update_bn: it re-estimates the
// running statistics of every BatchNorm of model over inputs (each a
// batch of inputs to model.Forward), as their plain average
// (momentum=None) from a running mean of 0 and variance of 1, without
// recording a graph; the model is in training mode meanwhile and left in
// the mode it was in, the BatchNorms' momenta restored. A model without
// BatchNorms is left alone.
func UpdateBN(inputs iter.Seq[*ember.Tensor], model nn.Module) {
	const op = "optim.UpdateBN"
	hyperErr(op, model != nil, "nil model")
	hyperErr(op, inputs != nil, "nil inputs")
	bns := batchNorms(model)
	if len(bns) == 0 {
		return
	}
	cumulative := make([]bool, len(bns))
	for i, bn := range bns {
		hyperErr(op, bn.NumBatchesTracked != nil, "BatchNorm %d has no NumBatchesTracked buffer, which the average needs", i)
		bn.RunningMean.Detach().FillInPlace(0)
		bn.RunningVar.Detach().FillInPlace(1)
		bn.NumBatchesTracked.Detach().FillInPlace(0)
		cumulative[i] = bn.CumulativeAverage
		bn.CumulativeAverage = true
	}
	was := model.Training()
	defer func() {
		for i, bn := range bns {
			bn.CumulativeAverage = cumulative[i]
		}
		model.Train(was)
	}()
	model.Train(true)
	for x := range inputs {
		hyperErr(op, x != nil, "nil input batch")
		ember.NoGrad(func() { model.Forward(x) })
	}
}

// UpdateBNBatches is UpdateBN over a slice of input batches.
func UpdateBNBatches(batches []*ember.Tensor, model nn.Module) {
	UpdateBN(slices.Values(batches), model)
}

// UpdateBNLoader is UpdateBN over the inputs of one epoch of a
// DataLoader (the batches' Input; torch's loader of (input, target)
// pairs), moved to dev.
func UpdateBNLoader(l *data.DataLoader, epoch int, model nn.Module, dev ember.Device) {
	hyperErr("optim.UpdateBN", l != nil, "nil loader")
	UpdateBN(func(yield func(*ember.Tensor) bool) {
		for b := range l.Epoch(epoch) {
			if !yield(b.Input.To(dev)) {
				return
			}
		}
	}, model)
}

// SWALR is torch.optim.swa_utils.SWALR for every parameter group: it
// anneals each group's rate from the one it has when SWALR is made to
// swaLR over annealEpochs steps ("cos" or "linear") and keeps it there.
// It sets the first step's rate at once.
func SWALR(opt Optimizer, swaLR float64, annealEpochs int, strategy string) Scheduler {
	schedOf("optim.SWALR", opt)
	return SWALRGroups(opt, slices.Repeat([]float64{swaLR}, groupCount(opt)), annealEpochs, strategy)
}

// SWALRGroups is SWALR with one rate per parameter group (torch's list).
func SWALRGroups(opt Optimizer, swaLRs []float64, annealEpochs int, strategy string) Scheduler {
	const op = "optim.SWALR"
	schedOf(op, opt)
	n := groupCount(opt)
	hyperErr(op, len(swaLRs) == n, "swa_lr must have the same length as optimizer.param_groups: swa_lr has %d, optimizer.param_groups has %d", len(swaLRs), n)
	var anneal func(t float64) float64
	switch strategy {
	case "cos":
		anneal = func(t float64) float64 { return (1 - math.Cos(math.Pi*t)) / 2 }
	case "linear":
		anneal = func(t float64) float64 { return t }
	default:
		hyperErr(op, false, "anneal_strategy must by one of 'cos' or 'linear', instead got %s", strategy)
	}
	hyperErr(op, annealEpochs >= 0, "anneal_epochs must be equal or greater than 0, got %d", annealEpochs)
	initialLRs(opt)
	swa := slices.Clone(swaLRs)
	start := make([]float64, n)
	for g := range n {
		start[g] = groupLR(opt, g)
	}
	s := &sched{op: op, opt: opt, n: n, lrAt: func(t, g int) float64 {
		// torch's recursive form, closed: the rate it anneals from is the
		// one SWALR found
		if annealEpochs == 0 {
			t = max(1, t)
		}
		a := anneal(math.Max(0, math.Min(1, float64(t)/float64(max(1, annealEpochs)))))
		return swa[g]*a + start[g]*(1-a)
	}}
	s.set(0)
	return s
}
