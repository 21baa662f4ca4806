package optim

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/emberml/ember"
)

// Scheduler sets an optimizer's learning rate step by step: the rate of
// each parameter group the optimizer had when the schedule was made, from
// the group's own initial rate (torch's base_lrs); a group added later
// keeps the rate it is given.
type Scheduler interface {
	// Step advances one step (an epoch for StepLR and CosineAnnealingLR, a
	// batch for OneCycleLR) and sets the optimizer's learning rates.
	Step()
	// LR is the current learning rate (the first group's).
	LR() float64
	// StepCount is the number of Step calls so far; SetStepCount restores it
	// (for resuming) and sets the learning rate to match.
	StepCount() int
	SetStepCount(n int)
}

type sched struct {
	op    string // "optim.StepLR", ... for errors
	opt   Optimizer
	t     int
	total int // the last step count allowed (OneCycleLR's total_steps); 0: none
	n     int // the number of groups it drives
	// lrAt is group g's rate at step count t
	lrAt func(t, g int) float64
	// also, if set, sets what else the schedule drives at step count t
	// (OneCycleLRMomentum's momentum)
	also func(t int)
	// mult: the rate is the initial rate times a factor of t (which
	// ChainedScheduler composes)
	mult bool
}

// set sets the optimizer's rates (and whatever else) for step count t.
func (s *sched) set(t int) {
	for g := range s.n {
		setGroupLR(s.opt, g, s.lrAt(t, g))
	}
	if s.also != nil {
		s.also(t)
	}
}

// check panics with PyTorch's ValueError unless t is a step count the
// schedule has a rate for.
func (s *sched) check(t int) {
	if t < 0 {
		panic(&ember.ValueError{Op: s.op, Msg: fmt.Sprintf("step count %d is negative", t)})
	}
	if s.total > 0 && t > s.total {
		// torch counts the step its constructor takes, hence t+1
		panic(&ember.ValueError{Op: s.op, Msg: fmt.Sprintf("Tried to step %d times. The specified number of total steps is %d", t+1, s.total)})
	}
}

// Step advances the count and sets the optimizer's rate; past
// OneCycleLR's total steps it panics with an *ember.ValueError and
// changes nothing.
func (s *sched) Step() {
	s.check(s.t + 1)
	s.t++
	s.set(s.t)
}
func (s *sched) LR() float64    { return s.lrAt(s.t, 0) }
func (s *sched) StepCount() int { return s.t }

// SetStepCount panics with an *ember.ValueError for a negative n, or one
// past OneCycleLR's total steps.
func (s *sched) SetStepCount(n int) {
	s.check(n)
	s.t = n
	s.set(n)
}

// StepLR multiplies the learning rate by gamma every stepSize steps.
func StepLR(opt Optimizer, stepSize int, gamma float64) Scheduler {
	schedOf("optim.StepLR", opt)
	hyperErr("optim.StepLR", stepSize >= 1, "step_size %d < 1", stepSize)
	s := newSched("optim.StepLR", opt, func(t int, base float64) float64 { return base * math.Pow(gamma, float64(t/stepSize)) })
	s.mult = true
	return s
}

// CosineAnnealingLR follows etaMin + (base-etaMin)·(1+cos(π·t/tMax))/2.
func CosineAnnealingLR(opt Optimizer, tMax int, etaMin float64) Scheduler {
	schedOf("optim.CosineAnnealingLR", opt)
	hyperErr("optim.CosineAnnealingLR", tMax >= 1, "T_max %d < 1", tMax)
	return newSched("optim.CosineAnnealingLR", opt, func(t int, base float64) float64 {
		return etaMin + (base-etaMin)*(1+math.Cos(math.Pi*float64(t)/float64(tMax)))/2
	})
}

