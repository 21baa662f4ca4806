package optim

import (
	"math"

	"github.com/emberml/ember"
)

// checkBetas is the check of torch's Adam family: eps, betas and weight
// decay in range.
func checkBetas(op string, g *ParamGroup) {
	eps, b1, b2, wd := g.f("eps"), g.f("beta1"), g.f("beta2"), g.f("weight_decay")
	hyperErr(op, eps >= 0, "Invalid epsilon value: %v", eps)
	hyperErr(op, b1 >= 0 && b1 < 1, "Invalid beta parameter at index 0: %v", b1)
	hyperErr(op, b2 >= 0 && b2 < 1, "Invalid beta parameter at index 1: %v", b2)
	hyperErr(op, wd >= 0, "Invalid weight_decay value: %v", wd)
}

// Adamax is torch.optim.Adamax: Adam with the infinity norm, dividing by
// a running maximum of |grad| (state "exp_inf") instead of the root of a
// running average of its square, with L2 weight decay and Maximize. The
// fields are the defaults: every parameter group that does not set one
// itself follows it.
type Adamax struct {
	base
	Beta1, Beta2, Eps, WeightDecay float64
	Maximize                       bool
}

var adamaxKind = &kind{op: "optim.Adamax", check: checkBetas}

// AdamaxWith is torch.optim.Adamax(params, ...): lr 2e-3, betas (0.9,
// 0.999), eps 1e-8, weight decay 0 unless options say otherwise (LR,
// Betas, Eps, WeightDecay, Maximize, WithGrad).
func AdamaxWith(params []Param, opts ...Option) *Adamax {
	return AdamaxGroups(one("optim.Adamax", params), opts...)
}

