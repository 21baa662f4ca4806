package optim

import (
	"math"
	"slices"
)

// ConstantLR multiplies the learning rate by factor until totalIters steps
// have run, then leaves it at its initial value, as
// torch.optim.lr_scheduler.ConstantLR (PyTorch's defaults: 1/3, 5). It
// sets the optimizer's rate (base·factor) at once; with totalIters ≤ 0
// the rate stays base·factor, as torch's.
func ConstantLR(opt Optimizer, factor float64, totalIters int) Scheduler {
	const op = "optim.ConstantLR"
	schedOf(op, opt)
	hyperErr(op, factor >= 0 && factor <= 1, "Constant multiplicative factor expected to be between 0 and 1.")
	s := newSched(op, opt, func(t int, base float64) float64 {
		// torch's recursive form leaves base·factor only at step
		// total_iters, never for a total_iters ≤ 0
		if totalIters > 0 && t >= totalIters {
			return base
		}
		return base * factor
	})
	s.mult = true
	s.set(0)
	return s
}

// PolynomialLR decays the learning rate as base·(1-t/totalIters)^power up
// to totalIters steps (0 from then on), as
// torch.optim.lr_scheduler.PolynomialLR (PyTorch's defaults: 5, 1). A
// totalIters ≤ 0 leaves the rate as it is, as torch's.
func PolynomialLR(opt Optimizer, totalIters int, power float64) Scheduler {
	const op = "optim.PolynomialLR"
	schedOf(op, opt)
	s := newSched(op, opt, func(t int, base float64) float64 {
		if totalIters <= 0 {
			return base
		}
		return base * math.Pow(1-float64(min(t, totalIters))/float64(totalIters), power)
	})
	s.mult = true
	return s
}

// MultiplicativeLR multiplies the learning rate by f(t) at step t (t ≥ 1),
// as torch.optim.lr_scheduler.MultiplicativeLR: after t steps the rate is
// base·f(1)·…·f(t). f is called once per step count and its values kept,
// so it should depend on t alone. f must not be nil.
func MultiplicativeLR(opt Optimizer, f func(step int) float64) Scheduler {
	const op = "optim.MultiplicativeLR"
	schedOf(op, opt)
	hyperErr(op, f != nil, "nil lr_lambda")
	fs := make([]func(int) float64, groupCount(opt))
	for i := range fs {
		fs[i] = f
	}
	return multiplicative(op, opt, fs)
}

// MultiplicativeLRGroups is MultiplicativeLR with one function per
// parameter group (torch's list of lr_lambda). There must be one per
// group, none nil.
func MultiplicativeLRGroups(opt Optimizer, fs []func(step int) float64) Scheduler {
	const op = "optim.MultiplicativeLR"
	schedOf(op, opt)
	n := groupCount(opt)
	hyperErr(op, len(fs) == n, "Expected %d lr_lambdas, but got %d", n, len(fs))
	for _, f := range fs {
		hyperErr(op, f != nil, "nil lr_lambda")
	}
	return multiplicative(op, opt, slices.Clone(fs))
}

func multiplicative(op string, opt Optimizer, fs []func(int) float64) *sched {
	bases := initialLRs(opt)
	// prod[g][t] is f(1)·…·f(t) of group g
	prod := make([][]float64, len(fs))
	for g := range prod {
		prod[g] = []float64{1}
	}
	s := &sched{op: op, opt: opt, n: len(bases), mult: true, lrAt: func(t, g int) float64 {
		for k := len(prod[g]); k <= t; k++ {
			prod[g] = append(prod[g], prod[g][k-1]*fs[g](k))
		}
		return bases[g] * prod[g][t]
	}}
	return s
}

// CyclicOptions are CyclicLR's settings; their zero values are PyTorch's
// defaults, except CycleMomentum (PyTorch's default True).
type CyclicOptions struct {
	// StepSizeUp and StepSizeDown are the steps of the rising and the
	// falling half of a cycle (default 2000, and StepSizeUp).
	StepSizeUp, StepSizeDown int
	// Mode is "triangular" (the default), "triangular2" (each cycle's
	// amplitude halved) or "exp_range" (the amplitude scaled by Gamma^t;
	// Gamma's default 1).
	Mode  string
	Gamma float64
	// CycleMomentum cycles the momentum (SGD's or RMSprop's) the other way,
	// from MaxMomentum down to BaseMomentum while the rate rises (defaults
	// 0.8 and 0.9 when both are 0); BaseMomentums and MaxMomentums, if
	// set, give one per parameter group.
	CycleMomentum             bool
	BaseMomentum, MaxMomentum float64
	BaseMomentums             []float64
	MaxMomentums              []float64
}

// CyclicLR is torch.optim.lr_scheduler.CyclicLR: the rate cycles between
// baseLR and maxLR (for every parameter group). It sets the optimizer's
// rate to baseLR (and, with CycleMomentum, its momentum to MaxMomentum)
// at once.
func CyclicLR(opt Optimizer, baseLR, maxLR float64, o CyclicOptions) Scheduler {
	n := groupCount(opt)
	bases, maxes := make([]float64, n), make([]float64, n)
	for i := range n {
		bases[i], maxes[i] = baseLR, maxLR
	}
	return cyclic(opt, bases, maxes, o)
}

// CyclicLRGroups is CyclicLR with one base and one maximal rate per
// parameter group (torch's lists).
func CyclicLRGroups(opt Optimizer, baseLRs, maxLRs []float64, o CyclicOptions) Scheduler {
	return cyclic(opt, slices.Clone(baseLRs), slices.Clone(maxLRs), o)
}

