package optim

import (
	"reflect"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// torch.optim refuses what it cannot update: "optimizer got an empty
// parameter list", "can't optimize a non-leaf Tensor" (PyTorch 1.13's
// ValueErrors); ember also refuses integer parameters, which 1.13 takes
// at construction (an integer tensor cannot hold Adam's update), and a
// tensor listed twice, where 1.13 warns.
func TestOptimizerRefusesParams(t *testing.T) {
	leaf := ember.Zeros(ember.Shape{2}).SetRequiresGrad(true)
	ints := ember.Zeros(ember.Shape{2}, ember.Dtype(ember.Int64))
	mks := map[string]func([]Param) Optimizer{
		"optim.SGD":      func(p []Param) Optimizer { return SGDWith(p, 0.1) },
		"optim.Adam":     func(p []Param) Optimizer { return AdamWith(p) },
		"optim.AdamW":    func(p []Param) Optimizer { return AdamWWith(p) },
		"optim.RMSprop":  func(p []Param) Optimizer { return RMSpropWith(p) },
		"optim.Adagrad":  func(p []Param) Optimizer { return AdagradWith(p) },
		"optim.Adamax":   func(p []Param) Optimizer { return AdamaxWith(p) },
		"optim.NAdam":    func(p []Param) Optimizer { return NAdamWith(p) },
		"optim.RAdam":    func(p []Param) Optimizer { return RAdamWith(p) },
		"optim.Adadelta": func(p []Param) Optimizer { return AdadeltaWith(p) },
		"optim.Rprop":    func(p []Param) Optimizer { return RpropWith(p) },
		"optim.ASGD":     func(p []Param) Optimizer { return ASGDWith(p) },
	}
	for op, mk := range mks {
		de := testenv.Raises[*ember.DTypeError](t, op+" int64", func() { mk([]Param{{"w", leaf}, {"step", ints}}) })
		if de.Op != op || len(de.DTypes) != 1 || de.DTypes[0] != ember.Int64 || de.Msg != `optimizer can only optimize Tensors of floating point dtype, parameter "step" is int64` {
			t.Errorf("%s: %v", op, de)
		}
		ve := testenv.Raises[*ember.ValueError](t, op+" non-leaf", func() { mk(Tensors(leaf, leaf.MulScalar(2))) })
		if ve.Op != op || ve.Msg != `can't optimize a non-leaf Tensor (parameter "1" is the output of MulBackward0)` {
			t.Errorf("%s: %v", op, ve)
		}
		// torch 1.13 warns "this will cause an error"; each step would update it twice
		ve = testenv.Raises[*ember.ValueError](t, op+" duplicate", func() { mk([]Param{{"a", leaf}, {"b", leaf}}) })
		if ve.Msg != `optimizer contains a parameter group with duplicate parameters: "b" is the same tensor as "a"` {
			t.Errorf("%s: %v", op, ve)
		}
		ve = testenv.Raises[*ember.ValueError](t, op+" empty", func() { mk(nil) })
		if ve.Msg != "optimizer got an empty parameter list" {
			t.Errorf("%s: %v", op, ve)
		}
		// a float leaf that does not require grad (a frozen one) and a
		// float16 one are taken, as by torch
		mk(Tensors(ember.Zeros(ember.Shape{2}), ember.Zeros(ember.Shape{2}, ember.Dtype(ember.Float16))))
	}
}

// torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=2) takes 2
// steps (the last at lr 0.0811745653949763) and raises "Tried to step 4
// times. The specified number of total steps is 2" at the 3rd; a negative
// step count is refused by every schedule.
func TestSchedulerStepRange(t *testing.T) {
	opt := SGDWith(Tensors(ember.Zeros(ember.Shape{2}).SetRequiresGrad(true)), 0.1)
	s := OneCycleLR(opt, 0.1, 2, 0.3, 25, 1e4)
	want := []float64{0.0811745653949763, 4e-07, 0.0811745653949763}
	near(t, "lr0", []float64{opt.LR()}, want[:1], 1e-9)
	s.Step()
	near(t, "lr1", []float64{opt.LR()}, want[1:2], 1e-9)
	s.Step()
	near(t, "lr2", []float64{opt.LR()}, want[2:], 1e-9)
	e := testenv.Raises[*ember.ValueError](t, "3rd step", s.Step)
	if e.Op != "optim.OneCycleLR" || e.Msg != "Tried to step 4 times. The specified number of total steps is 2" {
		t.Fatal(e)
	}
	if s.StepCount() != 2 || opt.LR() != want[2] {
		t.Fatalf("a refused step moved the schedule: count %d, lr %v", s.StepCount(), opt.LR())
	}
	e = testenv.Raises[*ember.ValueError](t, "SetStepCount(3)", func() { s.SetStepCount(3) })
	if e.Msg != "Tried to step 4 times. The specified number of total steps is 2" {
		t.Fatal(e)
	}
	s.SetStepCount(1)
	near(t, "lr at 1", []float64{opt.LR()}, want[1:2], 1e-9)

	for name, s := range map[string]Scheduler{
		"optim.StepLR":            StepLR(opt, 3, 0.5),
		"optim.CosineAnnealingLR": CosineAnnealingLR(opt, 10, 0),
		"optim.OneCycleLR":        OneCycleLR(opt, 0.1, 5, 0.3, 25, 1e4),
	} {
		lr := opt.LR()
		e := testenv.Raises[*ember.ValueError](t, name, func() { s.SetStepCount(-5) })
		if e.Op != name || e.Msg != "step count -5 is negative" {
			t.Errorf("%s: %v", name, e)
		}
		if s.StepCount() != 0 || opt.LR() != lr {
			t.Errorf("%s: a refused SetStepCount moved the schedule", name)
		}
	}
	// StepLR and CosineAnnealingLR have no last step (torch steps them on)
	st := StepLR(SGDWith(Tensors(ember.Zeros(ember.Shape{1}).SetRequiresGrad(true)), 1), 1, 0.5)
	st.SetStepCount(40)
	near(t, "StepLR at 40", []float64{st.LR()}, []float64{1.0 / (1 << 40)}, 1e-12)
}

// A schedule of a nil *Adam (an optimizer never built) is refused as one of
// a nil Optimizer, not a nil dereference.
func TestSchedulerNilOptimizer(t *testing.T) {
	var a *Adam
	for name, f := range map[string]func(){
		"StepLR":            func() { StepLR(a, 1, 0.5) },
		"CosineAnnealingLR": func() { CosineAnnealingLR(a, 3, 0) },
		"OneCycleLR":        func() { OneCycleLR(a, 0.1, 5, 0.3, 25, 1e4) },
		"StepLR(nil)":       func() { StepLR(nil, 1, 0.5) },
		"StepLR(&SGD{})":    func() { StepLR(&SGD{}, 1, 0.5) },
	} {
		if e := testenv.Raises[*ember.ValueError](t, name, f); e.Msg != "nil optimizer" && !strings.Contains(e.Msg, "never constructed") {
			t.Errorf("%s: %v", name, e)
		}
	}
}

// TestNilOptimizerMethods calls every exported method of a nil (and a zero) *SGD,
// *Adam and *GradScaler (an optimizer field never constructed): each
// panics with a *ember.ValueError naming the type and method, never a nil
// dereference.
func TestNilOptimizerMethods(t *testing.T) {
	for _, recv := range []any{(*SGD)(nil), (*Adam)(nil), (*RMSprop)(nil), (*Adagrad)(nil), (*Adamax)(nil), (*NAdam)(nil), (*RAdam)(nil), (*Adadelta)(nil), (*Rprop)(nil), (*ASGD)(nil), (*LBFGS)(nil), &LBFGS{}, &Rprop{}, &ASGD{}, &Adamax{}, &NAdam{}, &RAdam{}, &Adadelta{}, (*GradScaler)(nil), (*Plateau)(nil), (*ParamGroup)(nil), &ParamGroup{}, &SGD{}, &Adam{}, &RMSprop{}, &Adagrad{}} {
		typ := reflect.TypeOf(recv)
		for _, m := range testenv.CallMethods(recv, reflect.Zero) {
			r := m.Panic
			ve, ok := r.(*ember.ValueError)
			if !ok || !strings.Contains(ve.Op, m.Name) || !strings.Contains(ve.Msg, "nil") {
				t.Errorf("nil %v.%s: %T %v, want a *ember.ValueError naming it", typ, m.Name, r, r)
			}
		}
	}
}

// TestOptionsForeignToTheOptimizer: an option another optimizer takes is
// refused, as torch.optim.Adam(params, momentum=0.9) raises TypeError,
// instead of being dropped.
func TestOptionsForeignToTheOptimizer(t *testing.T) {
	ps := Tensors(ember.Ones(ember.Shape{2}, ember.WithGrad()))
	for name, f := range map[string]func(){
		"adam momentum":  func() { AdamWith(ps, Momentum(0.9)) },
		"adam nesterov":  func() { AdamWith(ps, Nesterov()) },
		"adamw dampen":   func() { AdamWWith(ps, Dampening(0.1)) },
		"sgd betas":      func() { SGDWith(ps, 0.1, Betas(0.8, 0.9)) },
		"sgd eps":        func() { SGDWith(ps, 0.1, Eps(1e-6)) },
		"sgd nil option": func() { SGDWith(ps, 0.1, nil) },
		"rmsprop betas":  func() { RMSpropWith(ps, Betas(0.8, 0.9)) },
		"adagrad moment": func() { AdagradWith(ps, Momentum(0.9)) },
		"rmsprop eps<0":  func() { RMSpropWith(ps, Eps(-1)) },
		"adagrad wd<0":   func() { AdagradWith(ps, WeightDecay(-1)) },
		"sgd amsgrad":    func() { SGDWith(ps, 0.1, AMSGrad()) },
	} {
		testenv.Raises[*ember.ValueError](t, name, f)
	}
	if a := AdamWith(ps, Betas(0.8, 0.9), Eps(1e-6), WeightDecay(0.1), LR(0.5)); a.Beta1 != 0.8 || a.Eps != 1e-6 || a.LR() != 0.5 {
		t.Errorf("Adam's own options: %+v", a)
	}
}