// OneCycleLR is torch.optim.lr_scheduler.OneCycleLR with cosine annealing,
// two phases and cycle_momentum=False (OneCycleLRMomentum is PyTorch's
// default, cycle_momentum=True): from maxLR/divFactor up to maxLR over
// pctStart of totalSteps, then down to maxLR/divFactor/finalDivFactor. It
// sets the optimizer's rate at once (PyTorch's defaults: pctStart 0.3,
// divFactor 25, finalDivFactor 1e4). As in PyTorch, it takes totalSteps
// Step calls; one more panics with an *ember.ValueError ("Tried to step 3
// times. The specified number of total steps is 2", counting the step
// PyTorch's constructor takes).
func OneCycleLR(opt Optimizer, maxLR float64, totalSteps int, pctStart, divFactor, finalDivFactor float64) Scheduler {
	s := oneCycle("optim.OneCycleLR", opt, maxLR, totalSteps, pctStart, divFactor, finalDivFactor)
	s.set(0)
	return s.sched
}

// OneCycleLRMomentum is OneCycleLR with cycle_momentum=True, PyTorch's
// default: the momentum (SGD's and RMSprop's Momentum; Adam's, Adamax's,
// NAdam's and RAdam's Beta1) moves the other way, from maxMomentum down to baseMomentum while the rate
// rises and back up while it falls (PyTorch's defaults 0.85 and 0.95). An
// optimizer without momentum (Adagrad, Adadelta, Rprop, ASGD, or another
// package's) panics with
// an *ember.ValueError. As in PyTorch, an SGD made without momentum gets
// one.
func OneCycleLRMomentum(opt Optimizer, maxLR float64, totalSteps int, pctStart, divFactor, finalDivFactor, baseMomentum, maxMomentum float64) Scheduler {
	const op = "optim.OneCycleLRMomentum"
	s := oneCycle(op, opt, maxLR, totalSteps, pctStart, divFactor, finalDivFactor)
	var m *float64
	var b *base
	name := "momentum"
	switch o := opt.(type) {
	case *SGD:
		m, b = &o.Momentum, &o.base
	case *Adam:
		m, b, name = &o.Beta1, &o.base, "beta1"
	case *RMSprop:
		m, b = &o.Momentum, &o.base
	case *Adamax:
		m, b, name = &o.Beta1, &o.base, "beta1"
	case *NAdam:
		m, b, name = &o.Beta1, &o.base, "beta1"
	case *RAdam:
		m, b, name = &o.Beta1, &o.base, "beta1"
	}
	hyperErr(op, m != nil, "optimizer must support momentum with `cycle_momentum` option enabled (got %T)", opt)
	hyperErr(op, baseMomentum >= 0 && maxMomentum >= 0 && maxMomentum < 1 && baseMomentum < 1, "momenta %v and %v must be in [0, 1)", baseMomentum, maxMomentum)
	// every group gets the same momentum, as torch's with one base and
	// max momentum: the default (the field), which no group overrides
	groups := b.paramGroups()
	s.also = func(t int) {
		*m = s.phase(t, maxMomentum, baseMomentum, maxMomentum)
		for _, g := range groups {
			delete(g.own, name)
		}
	}
	s.set(0)
	return s.sched
}

// oneCycleSched is a OneCycleLR schedule: phase(t, a, b, c) anneals from
// a to b over the warm-up and from b to c after it.
type oneCycleSched struct {
	*sched
	phase func(t int, a, b, c float64) float64
}

func oneCycle(op string, opt Optimizer, maxLR float64, totalSteps int, pctStart, divFactor, finalDivFactor float64) oneCycleSched {
	schedOf(op, opt)
	hyperErr(op, totalSteps > 0, "Expected positive integer total_steps, but got %d", totalSteps)
	hyperErr(op, pctStart >= 0 && pctStart <= 1, "Expected float between 0 and 1 pct_start, but got %v", pctStart)
	hyperErr(op, divFactor > 0 && finalDivFactor > 0, "div_factor %v and final_div_factor %v must be positive", divFactor, finalDivFactor)
	initial := maxLR / divFactor
	minLR := initial / finalDivFactor
	// torch's OneCycleLR sets every group's initial_lr to max_lr/div_factor
	if b, ok := opt.(interface{ paramGroups() []*ParamGroup }); ok {
		for _, g := range b.paramGroups() {
			g.initialLR = initial
		}
	}
	up := pctStart*float64(totalSteps) - 1
	end := float64(totalSteps - 1)
	cos := func(start, stop, pct float64) float64 { return stop + (start-stop)/2*(1+math.Cos(math.Pi*pct)) }
	phase := func(t int, a, b, c float64) float64 {
		x := float64(t)
		if up > 0 && x <= up { // (pct_start·total_steps ≤ 1: no warm-up steps)
			return cos(a, b, x/up)
		}
		return cos(b, c, (x-up)/(end-up))
	}
	return oneCycleSched{&sched{op: op, opt: opt, total: totalSteps, n: groupCount(opt), lrAt: func(t, _ int) float64 {
		return phase(t, initial, maxLR, minLR)
	}}, phase}
}

