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
