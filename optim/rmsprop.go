package optim

import (
	"github.com/emberml/ember"
)

// RMSprop is torch.optim.RMSprop: the gradient divided by the root of a
// running average (Alpha) of its square (minus the square of its running
// average when Centered), plus Eps, with optional momentum, L2 weight
// decay and Maximize. The fields are the defaults: every parameter group
// that does not set one itself follows it.
type RMSprop struct {
	base
	Alpha, Eps, WeightDecay, Momentum float64
	Centered, Maximize                bool
}

var rmspropKind = &kind{op: "optim.RMSprop", check: func(op string, g *ParamGroup) {
	hyperErr(op, g.f("eps") >= 0, "Invalid epsilon value: %v", g.f("eps"))
	hyperErr(op, g.f("momentum") >= 0, "Invalid momentum value: %v", g.f("momentum"))
	hyperErr(op, g.f("weight_decay") >= 0, "Invalid weight_decay value: %v", g.f("weight_decay"))
	hyperErr(op, g.f("alpha") >= 0, "Invalid alpha value: %v", g.f("alpha"))
}}

// RMSpropWith is torch.optim.RMSprop(params, ...): lr 0.01, alpha 0.99,
// eps 1e-8, weight decay and momentum 0, not centered unless options say
// otherwise (LR, Alpha, Eps, WeightDecay, Momentum, Centered, Maximize,
// WithGrad).
func RMSpropWith(params []Param, opts ...Option) *RMSprop {
	return RMSpropGroups(one("optim.RMSprop", params), opts...)
}