// initialLRs are the rates a schedule starts from, one per parameter
// group, torch's group "initial_lr": the first schedule made for an
// optimizer of this package records each group's rate then, and the
// optimizer's StateDict carries them, so a schedule made after
// LoadStateDict (to resume with SetStepCount) starts from the original
// rates, not from the decayed ones loaded. For another Optimizer it is
// its current rate, as one group.
func initialLRs(opt Optimizer) []float64 {
	if b, ok := opt.(interface{ initials() []float64 }); ok {
		return b.initials()
	}
	return []float64{opt.LR()}
}

// groupCount is the number of opt's parameter groups.
func groupCount(opt Optimizer) int {
	if b, ok := opt.(interface{ paramGroups() []*ParamGroup }); ok {
		return len(b.paramGroups())
	}
	return 1
}

// groupLR and setGroupLR read and set group g's rate (an Optimizer of
// another package has one, LR).
func groupLR(opt Optimizer, g int) float64 {
	if b, ok := opt.(interface{ paramGroups() []*ParamGroup }); ok {
		return b.paramGroups()[g].lr
	}
	return opt.LR()
}

func setGroupLR(opt Optimizer, g int, lr float64) {
	if b, ok := opt.(interface{ paramGroups() []*ParamGroup }); ok {
		b.paramGroups()[g].lr = lr
		return
	}
	opt.SetLR(lr)
}

// newSched is a schedule of every group of opt, f giving the rate at step
// count t from the group's initial rate base.
func newSched(op string, opt Optimizer, f func(t int, base float64) float64) *sched {
	bases := initialLRs(opt)
	return &sched{op: op, opt: opt, n: len(bases), lrAt: func(t, g int) float64 { return f(t, bases[g]) }}
}

// schedOf refuses a nil optimizer, a nil *Adam in one, or a zero one (a scheduler
// reads its rate at once).
func schedOf(op string, opt Optimizer) {
	hyperErr(op, opt != nil && !(reflect.ValueOf(opt).Kind() == reflect.Pointer && reflect.ValueOf(opt).IsNil()), "nil optimizer")
	hyperErr(op, groupCount(opt) > 0, "%T optimizer was never constructed (it has no parameter groups)", opt)
}

// MultiStepLR multiplies the learning rate by gamma at each milestone step
// count, as torch.optim.lr_scheduler.MultiStepLR: the rate after t steps
// is base·gamma^k with k the number of milestones ≤ t (a milestone given
// twice counts twice, as torch's Counter).
func MultiStepLR(opt Optimizer, milestones []int, gamma float64) Scheduler {
	const op = "optim.MultiStepLR"
	schedOf(op, opt)
	ms := slices.Clone(milestones)
	slices.Sort(ms)
	s := newSched(op, opt, func(t int, base float64) float64 {
		k, _ := slices.BinarySearch(ms, t+1) // bisect_right(ms, t)
		return base * math.Pow(gamma, float64(k))
	})
	s.mult = true
	return s
}

// ExponentialLR multiplies the learning rate by gamma every step, as
// torch.optim.lr_scheduler.ExponentialLR.
func ExponentialLR(opt Optimizer, gamma float64) Scheduler {
	const op = "optim.ExponentialLR"
	schedOf(op, opt)
	s := newSched(op, opt, func(t int, base float64) float64 { return base * math.Pow(gamma, float64(t)) })
	s.mult = true
	return s
}

