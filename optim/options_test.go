package optim

import (
	"testing"

	"github.com/emberml/ember"
)

func TestOptionConstructorsUsePyTorchDefaults(t *testing.T) {
	step := func(opt Optimizer, p *ember.Tensor, g []float64) {
		p.SetGrad(ember.FromSlice(g, nil))
		opt.Step()
	}
	// Adam's first step with lr 1e-3, eps 1e-8: p -= lr·g/(|g|+eps)
	p := ember.FromSlice([]float64{1, -2}, nil).SetRequiresGrad(true)
	step(AdamWith(Tensors(p)), p, []float64{0.5, -4})
	near(t, "adam", p.Float64s(), []float64{1 - 1e-3*0.5/(0.5+1e-8), -2 + 1e-3*4/(4+1e-8)}, 1e-12)
	// AdamW: decoupled weight decay 0.01 first, p *= 1 - lr·wd
	p = ember.FromSlice([]float64{1, -2}, nil).SetRequiresGrad(true)
	step(AdamWWith(Tensors(p)), p, []float64{0.5, -4})
	near(t, "adamw", p.Float64s(), []float64{1*(1-1e-5) - 1e-3*0.5/(0.5+1e-8), -2*(1-1e-5) + 1e-3*4/(4+1e-8)}, 1e-12)
	// options override: lr 0.1, betas (0.5, 0.5)
	p = ember.FromSlice([]float64{1}, nil).SetRequiresGrad(true)
	a := AdamWith(Tensors(p), LR(0.1), Betas(0.5, 0.5), Eps(0))
	if a.Beta1 != 0.5 || a.Beta2 != 0.5 || a.Eps != 0 {
		t.Fatalf("options not applied: %+v", a)
	}
	step(a, p, []float64{2})
	near(t, "adam lr 0.1", p.Float64s(), []float64{0.9}, 1e-12)
	// SGD with momentum 0.9: buf = g, then buf = 0.9·buf + g
	p = ember.FromSlice([]float64{1}, nil).SetRequiresGrad(true)
	s := SGDWith(Tensors(p), 0.1, Momentum(0.9))
	step(s, p, []float64{1})
	step(s, p, []float64{1})
	near(t, "sgd momentum", p.Float64s(), []float64{1 - 0.1 - 0.1*1.9}, 1e-12)
	if s.WeightDecay != 0 || s.Nesterov || s.Dampening != 0 {
		t.Fatalf("SGD defaults: %+v", s)
	}
}
