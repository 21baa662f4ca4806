package optim

import (
	"encoding/json"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// TestSchedulesMoreMatchTorch: ConstantLR (also with total_iters 0), PolynomialLR, MultiplicativeLR,
// CyclicLR (triangular with cycle_momentum, triangular2 with per-group
// rates and momenta, exp_range), ChainedScheduler and SWALR (cos, linear
// per group, 0 anneal epochs) over an SGD with two groups, each group's
// rate and momentum after the constructor and every step against PyTorch
// 1.13's, and the optimizer's state dict after them.
func TestSchedulesMoreMatchTorch(t *testing.T) {
	f := readMoreFixture(t)
	mks := map[string]func(o *SGD) Scheduler{
		"constant":   func(o *SGD) Scheduler { return ConstantLR(o, 0.25, 3) },
		"constant_0": func(o *SGD) Scheduler { return ConstantLR(o, 0.5, 0) },
		"polynomial": func(o *SGD) Scheduler { return PolynomialLR(o, 4, 2) },
		"multiplicative": func(o *SGD) Scheduler {
			return MultiplicativeLR(o, func(e int) float64 {
				if e%2 == 1 {
					return 0.9
				}
				return 0.5
			})
		},
		"cyclic": func(o *SGD) Scheduler {
			return CyclicLR(o, 0.01, 0.1, CyclicOptions{StepSizeUp: 3, StepSizeDown: 2, CycleMomentum: true})
		},
		"cyclic2": func(o *SGD) Scheduler {
			return CyclicLRGroups(o, []float64{0.01, 0.02}, []float64{0.1, 0.05}, CyclicOptions{StepSizeUp: 2, Mode: "triangular2",
				CycleMomentum: true, BaseMomentums: []float64{0.7, 0.6}, MaxMomentums: []float64{0.9, 0.95}})
		},
		"cyclic_exp": func(o *SGD) Scheduler {
			return CyclicLR(o, 0.01, 0.1, CyclicOptions{StepSizeUp: 2, Mode: "exp_range", Gamma: 0.9})
		},
		"chained": func(o *SGD) Scheduler {
			return ChainedScheduler([]Scheduler{ConstantLR(o, 0.5, 2), ExponentialLR(o, 0.9)})
		},
		"swalr_cos":    func(o *SGD) Scheduler { return SWALR(o, 0.05, 3, "cos") },
		"swalr_linear": func(o *SGD) Scheduler { return SWALRGroups(o, []float64{0.05, 0.2}, 4, "linear") },
		"swalr_0":      func(o *SGD) Scheduler { return SWALR(o, 0.05, 0, "cos") },
	}
	for name, mk := range mks {
		var want struct {
			LR, Momentum [][]float64
			StateDict    map[string]fixTensor `json:"state_dict"`
		}
		if err := json.Unmarshal(f.Sched[name], &want); err != nil || want.LR == nil {
			t.Fatalf("%s: no fixture (%v)", name, err)
		}
		opt := twoGroups()
		s := mk(opt)
		for i := range want.LR {
			if i > 0 {
				opt.Step()
				s.Step()
			}
			var lr, m []float64
			for _, g := range opt.ParamGroups() {
				lr, m = append(lr, g.LR()), append(m, g.Options().Momentum)
			}
			near(t, name+" lr at "+string(rune('0'+i)), lr, want.LR[i], 1e-9)
			near(t, name+" momentum at "+string(rune('0'+i)), m, want.Momentum[i], 1e-9)
		}
		compareStateDict(t, name, opt.StateDict(), want.StateDict, false)
		// SetStepCount goes back to a step's rates
		s.SetStepCount(1)
		near(t, name+" SetStepCount(1)", []float64{opt.ParamGroups()[0].LR(), opt.ParamGroups()[1].LR()}, want.LR[1], 1e-9)
	}
}

// TestMoreSchedulesRefuse: torch's ValueErrors (ConstantLR's factor,
// CyclicLR's mode and momentum, SWALR's strategy and anneal epochs, a
// chain over two optimizers), and ember's refusal to chain a schedule
// that is not a factor of the initial rate.
func TestMoreSchedulesRefuse(t *testing.T) {
	adam := AdamWith(Tensors(ember.Zeros(ember.Shape{1}, ember.WithGrad())))
	for name, c := range map[string]struct {
		f   func()
		msg string
	}{
		"constant factor": {func() { ConstantLR(twoGroups(), 1.5, 2) }, "Constant multiplicative factor expected to be between 0 and 1."},
		"cyclic mode":     {func() { CyclicLR(twoGroups(), 0.1, 1, CyclicOptions{Mode: "sine"}) }, "mode is invalid and scale_fn is None"},
		"cyclic adam":     {func() { CyclicLR(adam, 0.1, 1, CyclicOptions{CycleMomentum: true}) }, "optimizer must support momentum with `cycle_momentum` option enabled"},
		"cyclic lrs":      {func() { CyclicLRGroups(twoGroups(), []float64{1}, []float64{1, 2}, CyclicOptions{}) }, "expected 2 values for base_lr, got 1"},
		"swalr strategy":  {func() { SWALR(twoGroups(), 0.1, 2, "exp") }, "anneal_strategy must by one of 'cos' or 'linear', instead got exp"},
		"swalr epochs":    {func() { SWALR(twoGroups(), 0.1, -1, "cos") }, "anneal_epochs must be equal or greater than 0, got -1"},
		"swalr lrs": {func() { SWALRGroups(twoGroups(), []float64{0.1}, 2, "cos") },
			"swa_lr must have the same length as optimizer.param_groups: swa_lr has 1, optimizer.param_groups has 2"},
		"chain two": {func() { ChainedScheduler([]Scheduler{StepLR(twoGroups(), 1, 0.5), StepLR(twoGroups(), 1, 0.5)}) },
			"ChainedScheduler expects all schedulers to belong to the same optimizer, but got schedulers at index 0 and 1 to be different"},
		"chain onecycle": {func() { o := twoGroups(); ChainedScheduler([]Scheduler{OneCycleLR(o, 1, 10, 0.3, 25, 1e4)}) },
			"scheduler 0 (optim.OneCycleLR) does not scale the initial rate by a factor, which a chain composes"},
		// torch's LambdaLR is not chainable: it overwrites the rate with
		// base·f(t), so a chain with it is not the product of the factors
		"chain lambda": {func() {
			o := twoGroups()
			ChainedScheduler([]Scheduler{ExponentialLR(o, 0.5), LambdaLR(o, func(t int) float64 { return 1 + float64(t) })})
		},
			"scheduler 1 (optim.LambdaLR) does not scale the initial rate by a factor, which a chain composes"},
		"chain lambda groups": {func() {
			o := twoGroups()
			f := func(t int) float64 { return 1 }
			ChainedScheduler([]Scheduler{LambdaLRGroups(o, []func(int) float64{f, f}), StepLR(o, 1, 0.5)})
		}, "scheduler 0 (optim.LambdaLR) does not scale the initial rate by a factor, which a chain composes"},
		"multiplicative nil": {func() { MultiplicativeLR(twoGroups(), nil) }, "nil lr_lambda"},
		"multiplicative 1":   {func() { MultiplicativeLRGroups(twoGroups(), []func(int) float64{func(int) float64 { return 1 }}) }, "Expected 2 lr_lambdas, but got 1"},
	} {
		if e := testenv.Raises[*ember.ValueError](t, name, c.f); e.Msg != c.msg {
			t.Errorf("%s: %q, want %q", name, e.Msg, c.msg)
		}
	}
}
