package optim

import (
	"math"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/weights"
)

func fixture(t *testing.T) map[string]*ember.Tensor {
	t.Helper()
	f, err := weights.LoadSafetensors("../testdata/nn/optim.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func near(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Errorf("%s[%d] = %v, want %v", name, i, got[i], want[i])
			return
		}
	}
}

func TestOptimizersMatchTorch(t *testing.T) {
	f := fixture(t)
	for name, mk := range map[string]func([]Param, GradFunc) Optimizer{
		"sgd":          func(p []Param, g GradFunc) Optimizer { return NewSGD(p, g, 0.1, 0, 0, 0, false) },
		"sgd_momentum": func(p []Param, g GradFunc) Optimizer { return NewSGD(p, g, 0.1, 0.9, 0.1, 0.01, false) },
		"sgd_nesterov": func(p []Param, g GradFunc) Optimizer { return NewSGD(p, g, 0.05, 0.8, 0, 0.1, true) },
		"adam":         func(p []Param, g GradFunc) Optimizer { return NewAdam(p, g, 0.01, 0.8, 0.95, 1e-6, 0.1) },
		"adamw":        func(p []Param, g GradFunc) Optimizer { return NewAdamW(p, g, 0.01, 0.9, 0.999, 1e-8, 0.05) },
	} {
		p := f["p0"].Clone().SetRequiresGrad(true)
		params := []Param{{"w", p}}
		opt := mk(params, nil)
		for step := 0; step < 5; step++ {
			if step == 3 { // resume from a saved state dict midway
				sd := opt.StateDict()
				opt = mk(params, nil)
				if err := opt.LoadStateDict(sd); err != nil {
					t.Fatal(err)
				}
			}
			// A real backward whose gradient is the fixture's g<step>:
			// d/dp sum(p·g) = g.
			opt.ZeroGrad()
			p.Mul(f["g"+string(rune('0'+step))]).Sum().Backward()
			opt.Step()
			if params[0].Tensor != p || !p.RequiresGrad() {
				t.Fatalf("%s: step replaced or detached the parameter", name)
			}
			near(t, name+" step "+string(rune('1'+step)), p.Cast(ember.Float64).Float64s(),
				f[name+".p"+string(rune('1'+step))].Cast(ember.Float64).Float64s(), 1e-5)
		}
	}
}

func TestSchedulesMatchTorch(t *testing.T) {
	f := fixture(t)
	for name, mk := range map[string]func(Optimizer) Scheduler{
		"steplr":   func(o Optimizer) Scheduler { return StepLR(o, 3, 0.5) },
		"cosine":   func(o Optimizer) Scheduler { return CosineAnnealingLR(o, 8, 0.001) },
		"onecycle": func(o Optimizer) Scheduler { return OneCycleLR(o, 0.5, 20, 0.3, 25, 1e4) },
	} {
		opt := NewSGD([]Param{{"w", ember.Zeros(ember.Shape{1})}}, nil, 0.1, 0, 0, 0, false)
		s := mk(opt)
		want := f[name].Float64s()
		got := []float64{opt.LR()}
		for len(got) < len(want) {
			opt.Step()
			s.Step()
			got = append(got, opt.LR())
		}
		near(t, name, got, want, 1e-9)
		s.SetStepCount(2)
		if math.Abs(opt.LR()-want[2]) > 1e-12 {
			t.Errorf("%s: SetStepCount(2) gives lr %v, want %v", name, opt.LR(), want[2])
		}
	}
}

// TestAdamStateDictStep: a state dict's step must be one whole count ≥ 0
// (a [3] one was taken and panicked in the next Step, reading it as a
// scalar), and a StateDict taken earlier follows the count in place as it
// follows exp_avg (it kept the stale step beside a fresh exp_avg).
func TestAdamStateDictStep(t *testing.T) {
	p := ember.Zeros(ember.Shape{2}, ember.WithGrad())
	opt := NewAdam(Tensors(p), nil, 0.1, 0.9, 0.999, 1e-8, 0)
	for _, step := range []*ember.Tensor{ember.Zeros(ember.Shape{3}), ember.Scalar(-1), ember.Scalar(2.5), ember.Scalar(math.NaN())} {
		sd := map[string]*ember.Tensor{"param_groups.0.lr": ember.Scalar(0.1), "state.0.step": step}
		if err := opt.LoadStateDict(sd); err == nil {
			t.Errorf("LoadStateDict took step %v", step)
		}
	}
	p.SetGrad(ember.Ones(ember.Shape{2}))
	opt.Step()
	sd := opt.StateDict()
	opt.Step()
	if got := sd["state.0.step"].Item(); got != 2 {
		t.Errorf("earlier StateDict's step = %v after two steps, want 2", got)
	}
	// torch 1.13 writes the step as a float32 scalar
	opt2 := NewAdam(Tensors(ember.Zeros(ember.Shape{2}, ember.WithGrad())), nil, 0.1, 0.9, 0.999, 1e-8, 0)
	sd["state.0.step"] = ember.Scalar(2, ember.Dtype(ember.Float32))
	if err := opt2.LoadStateDict(sd); err != nil {
		t.Fatal(err)
	}
	opt2.params[0].Tensor.Detach().CopyFrom(p.Detach())
	opt2.params[0].Tensor.SetGrad(ember.Ones(ember.Shape{2}))
	opt.Step()
	opt2.Step()
	near(t, "resumed from a float32 step", opt2.params[0].Tensor.Detach().Cast(ember.Float64).Float64s(), p.Detach().Cast(ember.Float64).Float64s(), 0)
}