// LinearLR scales the learning rate by a factor going linearly from
// startFactor to endFactor over totalIters steps and staying there, as
// torch.optim.lr_scheduler.LinearLR (PyTorch's defaults: 1/3, 1, 5), the
// usual warm-up. It sets the optimizer's rate (base·startFactor) at once.
func LinearLR(opt Optimizer, startFactor, endFactor float64, totalIters int) Scheduler {
	const op = "optim.LinearLR"
	schedOf(op, opt)
	hyperErr(op, startFactor > 0 && startFactor <= 1, "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
	hyperErr(op, endFactor >= 0 && endFactor <= 1, "Ending multiplicative factor expected to be between 0 and 1.")
	hyperErr(op, totalIters >= 0, "total_iters %d < 0", totalIters)
	s := newSched(op, opt, func(t int, base float64) float64 {
		if totalIters == 0 { // torch's recursive form never leaves the start
			return base * startFactor
		}
		if t >= totalIters {
			return base * endFactor
		}
		return base * (startFactor + (endFactor-startFactor)*float64(t)/float64(totalIters))
	})
	s.mult = true
	s.set(0)
	return s
}

// LambdaLR sets the learning rate to base·f(t) after t steps, as
// torch.optim.lr_scheduler.LambdaLR; it sets base·f(0) at once. f must not
// be nil.
func LambdaLR(opt Optimizer, f func(step int) float64) Scheduler {
	const op = "optim.LambdaLR"
	schedOf(op, opt)
	hyperErr(op, f != nil, "nil lr_lambda")
	// not mult: torch's LambdaLR sets base·f(t) whatever the rate is, so
	// a ChainedScheduler with it is not the product of the factors
	s := newSched(op, opt, func(t int, base float64) float64 { return base * f(t) })
	s.set(0)
	return s
}

// LambdaLRGroups is LambdaLR with one function per parameter group (torch's
// list of lr_lambda): group g's rate is its base·fs[g](t). There must be
// one per group, none nil.
func LambdaLRGroups(opt Optimizer, fs []func(step int) float64) Scheduler {
	const op = "optim.LambdaLR"
	schedOf(op, opt)
	// checked before the groups' initial_lr is recorded, as torch's
	n := groupCount(opt)
	hyperErr(op, len(fs) == n, "Expected %d lr_lambdas, but got %d", n, len(fs))
	for _, f := range fs {
		hyperErr(op, f != nil, "nil lr_lambda")
	}
	fs = slices.Clone(fs)
	bases := initialLRs(opt)
	s := &sched{op: op, opt: opt, n: len(bases), lrAt: func(t, g int) float64 { return bases[g] * fs[g](t) }}
	s.set(0)
	return s
}

// CosineAnnealingWarmRestarts is torch.optim.lr_scheduler's SGDR schedule:
// etaMin + (base-etaMin)·(1+cos(π·Tcur/Ti))/2, where Tcur counts the steps
// since the last restart and the period Ti starts at t0 and is multiplied
// by tMult (an integer ≥ 1) at each restart.
func CosineAnnealingWarmRestarts(opt Optimizer, t0, tMult int, etaMin float64) Scheduler {
	const op = "optim.CosineAnnealingWarmRestarts"
	schedOf(op, opt)
	hyperErr(op, t0 > 0, "Expected positive integer T_0, but got %d", t0)
	hyperErr(op, tMult >= 1, "Expected integer T_mult >= 1, but got %d", tMult)
	return newSched(op, opt, func(t int, base float64) float64 {
		cur, ti := t, t0
		if tMult == 1 {
			cur %= t0
		} else {
			for cur >= ti {
				cur -= ti
				ti *= tMult
			}
		}
		return etaMin + (base-etaMin)*(1+math.Cos(math.Pi*float64(cur)/float64(ti)))/2
	})
}

// Plateau is torch.optim.lr_scheduler.ReduceLROnPlateau: Step(metric)
// multiplies each parameter group's learning rate by Factor (not below MinLR) once the metric
// has not improved for more than Patience steps, then waits Cooldown steps
// before counting again. In Mode "min" an improvement is a metric below
// best·(1-Threshold) (ThresholdMode "rel") or best-Threshold ("abs"); in
// "max" above best·(1+Threshold) or best+Threshold. A change smaller than
// Eps is not made. The fields may be changed between steps.
type Plateau struct {
	opt                     Optimizer
	Mode, ThresholdMode     string
	Factor, Threshold       float64
	MinLR, Eps              float64
	Patience, Cooldown      int
	best                    float64
	numBad, cooldownCounter int
	steps                   int
}

// ReduceLROnPlateau returns a Plateau with mode ("min" or "max"), factor
// (< 1) and patience, and PyTorch's other defaults: threshold 1e-4 in
// "rel" mode, cooldown 0, min_lr 0 and eps 1e-8.
func ReduceLROnPlateau(opt Optimizer, mode string, factor float64, patience int) *Plateau {
	const op = "optim.ReduceLROnPlateau"
	schedOf(op, opt)
	hyperErr(op, factor < 1, "Factor should be < 1.0.")
	p := &Plateau{opt: opt, Mode: mode, ThresholdMode: "rel", Factor: factor, Threshold: 1e-4, Eps: 1e-8, Patience: patience}
	p.check()
	p.best = p.worst()
	return p
}

func (p *Plateau) check() {
	const op = "optim.ReduceLROnPlateau"
	hyperErr(op, p.Mode == "min" || p.Mode == "max", "mode %s is unknown!", p.Mode)
	hyperErr(op, p.ThresholdMode == "rel" || p.ThresholdMode == "abs", "threshold mode %s is unknown!", p.ThresholdMode)
}

func (p *Plateau) worst() float64 {
	if p.Mode == "min" {
		return math.Inf(1)
	}
	return math.Inf(-1)
}

func (p *Plateau) better(a float64) bool {
	switch {
	case p.Mode == "min" && p.ThresholdMode == "rel":
		return a < p.best*(1-p.Threshold)
	case p.Mode == "min":
		return a < p.best-p.Threshold
	case p.ThresholdMode == "rel":
		return a > p.best*(1+p.Threshold)
	default:
		return a > p.best+p.Threshold
	}
}

// Step records one metric value (a NaN one never improves) and reduces
// the learning rate when it has plateaued.
func (p *Plateau) Step(metric float64) {
	if p == nil {
		nilOptimizer("Plateau", "Step")
	}
	p.check()
	p.steps++
	if p.better(metric) {
		p.best, p.numBad = metric, 0
	} else {
		p.numBad++
	}
	if p.cooldownCounter > 0 {
		p.cooldownCounter--
		p.numBad = 0
	}
	if p.numBad > p.Patience {
		// each group's rate, as torch's _reduce_lr
		for g := range groupCount(p.opt) {
			old := groupLR(p.opt, g)
			if lr := math.Max(old*p.Factor, p.MinLR); old-lr > p.Eps {
				setGroupLR(p.opt, g, lr)
			}
		}
		p.cooldownCounter, p.numBad = p.Cooldown, 0
	}
}

// LR is the optimizer's current learning rate.
func (p *Plateau) LR() float64 {
	if p == nil {
		nilOptimizer("Plateau", "LR")
	}
	return p.opt.LR()
}

// StepCount is the number of Step calls so far.
func (p *Plateau) StepCount() int {
	if p == nil {
		nilOptimizer("Plateau", "StepCount")
	}
	return p.steps
}

// StateDict is the plateau's progress under torch's state_dict keys:
// best, num_bad_epochs, cooldown_counter and last_epoch (the Step count),
// for resuming with LoadStateDict. The settings are the fields.
func (p *Plateau) StateDict() map[string]float64 {
	if p == nil {
		nilOptimizer("Plateau", "StateDict")
	}
	return map[string]float64{"best": p.best, "num_bad_epochs": float64(p.numBad),
		"cooldown_counter": float64(p.cooldownCounter), "last_epoch": float64(p.steps)}
}

// LoadStateDict restores a StateDict; counts that are not whole numbers
// in [0, 2³¹) are refused.
func (p *Plateau) LoadStateDict(sd map[string]float64) error {
	if p == nil {
		nilOptimizer("Plateau", "LoadStateDict")
	}
	var n [3]int
	for i, k := range []string{"num_bad_epochs", "cooldown_counter", "last_epoch"} {
		v, ok := sd[k]
		if !ok {
			return fmt.Errorf("optim: ReduceLROnPlateau state has no %q", k)
		}
		if !(v >= 0 && v < 1<<31 && v == math.Trunc(v)) {
			return fmt.Errorf("optim: ReduceLROnPlateau state: %s is %v, want a count", k, v)
		}
		n[i] = int(v)
	}
	best, ok := sd["best"]
	if !ok || math.IsNaN(best) {
		return fmt.Errorf("optim: ReduceLROnPlateau state: no best value, or NaN")
	}
	p.best, p.numBad, p.cooldownCounter, p.steps = best, n[0], n[1], n[2]
	return nil
}

// SequentialLR runs schedulers one after another, as
// torch.optim.lr_scheduler.SequentialLR: schedulers[i] from step
// milestones[i-1] on, restarted at its step 0 there. The schedulers must
// be this package's, made for opt (made in a row, they all start from
// opt's first rate), and there must be one more of them than milestones,
// which must not decrease. It sets the first scheduler's rate at once.
func SequentialLR(opt Optimizer, schedulers []Scheduler, milestones []int) Scheduler {
	const op = "optim.SequentialLR"
	schedOf(op, opt)
	hyperErr(op, len(schedulers) >= 1 && len(milestones) == len(schedulers)-1,
		"Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone points, but got number of schedulers %d and the number of milestones to be equal to %d", len(schedulers), len(milestones))
	subs := make([]*sched, len(schedulers))
	for i, sc := range schedulers {
		ss, ok := sc.(*sched)
		hyperErr(op, ok && ss != nil, "scheduler %d is %T, not one of package optim's schedules", i, sc)
		hyperErr(op, ss.opt == opt, "Sequential Schedulers expects all schedulers to belong to the same optimizer, but got schedulers at index %d to be different than the optimizer passed in.", i)
		subs[i] = ss
		hyperErr(op, ss.n == subs[0].n, "scheduler %d drives %d parameter groups, scheduler 0 %d (a group was added between them)", i, ss.n, subs[0].n)
	}
	ms := slices.Clone(milestones)
	for i, m := range ms {
		hyperErr(op, m >= 0 && (i == 0 || m >= ms[i-1]), "milestones %v must be non-negative and not decreasing", milestones)
		start := 0
		if i > 0 {
			start = ms[i-1]
		}
		// a OneCycleLR cut by a milestone must not run out before it
		hyperErr(op, subs[i].total == 0 || m-start <= subs[i].total, "scheduler %d (%s) takes %d steps, less than the %d before milestone %d", i, subs[i].op, subs[i].total, m-start, m)
	}
	s := &sched{op: op, opt: opt, n: subs[0].n, lrAt: func(t, g int) float64 {
		i, _ := slices.BinarySearch(ms, t+1) // bisect_right(ms, t)
		start := 0
		if i > 0 {
			start = ms[i-1]
		}
		return subs[i].lrAt(t-start, g)
	}}
	s.also = func(t int) {
		i, _ := slices.BinarySearch(ms, t+1)
		start := 0
		if i > 0 {
			start = ms[i-1]
		}
		if subs[i].also != nil {
			subs[i].also(t - start)
		}
	}
	if last := subs[len(subs)-1]; last.total > 0 {
		s.total = last.total
		if len(ms) > 0 {
			s.total += ms[len(ms)-1]
		}
	}
	s.set(0)
	return s
}