func cyclic(opt Optimizer, bases, maxes []float64, o CyclicOptions) Scheduler {
	const op = "optim.CyclicLR"
	schedOf(op, opt)
	n := groupCount(opt)
	hyperErr(op, len(bases) == n, "expected %d values for base_lr, got %d", n, len(bases))
	hyperErr(op, len(maxes) == n, "expected %d values for max_lr, got %d", n, len(maxes))
	if o.StepSizeUp == 0 {
		o.StepSizeUp = 2000
	}
	if o.StepSizeDown == 0 {
		o.StepSizeDown = o.StepSizeUp
	}
	hyperErr(op, o.StepSizeUp > 0 && o.StepSizeDown > 0, "step sizes %d and %d must be positive", o.StepSizeUp, o.StepSizeDown)
	if o.Mode == "" {
		o.Mode = "triangular"
	}
	hyperErr(op, o.Mode == "triangular" || o.Mode == "triangular2" || o.Mode == "exp_range", "mode is invalid and scale_fn is None")
	if o.Gamma == 0 {
		o.Gamma = 1
	}
	total := float64(o.StepSizeUp + o.StepSizeDown)
	ratio := float64(o.StepSizeUp) / total
	// scale is the height's factor at step count t, and its scale
	scale := func(t int) (float64, float64) {
		cycle := math.Floor(1 + float64(t)/total)
		x := 1 + float64(t)/total - cycle
		var f float64
		if x <= ratio {
			f = x / ratio
		} else {
			f = (x - 1) / (ratio - 1)
		}
		switch o.Mode {
		case "triangular2":
			return f, 1 / math.Pow(2, cycle-1)
		case "exp_range":
			return f, math.Pow(o.Gamma, float64(t))
		}
		return f, 1
	}
	var momenta *[2][]float64
	var groups []*ParamGroup
	if o.CycleMomentum {
		var b *base
		switch x := opt.(type) {
		case *SGD:
			b = &x.base
		case *RMSprop:
			b = &x.base
		}
		hyperErr(op, b != nil, "optimizer must support momentum with `cycle_momentum` option enabled")
		if o.BaseMomentum == 0 && o.MaxMomentum == 0 {
			o.BaseMomentum, o.MaxMomentum = 0.8, 0.9
		}
		lo, hi := o.BaseMomentums, o.MaxMomentums
		if lo == nil {
			lo = slices.Repeat([]float64{o.BaseMomentum}, n)
		}
		if hi == nil {
			hi = slices.Repeat([]float64{o.MaxMomentum}, n)
		}
		hyperErr(op, len(lo) == n, "expected %d values for base_momentum, got %d", n, len(lo))
		hyperErr(op, len(hi) == n, "expected %d values for max_momentum, got %d", n, len(hi))
		for i := range n {
			hyperErr(op, lo[i] >= 0 && hi[i] >= 0, "Invalid momentum value: %v, %v", lo[i], hi[i])
		}
		momenta = &[2][]float64{slices.Clone(lo), slices.Clone(hi)}
		groups = b.paramGroups()
	}
	// torch sets every group's rate to its base before recording initial_lr
	for g := range n {
		setGroupLR(opt, g, bases[g])
	}
	initialLRs(opt)
	s := &sched{op: op, opt: opt, n: n, lrAt: func(t, g int) float64 {
		f, sc := scale(t)
		return bases[g] + (maxes[g]-bases[g])*f*sc
	}}
	if momenta != nil {
		s.also = func(t int) {
			f, sc := scale(t)
			for g, gr := range groups {
				gr.own["momentum"] = momenta[1][g] - (momenta[1][g]-momenta[0][g])*f*sc
			}
		}
	}
	s.set(0)
	return s
}

// ChainedScheduler steps several schedulers of one optimizer together, as
// torch.optim.lr_scheduler.ChainedScheduler: each group's rate is its
// initial rate times every scheduler's factor. The schedulers must be
// this package's, made for one optimizer, of the kind whose rate is the
// initial rate times a factor (StepLR, MultiStepLR, ExponentialLR,
// LinearLR, ConstantLR, PolynomialLR, MultiplicativeLR; not LambdaLR,
// which torch's chain lets overwrite the others' factors); where they
// are, this is torch's chained result. The chain keeps its own step
// count; the schedulers' are not moved.
func ChainedScheduler(schedulers []Scheduler) Scheduler {
	const op = "optim.ChainedScheduler"
	hyperErr(op, len(schedulers) > 0, "ChainedScheduler expects at least one scheduler")
	subs := make([]*sched, len(schedulers))
	for i, sc := range schedulers {
		ss, ok := sc.(*sched)
		hyperErr(op, ok && ss != nil, "scheduler %d is %T, not one of package optim's schedules", i, sc)
		hyperErr(op, ss.mult, "scheduler %d (%s) does not scale the initial rate by a factor, which a chain composes", i, ss.op)
		subs[i] = ss
		hyperErr(op, ss.opt == subs[0].opt, "ChainedScheduler expects all schedulers to belong to the same optimizer, but got schedulers at index 0 and %d to be different", i)
		hyperErr(op, ss.n == subs[0].n, "scheduler %d drives %d parameter groups, scheduler 0 %d (a group was added between them)", i, ss.n, subs[0].n)
	}
	opt := subs[0].opt
	bases := initialLRs(opt)
	s := &sched{op: op, opt: opt, n: subs[0].n, mult: true, lrAt: func(t, g int) float64 {
		lr := bases[g]
		for _, sub := range subs {
			if bases[g] == 0 {
				return 0
			}
			lr *= sub.lrAt(t, g) / bases[g]
		}
		return lr
	}}
	s.set(0)
	return s
}