// RMSpropGroups is torch.optim.RMSprop with parameter groups: one per
// Group, each with the options it gives and RMSpropWith's defaults (opts)
// for the others.
func RMSpropGroups(groups []Group, opts ...Option) *RMSprop {
	o := options("optim.RMSprop", Options{LR: 0.01, Alpha: 0.99, Eps: 1e-8}, opts,
		[]string{"lr", "grad", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"})
	r := &RMSprop{Alpha: o.Alpha, Eps: o.Eps, WeightDecay: o.WeightDecay, Momentum: o.Momentum, Centered: o.Centered, Maximize: o.Maximize}
	r.init(rmspropKind, groups, o.Grad, o.LR, map[string]*float64{"alpha": &r.Alpha, "eps": &r.Eps, "weight_decay": &r.WeightDecay, "momentum": &r.Momentum},
		map[string]*bool{"centered": &r.Centered, "maximize": &r.Maximize})
	return r
}

func (r *RMSprop) b(op string) *base {
	if r == nil || r.kind == nil {
		nilOptimizer("RMSprop", op)
	}
	return &r.base
}

// Step applies one RMSprop update, with each group's values.
func (r *RMSprop) Step() {
	b := r.b("Step")
	// every group checked before any is updated: a refused Step changes nothing
	for _, gr := range b.groups {
		hyperErr("optim.RMSprop", gr.f("alpha") >= 0, "Invalid alpha value: %v", gr.f("alpha"))
	}
	for _, gr := range b.groups {
		lr, alpha, eps, wd, momentum := gr.lr, gr.f("alpha"), gr.f("eps"), gr.f("weight_decay"), gr.f("momentum")
		centered, maximize := gr.flag("centered"), gr.flag("maximize")
		b.each(gr, func(p, g *ember.Tensor, st map[string]*ember.Tensor) {
			if maximize {
				g = g.Neg()
			}
			count(st)
			if wd != 0 {
				g = g.Add(p.MulScalar(wd))
			}
			sq := stateZeros(st, "square_avg", p)
			sq.MulScalarInPlace(alpha).AddcmulInPlace(g, g, 1-alpha)
			var avg *ember.Tensor
			if centered {
				ga := stateZeros(st, "grad_avg", p)
				ga.MulScalarInPlace(alpha).AddScaledInPlace(g, 1-alpha)
				avg = sq.Sub(ga.Mul(ga)).Sqrt()
			} else {
				avg = sq.Sqrt()
			}
			avg = avg.AddScalar(eps)
			if momentum > 0 {
				buf := stateZeros(st, "momentum_buffer", p)
				buf.MulScalarInPlace(momentum).AddcdivInPlace(g, avg, 1)
				p.AddScaledInPlace(buf, -lr)
			} else {
				p.AddcdivInPlace(g, avg, -lr)
			}
		})
	}
}

// LR returns the learning rate (the first parameter group's).
func (r *RMSprop) LR() float64 { return r.b("LR").LR() }

// SetLR sets every parameter group's learning rate.
func (r *RMSprop) SetLR(lr float64) { r.b("SetLR").SetLR(lr) }

// ZeroGrad clears the parameters' gradients (set to none, as PyTorch's default).
func (r *RMSprop) ZeroGrad() { r.b("ZeroGrad").ZeroGrad() }

// StateDict returns the state with torch's keys (state.N.square_avg,
// state.N.step, param_groups.0.lr, ...).
func (r *RMSprop) StateDict() map[string]*ember.Tensor { return r.b("StateDict").StateDict() }

// LoadStateDict loads a StateDict (from ember or torch).
func (r *RMSprop) LoadStateDict(sd map[string]*ember.Tensor) error {
	return r.b("LoadStateDict").LoadStateDict(sd)
}

// Adagrad is torch.optim.Adagrad: the gradient divided by the root of the
// sum of its squares (which starts at InitialAccumulator) plus Eps, at a
// rate lr/(1+(step-1)·LRDecay), with optional L2 weight decay and
// Maximize. The fields are the defaults: every parameter group that does
// not set one itself follows it; as in torch, every sum starts at the
// optimizer's InitialAccumulator, a group's own value is only kept.
type Adagrad struct {
	base
	LRDecay, WeightDecay, InitialAccumulator, Eps float64
	Maximize                                      bool
}

var adagradKind = &kind{op: "optim.Adagrad", check: func(op string, g *ParamGroup) {
	hyperErr(op, g.f("lr_decay") >= 0, "Invalid lr_decay value: %v", g.f("lr_decay"))
	hyperErr(op, g.f("weight_decay") >= 0, "Invalid weight_decay value: %v", g.f("weight_decay"))
	hyperErr(op, g.f("initial_accumulator_value") >= 0, "Invalid initial_accumulator_value value: %v", g.f("initial_accumulator_value"))
	hyperErr(op, g.f("eps") >= 0, "Invalid epsilon value: %v", g.f("eps"))
}}

// AdagradWith is torch.optim.Adagrad(params, ...): lr 0.01, eps 1e-10,
// lr_decay, weight decay and initial_accumulator_value 0 unless options
// say otherwise (LR, LRDecay, Eps, WeightDecay, InitialAccumulator,
// Maximize, WithGrad).
func AdagradWith(params []Param, opts ...Option) *Adagrad {
	return AdagradGroups(one("optim.Adagrad", params), opts...)
}

// AdagradGroups is torch.optim.Adagrad with parameter groups: one per
// Group, each with the options it gives and AdagradWith's defaults (opts)
// for the others.
func AdagradGroups(groups []Group, opts ...Option) *Adagrad {
	o := options("optim.Adagrad", Options{LR: 0.01, Eps: 1e-10}, opts,
		[]string{"lr", "grad", "lr_decay", "eps", "weight_decay", "initial_accumulator_value", "maximize"})
	a := &Adagrad{LRDecay: o.LRDecay, WeightDecay: o.WeightDecay, InitialAccumulator: o.InitialAccumulator, Eps: o.Eps, Maximize: o.Maximize}
	a.init(adagradKind, groups, o.Grad, o.LR, map[string]*float64{"lr_decay": &a.LRDecay, "eps": &a.Eps, "weight_decay": &a.WeightDecay, "initial_accumulator_value": &a.InitialAccumulator},
		map[string]*bool{"maximize": &a.Maximize})
	return a
}

func (a *Adagrad) b(op string) *base {
	if a == nil || a.kind == nil {
		nilOptimizer("Adagrad", op)
	}
	return &a.base
}

// Step applies one Adagrad update, with each group's values.
func (a *Adagrad) Step() {
	b := a.b("Step")
	// every group checked before any is updated: a refused Step changes nothing
	for _, gr := range b.groups {
		hyperErr("optim.Adagrad", gr.f("lr_decay") >= 0, "Invalid lr_decay value: %v", gr.f("lr_decay"))
	}
	hyperErr("optim.Adagrad", a.InitialAccumulator >= 0, "Invalid initial_accumulator_value value: %v", a.InitialAccumulator)
	for _, gr := range b.groups {
		// torch fills every sum at construction from the constructor's
		// initial_accumulator_value, whatever the group's (1.13 to 2.x)
		lr, lrDecay, eps, wd, init := gr.lr, gr.f("lr_decay"), gr.f("eps"), gr.f("weight_decay"), a.InitialAccumulator
		maximize := gr.flag("maximize")
		b.each(gr, func(p, g *ember.Tensor, st map[string]*ember.Tensor) {
			step := count(st)
			if maximize {
				g = g.Neg()
			}
			if wd != 0 {
				g = g.Add(p.MulScalar(wd))
			}
			sum, ok := st["sum"]
			if !ok {
				sum = ember.ZerosLike(p).AddScalar(init)
				st["sum"] = sum
			}
			clr := lr / (1 + (step-1)*lrDecay)
			sum.AddcmulInPlace(g, g, 1)
			p.AddcdivInPlace(g, sum.Sqrt().AddScalar(eps), -clr)
		})
	}
}

// LR returns the learning rate (the first parameter group's).
func (a *Adagrad) LR() float64 { return a.b("LR").LR() }

// SetLR sets every parameter group's learning rate.
func (a *Adagrad) SetLR(lr float64) { a.b("SetLR").SetLR(lr) }

// ZeroGrad clears the parameters' gradients (set to none, as PyTorch's default).
func (a *Adagrad) ZeroGrad() { a.b("ZeroGrad").ZeroGrad() }

// StateDict returns the state with torch's keys (state.N.sum,
// state.N.step, param_groups.0.lr, ...).
func (a *Adagrad) StateDict() map[string]*ember.Tensor { return a.b("StateDict").StateDict() }

// LoadStateDict loads a StateDict (from ember or torch).
func (a *Adagrad) LoadStateDict(sd map[string]*ember.Tensor) error {
	return a.b("LoadStateDict").LoadStateDict(sd)
}

// count adds one to the state's step count (a float64 scalar kept in
// place, as Adam's) and returns it.
func count(st map[string]*ember.Tensor) float64 {
	s, ok := st["step"]
	if !ok {
		s = ember.Scalar(0, ember.Dtype(ember.Float64))
		st["step"] = s
	}
	s.AddScalarInPlace(1)
	return s.Item()
}

// stateZeros returns the state tensor name, made as zeros like p if absent.
func stateZeros(st map[string]*ember.Tensor, name string, p *ember.Tensor) *ember.Tensor {
	t, ok := st[name]
	if !ok {
		t = ember.ZerosLike(p)
		st[name] = t
	}
	return t
}
