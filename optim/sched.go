package optim

import (
	"fmt"
	"math"
	"reflect"

	"github.com/emberml/ember"
)

// Scheduler sets an optimizer's learning rate step by step.
type Scheduler interface {
	// Step advances one step (an epoch for StepLR and CosineAnnealingLR, a
	// batch for OneCycleLR) and sets the optimizer's learning rate.
	Step()
	// LR is the current learning rate.
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
	lrAt  func(t int) float64
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
	s.opt.SetLR(s.lrAt(s.t))
}
func (s *sched) LR() float64    { return s.lrAt(s.t) }
func (s *sched) StepCount() int { return s.t }

// SetStepCount panics with an *ember.ValueError for a negative n, or one
// past OneCycleLR's total steps.
func (s *sched) SetStepCount(n int) {
	s.check(n)
	s.t = n
	s.opt.SetLR(s.lrAt(n))
}

// StepLR multiplies the learning rate by gamma every stepSize steps.
func StepLR(opt Optimizer, stepSize int, gamma float64) Scheduler {
	schedOf("optim.StepLR", opt)
	hyperErr("optim.StepLR", stepSize >= 1, "step_size %d < 1", stepSize)
	base := opt.LR()
	return &sched{op: "optim.StepLR", opt: opt, lrAt: func(t int) float64 { return base * math.Pow(gamma, float64(t/stepSize)) }}
}

// CosineAnnealingLR follows etaMin + (base-etaMin)·(1+cos(π·t/tMax))/2.
func CosineAnnealingLR(opt Optimizer, tMax int, etaMin float64) Scheduler {
	schedOf("optim.CosineAnnealingLR", opt)
	hyperErr("optim.CosineAnnealingLR", tMax >= 1, "T_max %d < 1", tMax)
	base := opt.LR()
	return &sched{op: "optim.CosineAnnealingLR", opt: opt, lrAt: func(t int) float64 {
		return etaMin + (base-etaMin)*(1+math.Cos(math.Pi*float64(t)/float64(tMax)))/2
	}}
}

// OneCycleLR is torch.optim.lr_scheduler.OneCycleLR with cosine annealing,
// two phases and cycle_momentum=False: from maxLR/divFactor up to maxLR over
// pctStart of totalSteps, then down to maxLR/divFactor/finalDivFactor. It
// sets the optimizer's rate at once (PyTorch's defaults: pctStart 0.3,
// divFactor 25, finalDivFactor 1e4). As in PyTorch, it takes totalSteps
// Step calls; one more panics with an *ember.ValueError ("Tried to step 3
// times. The specified number of total steps is 2", counting the step
// PyTorch's constructor takes).
func OneCycleLR(opt Optimizer, maxLR float64, totalSteps int, pctStart, divFactor, finalDivFactor float64) Scheduler {
	const op = "optim.OneCycleLR"
	schedOf(op, opt)
	hyperErr(op, totalSteps > 0, "Expected positive integer total_steps, but got %d", totalSteps)
	hyperErr(op, pctStart >= 0 && pctStart <= 1, "Expected float between 0 and 1 pct_start, but got %v", pctStart)
	hyperErr(op, divFactor > 0 && finalDivFactor > 0, "div_factor %v and final_div_factor %v must be positive", divFactor, finalDivFactor)
	initial := maxLR / divFactor
	minLR := initial / finalDivFactor
	up := pctStart*float64(totalSteps) - 1
	end := float64(totalSteps - 1)
	cos := func(start, stop, pct float64) float64 { return stop + (start-stop)/2*(1+math.Cos(math.Pi*pct)) }
	s := &sched{op: op, opt: opt, total: totalSteps, lrAt: func(t int) float64 {
		x := float64(t)
		if up > 0 && x <= up { // (pct_start·total_steps ≤ 1: no warm-up steps)
			return cos(initial, maxLR, x/up)
		}
		return cos(maxLR, minLR, (x-up)/(end-up))
	}}
	opt.SetLR(s.lrAt(0))
	return s
}

// schedOf refuses a nil optimizer, or a nil *Adam in one (a scheduler
// reads its rate at once).
func schedOf(op string, opt Optimizer) {
	hyperErr(op, opt != nil && !(reflect.ValueOf(opt).Kind() == reflect.Pointer && reflect.ValueOf(opt).IsNil()), "nil optimizer")
}