// AdamaxGroups is torch.optim.Adamax with parameter groups: one per
// Group, each with the options it gives and AdamaxWith's defaults (opts)
// for the others.
func AdamaxGroups(groups []Group, opts ...Option) *Adamax {
	o := options("optim.Adamax", Options{LR: 2e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, opts,
		[]string{"lr", "grad", "beta1", "beta2", "eps", "weight_decay", "maximize"})
	a := &Adamax{Beta1: o.Beta1, Beta2: o.Beta2, Eps: o.Eps, WeightDecay: o.WeightDecay, Maximize: o.Maximize}
	a.init(adamaxKind, groups, o.Grad, o.LR, map[string]*float64{"beta1": &a.Beta1, "beta2": &a.Beta2, "eps": &a.Eps, "weight_decay": &a.WeightDecay},
		map[string]*bool{"maximize": &a.Maximize})
	return a
}

// Step applies one Adamax update, with each group's values.
func (x *Adamax) Step() {
	b := x.b("Step")
	for _, gr := range b.groups {
		lr, b1, b2, eps, wd := gr.lr, gr.f("beta1"), gr.f("beta2"), gr.f("eps"), gr.f("weight_decay")
		maximize := gr.flag("maximize")
		b.each(gr, func(p, g *ember.Tensor, st map[string]*ember.Tensor) {
			step := count(st)
			m := stateZeros(st, "exp_avg", p)
			u := stateZeros(st, "exp_inf", p)
			if maximize {
				g = g.Neg()
			}
			if wd != 0 {
				g = g.Add(p.MulScalar(wd))
			}
			m.MulScalarInPlace(b1).AddScaledInPlace(g, 1-b1)
			u.CopyFrom(u.MulScalar(b2).Maximum(g.Abs().AddScalar(eps)))
			p.AddcdivInPlace(m, u, -lr/(1-math.Pow(b1, step)))
		})
	}
}

// NAdam is torch.optim.NAdam: Adam with Nesterov momentum, whose momentum
// coefficient warms up with MomentumDecay (state "mu_product", the product
// of the coefficients so far), with L2 weight decay. PyTorch 1.13's NAdam
// has no maximize. The fields are the defaults: every parameter group
// that does not set one itself follows it.
type NAdam struct {
	base
	Beta1, Beta2, Eps, WeightDecay, MomentumDecay float64
}

var nadamKind = &kind{op: "optim.NAdam", check: func(op string, g *ParamGroup) {
	checkBetas(op, g)
	hyperErr(op, g.f("momentum_decay") >= 0, "Invalid momentum_decay value: %v", g.f("momentum_decay"))
}}

// NAdamWith is torch.optim.NAdam(params, ...): lr 2e-3, betas (0.9,
// 0.999), eps 1e-8, weight decay 0, momentum_decay 4e-3 unless options
// say otherwise (LR, Betas, Eps, WeightDecay, MomentumDecay, WithGrad).
func NAdamWith(params []Param, opts ...Option) *NAdam {
	return NAdamGroups(one("optim.NAdam", params), opts...)
}

// NAdamGroups is torch.optim.NAdam with parameter groups: one per Group,
// each with the options it gives and NAdamWith's defaults (opts) for the
// others.
func NAdamGroups(groups []Group, opts ...Option) *NAdam {
	o := options("optim.NAdam", Options{LR: 2e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, MomentumDecay: 4e-3}, opts,
		[]string{"lr", "grad", "beta1", "beta2", "eps", "weight_decay", "momentum_decay"})
	n := &NAdam{Beta1: o.Beta1, Beta2: o.Beta2, Eps: o.Eps, WeightDecay: o.WeightDecay, MomentumDecay: o.MomentumDecay}
	n.init(nadamKind, groups, o.Grad, o.LR, map[string]*float64{"beta1": &n.Beta1, "beta2": &n.Beta2, "eps": &n.Eps,
		"weight_decay": &n.WeightDecay, "momentum_decay": &n.MomentumDecay}, map[string]*bool{})
	return n
}

// Step applies one NAdam update, with each group's values.
func (n *NAdam) Step() {
	b := n.b("Step")
	for _, gr := range b.groups {
		lr, b1, b2, eps, wd, md := gr.lr, gr.f("beta1"), gr.f("beta2"), gr.f("eps"), gr.f("weight_decay"), gr.f("momentum_decay")
		b.each(gr, func(p, g *ember.Tensor, st map[string]*ember.Tensor) {
			step := count(st)
			mp, ok := st["mu_product"]
			if !ok {
				mp = ember.Scalar(1, ember.Dtype(ember.Float64))
				st["mu_product"] = mp
			}
			m := stateZeros(st, "exp_avg", p)
			v := stateZeros(st, "exp_avg_sq", p)
			bc2 := 1 - math.Pow(b2, step)
			if wd != 0 {
				g = g.Add(p.MulScalar(wd))
			}
			mu := b1 * (1 - 0.5*math.Pow(0.96, step*md))
			muNext := b1 * (1 - 0.5*math.Pow(0.96, (step+1)*md))
			prod := mp.Item() * mu
			mp.FillInPlace(prod)
			m.MulScalarInPlace(b1).AddScaledInPlace(g, 1-b1)
			v.MulScalarInPlace(b2).AddcmulInPlace(g, g, 1-b2)
			denom := v.DivScalar(bc2).Sqrt().AddScalar(eps)
			p.AddcdivInPlace(g, denom, -lr*(1-mu)/(1-prod))
			// torch 1.13 multiplies mu in twice here (mu_product_next =
			// mu_product * mu * mu_next after mu_product *= mu), as ember does
			p.AddcdivInPlace(m, denom, -lr*muNext/(1-prod*mu*muNext))
		})
	}
}

// RAdam is torch.optim.RAdam: Adam whose adaptive rate is rectified for
// its variance, and left out (plain momentum SGD with bias correction)
// while the approximated moving average is 5 steps long or less, with L2
// weight decay. PyTorch 1.13's RAdam has no maximize. The fields are the
// defaults: every parameter group that does not set one itself follows
// it.
type RAdam struct {
	base
	Beta1, Beta2, Eps, WeightDecay float64
}

var radamKind = &kind{op: "optim.RAdam", check: checkBetas}

// RAdamWith is torch.optim.RAdam(params, ...): lr 1e-3, betas (0.9,
// 0.999), eps 1e-8, weight decay 0 unless options say otherwise (LR,
// Betas, Eps, WeightDecay, WithGrad).
func RAdamWith(params []Param, opts ...Option) *RAdam {
	return RAdamGroups(one("optim.RAdam", params), opts...)
}

// RAdamGroups is torch.optim.RAdam with parameter groups: one per Group,
// each with the options it gives and RAdamWith's defaults (opts) for the
// others.
func RAdamGroups(groups []Group, opts ...Option) *RAdam {
	o := options("optim.RAdam", Options{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, opts,
		[]string{"lr", "grad", "beta1", "beta2", "eps", "weight_decay"})
	r := &RAdam{Beta1: o.Beta1, Beta2: o.Beta2, Eps: o.Eps, WeightDecay: o.WeightDecay}
	r.init(radamKind, groups, o.Grad, o.LR, map[string]*float64{"beta1": &r.Beta1, "beta2": &r.Beta2, "eps": &r.Eps, "weight_decay": &r.WeightDecay},
		map[string]*bool{})
	return r
}

// Step applies one RAdam update, with each group's values.
func (r *RAdam) Step() {
	b := r.b("Step")
	for _, gr := range b.groups {
		lr, b1, b2, eps, wd := gr.lr, gr.f("beta1"), gr.f("beta2"), gr.f("eps"), gr.f("weight_decay")
		b.each(gr, func(p, g *ember.Tensor, st map[string]*ember.Tensor) {
			step := count(st)
			m := stateZeros(st, "exp_avg", p)
			v := stateZeros(st, "exp_avg_sq", p)
			bc1, bc2 := 1-math.Pow(b1, step), 1-math.Pow(b2, step)
			if wd != 0 {
				g = g.Add(p.MulScalar(wd))
			}
			m.MulScalarInPlace(b1).AddScaledInPlace(g, 1-b1)
			v.MulScalarInPlace(b2).AddcmulInPlace(g, g, 1-b2)
			rhoInf := 2/(1-b2) - 1
			rhoT := rhoInf - 2*step*math.Pow(b2, step)/bc2
			if rhoT > 5 {
				rect := math.Sqrt((rhoT - 4) * (rhoT - 2) * rhoInf / ((rhoInf - 4) * (rhoInf - 2) * rhoT))
				p.AddcdivInPlace(m, v.Sqrt().AddScalar(eps), -lr*rect*math.Sqrt(bc2)/bc1)
			} else {
				p.AddScaledInPlace(m, -lr/bc1)
			}
		})
	}
}

// Adadelta is torch.optim.Adadelta: the gradient scaled by the ratio of
// the roots of running averages (Rho) of the squared updates
// ("acc_delta") and of the squared gradient ("square_avg"), each plus
// Eps, times lr; with L2 weight decay and Maximize. The fields are the
// defaults: every parameter group that does not set one itself follows
// it.
type Adadelta struct {
	base
	Rho, Eps, WeightDecay float64
	Maximize              bool
}

var adadeltaKind = &kind{op: "optim.Adadelta", check: func(op string, g *ParamGroup) {
	hyperErr(op, g.f("rho") >= 0 && g.f("rho") <= 1, "Invalid rho value: %v", g.f("rho"))
	hyperErr(op, g.f("eps") >= 0, "Invalid epsilon value: %v", g.f("eps"))
	hyperErr(op, g.f("weight_decay") >= 0, "Invalid weight_decay value: %v", g.f("weight_decay"))
}}

// AdadeltaWith is torch.optim.Adadelta(params, ...): lr 1, rho 0.9, eps
// 1e-6, weight decay 0 unless options say otherwise (LR, Rho, Eps,
// WeightDecay, Maximize, WithGrad).
func AdadeltaWith(params []Param, opts ...Option) *Adadelta {
	return AdadeltaGroups(one("optim.Adadelta", params), opts...)
}

// AdadeltaGroups is torch.optim.Adadelta with parameter groups: one per
// Group, each with the options it gives and AdadeltaWith's defaults
// (opts) for the others.
func AdadeltaGroups(groups []Group, opts ...Option) *Adadelta {
	o := options("optim.Adadelta", Options{LR: 1, Rho: 0.9, Eps: 1e-6}, opts,
		[]string{"lr", "grad", "rho", "eps", "weight_decay", "maximize"})
	a := &Adadelta{Rho: o.Rho, Eps: o.Eps, WeightDecay: o.WeightDecay, Maximize: o.Maximize}
	a.init(adadeltaKind, groups, o.Grad, o.LR, map[string]*float64{"rho": &a.Rho, "eps": &a.Eps, "weight_decay": &a.WeightDecay},
		map[string]*bool{"maximize": &a.Maximize})
	return a
}

// Step applies one Adadelta update, with each group's values.
func (a *Adadelta) Step() {
	b := a.b("Step")
	for _, gr := range b.groups {
		lr, rho, eps, wd := gr.lr, gr.f("rho"), gr.f("eps"), gr.f("weight_decay")
		maximize := gr.flag("maximize")
		b.each(gr, func(p, g *ember.Tensor, st map[string]*ember.Tensor) {
			count(st)
			sq := stateZeros(st, "square_avg", p)
			acc := stateZeros(st, "acc_delta", p)
			if maximize {
				g = g.Neg()
			}
			if wd != 0 {
				g = g.Add(p.MulScalar(wd))
			}
			sq.MulScalarInPlace(rho).AddcmulInPlace(g, g, 1-rho)
			std := sq.AddScalar(eps).Sqrt()
			delta := acc.AddScalar(eps).Sqrt().Div(std).Mul(g)
			acc.MulScalarInPlace(rho).AddcmulInPlace(delta, delta, 1-rho)
			p.AddScaledInPlace(delta, -lr)
		})
	}
}

// Rprop is torch.optim.Rprop, resilient backpropagation: each element
// moves by its own step size against the sign of its gradient; the step
// size ("step_size", starting at lr) is multiplied by EtaPlus while the
// gradient keeps its sign and by EtaMinus when it flips (that element
// then does not move, and its gradient counts as zero the next step),
// kept within [StepSizeMin, StepSizeMax]. It has no weight decay, as
// torch's. The fields are the defaults: every parameter group that does
// not set one itself follows it.
type Rprop struct {
	base
	EtaMinus, EtaPlus, StepSizeMin, StepSizeMax float64
	Maximize                                    bool
}

var rpropKind = &kind{op: "optim.Rprop", check: func(op string, g *ParamGroup) {
	em, ep := g.f("etaminus"), g.f("etaplus")
	hyperErr(op, 0 < em && em < 1 && 1 < ep, "Invalid eta values: %v, %v", em, ep)
}}

// RpropWith is torch.optim.Rprop(params, ...): lr 0.01, etas (0.5, 1.2),
// step sizes (1e-6, 50) unless options say otherwise (LR, Etas,
// StepSizes, Maximize, WithGrad).
func RpropWith(params []Param, opts ...Option) *Rprop {
	return RpropGroups(one("optim.Rprop", params), opts...)
}

// RpropGroups is torch.optim.Rprop with parameter groups: one per Group,
// each with the options it gives and RpropWith's defaults (opts) for the
// others.
func RpropGroups(groups []Group, opts ...Option) *Rprop {
	o := options("optim.Rprop", Options{LR: 1e-2, EtaMinus: 0.5, EtaPlus: 1.2, StepSizeMin: 1e-6, StepSizeMax: 50}, opts,
		[]string{"lr", "grad", "etaminus", "etaplus", "step_size_min", "step_size_max", "maximize"})
	r := &Rprop{EtaMinus: o.EtaMinus, EtaPlus: o.EtaPlus, StepSizeMin: o.StepSizeMin, StepSizeMax: o.StepSizeMax, Maximize: o.Maximize}
	r.init(rpropKind, groups, o.Grad, o.LR, map[string]*float64{"etaminus": &r.EtaMinus, "etaplus": &r.EtaPlus,
		"step_size_min": &r.StepSizeMin, "step_size_max": &r.StepSizeMax}, map[string]*bool{"maximize": &r.Maximize})
	return r
}

// Step applies one Rprop update, with each group's values.
func (r *Rprop) Step() {
	b := r.b("Step")
	for _, gr := range b.groups {
		lr, em, ep, lo, hi := gr.lr, gr.f("etaminus"), gr.f("etaplus"), gr.f("step_size_min"), gr.f("step_size_max")
		maximize := gr.flag("maximize")
		b.each(gr, func(p, g *ember.Tensor, st map[string]*ember.Tensor) {
			count(st)
			prev := stateZeros(st, "prev", p)
			size, ok := st["step_size"]
			if !ok {
				size = ember.ZerosLike(p).AddScalar(lr)
				st["step_size"] = size
			}
			if maximize {
				g = g.Neg()
			}
			sign := g.Mul(prev).Sign()
			up, down := sign.GtScalar(0), sign.LtScalar(0)
			factor := ember.ZerosLike(p).AddScalar(1).MaskedFill(up, ep).MaskedFill(down, em)
			size.CopyFrom(size.Mul(factor).Clamp(lo, hi))
			g = g.MaskedFill(down, 0)
			p.AddcmulInPlace(g.Sign(), size, -1)
			prev.CopyFrom(g)
		})
	}
}

// ASGD is torch.optim.ASGD, averaged SGD: p decays by 1-Lambd·eta and
// moves by -eta·grad, eta = lr/(1+Lambd·lr·step)^Alpha; from step T0 on
// the state "ax" averages the parameters (mu = 1/max(1, step-T0)). With
// L2 weight decay and Maximize. The fields are the defaults: every
// parameter group that does not set one itself follows it.
type ASGD struct {
	base
	Lambd, Alpha, T0, WeightDecay float64
	Maximize                      bool
}

var asgdKind = &kind{op: "optim.ASGD", check: func(op string, g *ParamGroup) {
	hyperErr(op, g.f("weight_decay") >= 0, "Invalid weight_decay value: %v", g.f("weight_decay"))
}}

// ASGDWith is torch.optim.ASGD(params, ...): lr 0.01, lambd 1e-4, alpha
// 0.75, t0 1e6, weight decay 0 unless options say otherwise (LR, Lambd,
// Alpha, T0, WeightDecay, Maximize, WithGrad).
func ASGDWith(params []Param, opts ...Option) *ASGD {
	return ASGDGroups(one("optim.ASGD", params), opts...)
}

// ASGDGroups is torch.optim.ASGD with parameter groups: one per Group,
// each with the options it gives and ASGDWith's defaults (opts) for the
// others.
func ASGDGroups(groups []Group, opts ...Option) *ASGD {
	o := options("optim.ASGD", Options{LR: 1e-2, Lambd: 1e-4, Alpha: 0.75, T0: 1e6}, opts,
		[]string{"lr", "grad", "lambd", "alpha", "t0", "weight_decay", "maximize"})
	a := &ASGD{Lambd: o.Lambd, Alpha: o.Alpha, T0: o.T0, WeightDecay: o.WeightDecay, Maximize: o.Maximize}
	a.init(asgdKind, groups, o.Grad, o.LR, map[string]*float64{"lambd": &a.Lambd, "alpha": &a.Alpha, "t0": &a.T0, "weight_decay": &a.WeightDecay},
		map[string]*bool{"maximize": &a.Maximize})
	return a
}

// Step applies one ASGD update, with each group's values.
func (a *ASGD) Step() {
	b := a.b("Step")
	for _, gr := range b.groups {
		lr, lambd, alpha, t0, wd := gr.lr, gr.f("lambd"), gr.f("alpha"), gr.f("t0"), gr.f("weight_decay")
		maximize := gr.flag("maximize")
		b.each(gr, func(p, g *ember.Tensor, st map[string]*ember.Tensor) {
			step := count(st)
			f64 := ember.Dtype(ember.Float64)
			if _, ok := st["eta"]; !ok {
				st["eta"] = ember.Scalar(lr, f64)
			}
			if _, ok := st["mu"]; !ok {
				st["mu"] = ember.Scalar(1, f64)
			}
			ax := stateZeros(st, "ax", p)
			eta, mu := st["eta"].Item(), st["mu"].Item()
			if maximize {
				g = g.Neg()
			}
			if wd != 0 {
				g = g.Add(p.MulScalar(wd))
			}
			p.MulScalarInPlace(1 - lambd*eta)
			p.AddScaledInPlace(g, -eta)
			if mu != 1 {
				ax.AddScaledInPlace(p.Sub(ax), mu)
			} else {
				ax.CopyFrom(p)
			}
			st["eta"].FillInPlace(lr / math.Pow(1+lambd*lr*step, alpha))
			st["mu"].FillInPlace(1 / math.Max(1, step-t0))
		})
	}
}

// Code below: the methods every optimizer declares itself (see nilopt.go).

func (x *Adamax) b(op string) *base {
	if x == nil || x.kind == nil {
		nilOptimizer("Adamax", op)
	}
	return &x.base
}

// LR returns the learning rate (the first parameter group's).
func (x *Adamax) LR() float64 { return x.b("LR").LR() }

// SetLR sets every parameter group's learning rate.
func (x *Adamax) SetLR(lr float64) { x.b("SetLR").SetLR(lr) }

// ZeroGrad clears the parameters' gradients (set to none, as PyTorch's default).
func (x *Adamax) ZeroGrad() { x.b("ZeroGrad").ZeroGrad() }

// StateDict returns the state with torch's keys (see Optimizer).
func (x *Adamax) StateDict() map[string]*ember.Tensor { return x.b("StateDict").StateDict() }

// LoadStateDict loads a StateDict (from ember or torch).
func (x *Adamax) LoadStateDict(sd map[string]*ember.Tensor) error {
	return x.b("LoadStateDict").LoadStateDict(sd)
}

// ParamGroups returns the optimizer's parameter groups (torch's
// param_groups), live: a group's SetLR and Set change the optimizer.
func (x *Adamax) ParamGroups() []*ParamGroup { return x.b("ParamGroups").paramGroups() }

// AddParamGroup adds a parameter group (torch's add_param_group), as
// SGD.AddParamGroup.
func (x *Adamax) AddParamGroup(g Group) {
	x.b("AddParamGroup").addGroup("optim.Adamax.AddParamGroup", g)
}

func (n *NAdam) b(op string) *base {
	if n == nil || n.kind == nil {
		nilOptimizer("NAdam", op)
	}
	return &n.base
}

// LR returns the learning rate (the first parameter group's).
func (n *NAdam) LR() float64 { return n.b("LR").LR() }

// SetLR sets every parameter group's learning rate.
func (n *NAdam) SetLR(lr float64) { n.b("SetLR").SetLR(lr) }

// ZeroGrad clears the parameters' gradients (set to none, as PyTorch's default).
func (n *NAdam) ZeroGrad() { n.b("ZeroGrad").ZeroGrad() }

// StateDict returns the state with torch's keys (see Optimizer).
func (n *NAdam) StateDict() map[string]*ember.Tensor { return n.b("StateDict").StateDict() }

// LoadStateDict loads a StateDict (from ember or torch).
func (n *NAdam) LoadStateDict(sd map[string]*ember.Tensor) error {
	return n.b("LoadStateDict").LoadStateDict(sd)
}

// ParamGroups returns the optimizer's parameter groups (torch's
// param_groups), live: a group's SetLR and Set change the optimizer.
func (n *NAdam) ParamGroups() []*ParamGroup { return n.b("ParamGroups").paramGroups() }

// AddParamGroup adds a parameter group (torch's add_param_group), as
// SGD.AddParamGroup.
func (n *NAdam) AddParamGroup(g Group) {
	n.b("AddParamGroup").addGroup("optim.NAdam.AddParamGroup", g)
}

func (r *RAdam) b(op string) *base {
	if r == nil || r.kind == nil {
		nilOptimizer("RAdam", op)
	}
	return &r.base
}

// LR returns the learning rate (the first parameter group's).
func (r *RAdam) LR() float64 { return r.b("LR").LR() }

// SetLR sets every parameter group's learning rate.
func (r *RAdam) SetLR(lr float64) { r.b("SetLR").SetLR(lr) }

// ZeroGrad clears the parameters' gradients (set to none, as PyTorch's default).
func (r *RAdam) ZeroGrad() { r.b("ZeroGrad").ZeroGrad() }

// StateDict returns the state with torch's keys (see Optimizer).
func (r *RAdam) StateDict() map[string]*ember.Tensor { return r.b("StateDict").StateDict() }

// LoadStateDict loads a StateDict (from ember or torch).
func (r *RAdam) LoadStateDict(sd map[string]*ember.Tensor) error {
	return r.b("LoadStateDict").LoadStateDict(sd)
}

// ParamGroups returns the optimizer's parameter groups (torch's
// param_groups), live: a group's SetLR and Set change the optimizer.
func (r *RAdam) ParamGroups() []*ParamGroup { return r.b("ParamGroups").paramGroups() }

// AddParamGroup adds a parameter group (torch's add_param_group), as
// SGD.AddParamGroup.
func (r *RAdam) AddParamGroup(g Group) {
	r.b("AddParamGroup").addGroup("optim.RAdam.AddParamGroup", g)
}

func (a *Adadelta) b(op string) *base {
	if a == nil || a.kind == nil {
		nilOptimizer("Adadelta", op)
	}
	return &a.base
}

// LR returns the learning rate (the first parameter group's).
func (a *Adadelta) LR() float64 { return a.b("LR").LR() }

// SetLR sets every parameter group's learning rate.
func (a *Adadelta) SetLR(lr float64) { a.b("SetLR").SetLR(lr) }

// ZeroGrad clears the parameters' gradients (set to none, as PyTorch's default).
func (a *Adadelta) ZeroGrad() { a.b("ZeroGrad").ZeroGrad() }

// StateDict returns the state with torch's keys (see Optimizer).
func (a *Adadelta) StateDict() map[string]*ember.Tensor { return a.b("StateDict").StateDict() }

// LoadStateDict loads a StateDict (from ember or torch).
func (a *Adadelta) LoadStateDict(sd map[string]*ember.Tensor) error {
	return a.b("LoadStateDict").LoadStateDict(sd)
}

// ParamGroups returns the optimizer's parameter groups (torch's
// param_groups), live: a group's SetLR and Set change the optimizer.
func (a *Adadelta) ParamGroups() []*ParamGroup { return a.b("ParamGroups").paramGroups() }

// AddParamGroup adds a parameter group (torch's add_param_group), as
// SGD.AddParamGroup.
func (a *Adadelta) AddParamGroup(g Group) {
	a.b("AddParamGroup").addGroup("optim.Adadelta.AddParamGroup", g)
}

func (r *Rprop) b(op string) *base {
	if r == nil || r.kind == nil {
		nilOptimizer("Rprop", op)
	}
	return &r.base
}

// LR returns the learning rate (the first parameter group's).
func (r *Rprop) LR() float64 { return r.b("LR").LR() }

// SetLR sets every parameter group's learning rate.
func (r *Rprop) SetLR(lr float64) { r.b("SetLR").SetLR(lr) }

// ZeroGrad clears the parameters' gradients (set to none, as PyTorch's default).
func (r *Rprop) ZeroGrad() { r.b("ZeroGrad").ZeroGrad() }

// StateDict returns the state with torch's keys (see Optimizer).
func (r *Rprop) StateDict() map[string]*ember.Tensor { return r.b("StateDict").StateDict() }

// LoadStateDict loads a StateDict (from ember or torch).
func (r *Rprop) LoadStateDict(sd map[string]*ember.Tensor) error {
	return r.b("LoadStateDict").LoadStateDict(sd)
}

// ParamGroups returns the optimizer's parameter groups (torch's
// param_groups), live: a group's SetLR and Set change the optimizer.
func (r *Rprop) ParamGroups() []*ParamGroup { return r.b("ParamGroups").paramGroups() }

// AddParamGroup adds a parameter group (torch's add_param_group), as
// SGD.AddParamGroup.
func (r *Rprop) AddParamGroup(g Group) {
	r.b("AddParamGroup").addGroup("optim.Rprop.AddParamGroup", g)
}

func (a *ASGD) b(op string) *base {
	if a == nil || a.kind == nil {
		nilOptimizer("ASGD", op)
	}
	return &a.base
}

// LR returns the learning rate (the first parameter group's).
func (a *ASGD) LR() float64 { return a.b("LR").LR() }

// SetLR sets every parameter group's learning rate.
func (a *ASGD) SetLR(lr float64) { a.b("SetLR").SetLR(lr) }

// ZeroGrad clears the parameters' gradients (set to none, as PyTorch's default).
func (a *ASGD) ZeroGrad() { a.b("ZeroGrad").ZeroGrad() }

// StateDict returns the state with torch's keys (see Optimizer).
func (a *ASGD) StateDict() map[string]*ember.Tensor { return a.b("StateDict").StateDict() }

// LoadStateDict loads a StateDict (from ember or torch).
func (a *ASGD) LoadStateDict(sd map[string]*ember.Tensor) error {
	return a.b("LoadStateDict").LoadStateDict(sd)
}

// ParamGroups returns the optimizer's parameter groups (torch's
// param_groups), live: a group's SetLR and Set change the optimizer.
func (a *ASGD) ParamGroups() []*ParamGroup { return a.b("ParamGroups").paramGroups() }

// AddParamGroup adds a parameter group (torch's add_param_group), as
// SGD.AddParamGroup.
func (a *ASGD) AddParamGroup(g Group) {
	a.b("AddParamGroup").addGroup("optim.ASGD.AddParamGroup", g)
}
