package optim

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// schedFixtures reads the "sched" part of testdata/nn/audit.json, written
// by testdata/gen_nn_audit_fixtures.py (PyTorch 1.13): each the optimizer's
// learning rate after the constructor and after every step, from 0.1.
func schedFixtures(t *testing.T) map[string][]float64 {
	t.Helper()
	b, err := os.ReadFile("../testdata/nn/audit.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Sched map[string][]float64 }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Sched
}

func sgd01() *SGD {
	return NewSGD([]Param{{"w", ember.Zeros(ember.Shape{1})}}, nil, 0.1, 0, 0, 0, false)
}

// TestMoreSchedulesMatchTorch checks MultiStepLR, ExponentialLR, LinearLR,
// LambdaLR, CosineAnnealingWarmRestarts and SequentialLR (none of which
// ember had; a schedule made after LinearLR starts from the first rate), and
// CosineAnnealingLR past T_max, against PyTorch's sequences, and that
// SetStepCount lands on the same rate.
func TestMoreSchedulesMatchTorch(t *testing.T) {
	f := schedFixtures(t)
	for name, mk := range map[string]func(Optimizer) Scheduler{
		"cosine_past_tmax": func(o Optimizer) Scheduler { return CosineAnnealingLR(o, 4, 0.01) },
		"multistep":        func(o Optimizer) Scheduler { return MultiStepLR(o, []int{9, 5, 2, 5}, 0.5) },
		"exponential":      func(o Optimizer) Scheduler { return ExponentialLR(o, 0.9) },
		"linear":           func(o Optimizer) Scheduler { return LinearLR(o, 0.25, 1, 4) },
		"linear_down":      func(o Optimizer) Scheduler { return LinearLR(o, 1, 0.1, 3) },
		"lambda":           func(o Optimizer) Scheduler { return LambdaLR(o, func(e int) float64 { return 1 / float64(e+1) }) },
		"warm_restarts_1":  func(o Optimizer) Scheduler { return CosineAnnealingWarmRestarts(o, 3, 1, 0.01) },
		"warm_restarts_2":  func(o Optimizer) Scheduler { return CosineAnnealingWarmRestarts(o, 2, 2, 0) },
		"sequential_warmup_cosine": func(o Optimizer) Scheduler {
			return SequentialLR(o, []Scheduler{LinearLR(o, 0.1, 1, 3), CosineAnnealingLR(o, 5, 0.001)}, []int{3})
		},
		"sequential_three": func(o Optimizer) Scheduler {
			return SequentialLR(o, []Scheduler{ExponentialLR(o, 0.5), StepLR(o, 2, 0.1), LinearLR(o, 0.5, 1, 2)}, []int{2, 5})
		},
	} {
		want := f[name]
		if want == nil {
			t.Fatalf("%s: no fixture", name)
		}
		opt := sgd01()
		s := mk(opt)
		got := []float64{opt.LR()}
		for len(got) < len(want) {
			opt.Step()
			s.Step()
			got = append(got, opt.LR())
		}
		near(t, name, got, want, 1e-9)
		s.SetStepCount(5)
		if d := opt.LR() - want[5]; d > 1e-12 || d < -1e-12 {
			t.Errorf("%s: SetStepCount(5) gives lr %v, want %v", name, opt.LR(), want[5])
		}
	}
}

// TestReduceLROnPlateauMatchesTorch feeds the same metrics to
// ReduceLROnPlateau in min and max mode, relative and absolute thresholds,
// with patience, cooldown and min_lr.
func TestReduceLROnPlateauMatchesTorch(t *testing.T) {
	f := schedFixtures(t)
	metrics := f["plateau_metrics"]
	for name, mk := range map[string]func(Optimizer) *Plateau{
		"plateau_min": func(o Optimizer) *Plateau { return ReduceLROnPlateau(o, "min", 0.5, 2) },
		"plateau_max_abs_cooldown": func(o Optimizer) *Plateau {
			p := ReduceLROnPlateau(o, "max", 0.1, 1)
			p.Threshold, p.ThresholdMode, p.Cooldown, p.MinLR = 0.05, "abs", 2, 0.0005
			return p
		},
		"plateau_min_rel": func(o Optimizer) *Plateau {
			p := ReduceLROnPlateau(o, "min", 0.5, 0)
			p.Threshold = 0.1
			return p
		},
	} {
		opt := sgd01()
		p := mk(opt)
		got := []float64{opt.LR()}
		for _, m := range metrics {
			p.Step(m)
			got = append(got, p.LR())
		}
		near(t, name, got, f[name], 1e-12)
		if p.StepCount() != len(metrics) {
			t.Errorf("%s: StepCount %d", name, p.StepCount())
		}
	}
}

// TestNewSchedulesRefuseBadArguments: PyTorch's ValueErrors.
func TestNewSchedulesRefuseBadArguments(t *testing.T) {
	for name, f := range map[string]func(){
		"LinearLR start 0":        func() { LinearLR(sgd01(), 0, 1, 5) },
		"LinearLR end 2":          func() { LinearLR(sgd01(), 0.5, 2, 5) },
		"LambdaLR nil":            func() { LambdaLR(sgd01(), nil) },
		"WarmRestarts T_0 0":      func() { CosineAnnealingWarmRestarts(sgd01(), 0, 1, 0) },
		"WarmRestarts T_mult 0":   func() { CosineAnnealingWarmRestarts(sgd01(), 2, 0, 0) },
		"Plateau factor 1":        func() { ReduceLROnPlateau(sgd01(), "min", 1, 1) },
		"Plateau mode":            func() { ReduceLROnPlateau(sgd01(), "lowest", 0.5, 1) },
		"MultiStepLR nil opt":     func() { MultiStepLR(nil, []int{1}, 0.1) },
		"Plateau threshold mode":  func() { p := ReduceLROnPlateau(sgd01(), "min", 0.5, 1); p.ThresholdMode = "x"; p.Step(1) },
		"Plateau nil":             func() { (*Plateau)(nil).Step(1) },
		"SequentialLR milestones": func() { o := sgd01(); SequentialLR(o, []Scheduler{ExponentialLR(o, 0.5)}, []int{2}) },
		"SequentialLR other opt": func() {
			o := sgd01()
			SequentialLR(o, []Scheduler{ExponentialLR(o, 0.5), ExponentialLR(sgd01(), 0.5)}, []int{2})
		},
		"SequentialLR decreasing": func() {
			o := sgd01()
			SequentialLR(o, []Scheduler{ExponentialLR(o, 0.5), ExponentialLR(o, 0.5), ExponentialLR(o, 0.5)}, []int{3, 2})
		},
		"SequentialLR short cycle": func() {
			o := sgd01()
			SequentialLR(o, []Scheduler{OneCycleLR(o, 1, 2, 0.3, 25, 1e4), ExponentialLR(o, 0.5)}, []int{5})
		},
	} {
		testenv.Raises[*ember.ValueError](t, name, f)
	}
	// total_iters 0: PyTorch's LinearLR stays at the start factor
	opt := sgd01()
	s := LinearLR(opt, 0.5, 1, 0)
	s.Step()
	if opt.LR() != 0.05 {
		t.Errorf("LinearLR(0.5, 1, 0) after a step: lr %v, want 0.05", opt.LR())
	}
}

// TestOptimizerVariantsMatchTorch: five steps of SGD with maximize and
// with dampening, Adam/AdamW with amsgrad (and maximize), RMSprop (plain,
// centered with momentum) and Adagrad, most of which ember did not have,
// against PyTorch 1.13, resuming from a state dict after three.
func TestOptimizerVariantsMatchTorch(t *testing.T) {
	b, err := os.ReadFile("../testdata/nn/audit.json")
	if err != nil {
		t.Fatal(err)
	}
	type jt struct {
		Shape []int
		Data  []float64
	}
	var f struct{ Optim map[string]json.RawMessage }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var p0 jt
	var grads []jt
	if json.Unmarshal(f.Optim["p0"], &p0) != nil || json.Unmarshal(f.Optim["grads"], &grads) != nil {
		t.Fatal("bad fixture")
	}
	for name, mk := range map[string]func([]Param) Optimizer{
		"sgd_maximize": func(p []Param) Optimizer {
			return SGDWith(p, 0.1, Momentum(0.9), WeightDecay(0.01), Maximize())
		},
		"sgd_dampening": func(p []Param) Optimizer { return SGDWith(p, 0.1, Momentum(0.5), Dampening(0.5)) },
		"adam_amsgrad": func(p []Param) Optimizer {
			return AdamWith(p, LR(0.05), Betas(0.9, 0.99), WeightDecay(0.1), AMSGrad())
		},
		"adamw_amsgrad_maximize": func(p []Param) Optimizer {
			return AdamWWith(p, LR(0.05), WeightDecay(0.02), AMSGrad(), Maximize())
		},
		"rmsprop": func(p []Param) Optimizer {
			r := RMSpropWith(p, WeightDecay(0.1))
			r.Alpha = 0.9
			return r
		},
		"rmsprop_centered_momentum": func(p []Param) Optimizer {
			r := RMSpropWith(p, Momentum(0.5), Maximize())
			r.Centered = true
			return r
		},
		"adagrad": func(p []Param) Optimizer {
			a := AdagradWith(p, LR(0.1), WeightDecay(0.05))
			a.LRDecay, a.InitialAccumulator = 0.1, 0.2
			return a
		},
		"adagrad_default": func(p []Param) Optimizer { return AdagradWith(p, LR(0.1)) },
	} {
		var want []jt
		if err := json.Unmarshal(f.Optim[name], &want); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := ember.FromSlice(p0.Data, ember.Shape(p0.Shape)).Cast(ember.Float32).SetRequiresGrad(true)
		params := Tensors(p)
		opt := mk(params)
		for i, g := range grads {
			if i == 3 { // resume from a state dict midway
				sd := opt.StateDict()
				opt = mk(params)
				if err := opt.LoadStateDict(sd); err != nil {
					t.Fatal(err)
				}
			}
			p.SetGrad(ember.FromSlice(g.Data, ember.Shape(g.Shape)).Cast(ember.Float32))
			opt.Step()
			near(t, name, p.Detach().Cast(ember.Float64).Float64s(), want[i].Data, 1e-5)
		}
	}
	testenv.Raises[*ember.ValueError](t, "SGDWith(AMSGrad())", func() { SGDWith(Tensors(ember.Zeros(ember.Shape{1}, ember.WithGrad())), 0.1, AMSGrad()) })
}

// TestScheduleAfterLoadStateDict: as torch's group "initial_lr", a
// schedule made after loading an optimizer's state (to resume with
// SetStepCount) starts from the original rate; it had started from the
// decayed rate loaded, decaying twice.
func TestScheduleAfterLoadStateDict(t *testing.T) {
	opt := sgd01()
	s := StepLR(opt, 3, 0.5)
	for range 7 {
		opt.Step()
		s.Step()
	}
	if opt.LR() != 0.025 {
		t.Fatalf("lr %v after 7 steps, want 0.025", opt.LR())
	}
	sd := opt.StateDict()
	if v, ok := sd["param_groups.0.initial_lr"]; !ok || v.Item() != 0.1 {
		t.Fatalf("state dict initial_lr %v", v)
	}
	opt2 := sgd01()
	opt2.SetLR(0.3) // whatever the new run was made with
	if err := opt2.LoadStateDict(sd); err != nil {
		t.Fatal(err)
	}
	s2 := StepLR(opt2, 3, 0.5)
	s2.SetStepCount(7)
	if opt2.LR() != 0.025 {
		t.Errorf("resumed lr %v, want 0.025", opt2.LR())
	}
	s2.Step()
	s2.Step()
	if opt2.LR() != 0.0125 {
		t.Errorf("lr after 9 steps %v, want 0.0125", opt2.LR())
	}
}

// TestPlateauStateDict: resuming ReduceLROnPlateau from its state midway
// continues PyTorch's sequence.
func TestPlateauStateDict(t *testing.T) {
	f := schedFixtures(t)
	metrics, want := f["plateau_metrics"], f["plateau_max_abs_cooldown"]
	mk := func(o Optimizer) *Plateau {
		p := ReduceLROnPlateau(o, "max", 0.1, 1)
		p.Threshold, p.ThresholdMode, p.Cooldown, p.MinLR = 0.05, "abs", 2, 0.0005
		return p
	}
	opt := sgd01()
	p := mk(opt)
	for i, m := range metrics {
		if i == 4 || i == 9 {
			sd := p.StateDict()
			p = mk(opt)
			if err := p.LoadStateDict(sd); err != nil {
				t.Fatal(err)
			}
		}
		p.Step(m)
		if got := opt.LR(); math.Abs(got-want[i+1]) > 1e-12 {
			t.Errorf("step %d: lr %v, want %v", i+1, got, want[i+1])
		}
	}
	if err := p.LoadStateDict(map[string]float64{"best": 1, "num_bad_epochs": -1, "cooldown_counter": 0, "last_epoch": 0}); err == nil {
		t.Error("took num_bad_epochs -1")
	}
}

// TestOneCycleLRMomentumMatchesTorch: OneCycleLR with cycle_momentum=True
// (PyTorch's default, which ember lacked) drives SGD's momentum (also one
// made without momentum) and Adam's beta1 as PyTorch 1.13 does.
func TestOneCycleLRMomentumMatchesTorch(t *testing.T) {
	f := schedFixtures(t)
	p := func() []Param { return Tensors(ember.Zeros(ember.Shape{1}, ember.WithGrad())) }
	for _, c := range []struct {
		name string
		opt  Optimizer
		m    func(Optimizer) float64
		mk   func(Optimizer) Scheduler
		lr   string
	}{
		{"sgd", SGDWith(p(), 0.1, Momentum(0.9)), func(o Optimizer) float64 { return o.(*SGD).Momentum },
			func(o Optimizer) Scheduler { return OneCycleLRMomentum(o, 1, 10, 0.25, 25, 1e4, 0.85, 0.95) }, "onecycle_mom_sgd_m"},
		{"sgd0", SGDWith(p(), 0.1), func(o Optimizer) float64 { return o.(*SGD).Momentum },
			func(o Optimizer) Scheduler { return OneCycleLRMomentum(o, 0.5, 7, 0.3, 25, 1e4, 0.8, 0.9) }, "onecycle_mom_sgd0_m"},
		{"adam", AdamWith(p(), LR(0.1)), func(o Optimizer) float64 { return o.(*Adam).Beta1 },
			func(o Optimizer) Scheduler { return OneCycleLRMomentum(o, 0.01, 10, 0.3, 25, 1e4, 0.85, 0.95) }, "onecycle_mom_adam_b1"},
	} {
		wantLR, wantM := f["onecycle_mom_"+c.name+"_lr"], f[c.lr]
		if wantLR == nil || wantM == nil {
			t.Fatalf("%s: no fixture", c.name)
		}
		s := c.mk(c.opt)
		lr, m := []float64{c.opt.LR()}, []float64{c.m(c.opt)}
		for len(lr) < len(wantLR) {
			c.opt.Step()
			s.Step()
			lr, m = append(lr, c.opt.LR()), append(m, c.m(c.opt))
		}
		near(t, c.name+" lr", lr, wantLR, 1e-9)
		near(t, c.name+" momentum", m, wantM, 1e-9)
		s.SetStepCount(2)
		if math.Abs(c.m(c.opt)-wantM[2]) > 1e-12 {
			t.Errorf("%s: SetStepCount(2) momentum %v, want %v", c.name, c.m(c.opt), wantM[2])
		}
	}
	testenv.Raises[*ember.ValueError](t, "OneCycleLRMomentum(Adagrad)", func() {
		OneCycleLRMomentum(AdagradWith(p()), 1, 10, 0.3, 25, 1e4, 0.85, 0.95)
	})
}
