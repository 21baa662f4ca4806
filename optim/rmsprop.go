package optim

import (
	"github.com/emberml/ember"
)

// RMSprop is torch.optim.RMSprop: the gradient divided by the root of a
// running average (Alpha) of its square (minus the square of its running
// average when Centered), plus Eps, with optional momentum, L2 weight
// decay and Maximize.
type RMSprop struct {
	base
	Alpha, Eps, WeightDecay, Momentum float64
	Centered, Maximize                bool
}

// RMSpropWith is torch.optim.RMSprop(params, ...): lr 0.01, alpha 0.99,
// eps 1e-8, weight decay and momentum 0 unless options say otherwise (LR,
// Eps, WeightDecay, Momentum, Maximize, WithGrad); set Alpha and Centered
// on the result.
func RMSpropWith(params []Param, opts ...Option) *RMSprop {
	const op = "optim.RMSprop"
	o := options(op, Options{LR: 0.01, Eps: 1e-8}, opts, "dampening", "nesterov", "betas", "amsgrad")
	hyperErr(op, o.Eps >= 0, "Invalid epsilon value: %v", o.Eps)
	hyperErr(op, o.Momentum >= 0, "Invalid momentum value: %v", o.Momentum)
	hyperErr(op, o.WeightDecay >= 0, "Invalid weight_decay value: %v", o.WeightDecay)
	r := &RMSprop{base: newBase(op, params, o.Grad, o.LR), Alpha: 0.99, Eps: o.Eps, WeightDecay: o.WeightDecay, Momentum: o.Momentum, Maximize: o.Maximize}
	r.hyper = map[string]*float64{"alpha": &r.Alpha, "eps": &r.Eps, "weight_decay": &r.WeightDecay, "momentum": &r.Momentum}
	return r
}

func (r *RMSprop) b(op string) *base {
	if r == nil {
		nilOptimizer("RMSprop", op)
	}
	return &r.base
}

// Step applies one RMSprop update.
func (r *RMSprop) Step() {
	b := r.b("Step")
	hyperErr("optim.RMSprop", r.Alpha >= 0, "Invalid alpha value: %v", r.Alpha)
	b.each(func(_ int, p, g *ember.Tensor, st map[string]*ember.Tensor) {
		if r.Maximize {
			g = g.Neg()
		}
		count(st)
		if r.WeightDecay != 0 {
			g = g.Add(p.MulScalar(r.WeightDecay))
		}
		sq := stateZeros(st, "square_avg", p)
		sq.MulScalarInPlace(r.Alpha).AddcmulInPlace(g, g, 1-r.Alpha)
		var avg *ember.Tensor
		if r.Centered {
			ga := stateZeros(st, "grad_avg", p)
			ga.MulScalarInPlace(r.Alpha).AddScaledInPlace(g, 1-r.Alpha)
			avg = sq.Sub(ga.Mul(ga)).Sqrt()
		} else {
			avg = sq.Sqrt()
		}
		avg = avg.AddScalar(r.Eps)
		if r.Momentum > 0 {
			buf := stateZeros(st, "momentum_buffer", p)
			buf.MulScalarInPlace(r.Momentum).AddcdivInPlace(g, avg, 1)
			p.AddScaledInPlace(buf, -r.lr)
		} else {
			p.AddcdivInPlace(g, avg, -r.lr)
		}
	})
}

// LR returns the learning rate.
func (r *RMSprop) LR() float64 { return r.b("LR").LR() }

// SetLR sets the learning rate (schedulers call it).
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
// Maximize.
type Adagrad struct {
	base
	LRDecay, WeightDecay, InitialAccumulator, Eps float64
	Maximize                                      bool
}

// AdagradWith is torch.optim.Adagrad(params, ...): lr 0.01, eps 1e-10,
// weight decay 0 unless options say otherwise (LR, Eps, WeightDecay,
// Maximize, WithGrad); set LRDecay and InitialAccumulator on the result
// before the first Step.
func AdagradWith(params []Param, opts ...Option) *Adagrad {
	const op = "optim.Adagrad"
	o := options(op, Options{LR: 0.01, Eps: 1e-10}, opts, "momentum", "dampening", "nesterov", "betas", "amsgrad")
	hyperErr(op, o.Eps >= 0, "Invalid epsilon value: %v", o.Eps)
	hyperErr(op, o.WeightDecay >= 0, "Invalid weight_decay value: %v", o.WeightDecay)
	a := &Adagrad{base: newBase(op, params, o.Grad, o.LR), Eps: o.Eps, WeightDecay: o.WeightDecay, Maximize: o.Maximize}
	a.hyper = map[string]*float64{"lr_decay": &a.LRDecay, "eps": &a.Eps, "weight_decay": &a.WeightDecay, "initial_accumulator_value": &a.InitialAccumulator}
	return a
}

func (a *Adagrad) b(op string) *base {
	if a == nil {
		nilOptimizer("Adagrad", op)
	}
	return &a.base
}

// Step applies one Adagrad update.
func (a *Adagrad) Step() {
	b := a.b("Step")
	hyperErr("optim.Adagrad", a.LRDecay >= 0, "Invalid lr_decay value: %v", a.LRDecay)
	hyperErr("optim.Adagrad", a.InitialAccumulator >= 0, "Invalid initial_accumulator_value value: %v", a.InitialAccumulator)
	b.each(func(_ int, p, g *ember.Tensor, st map[string]*ember.Tensor) {
		step := count(st)
		if a.Maximize {
			g = g.Neg()
		}
		if a.WeightDecay != 0 {
			g = g.Add(p.MulScalar(a.WeightDecay))
		}
		sum, ok := st["sum"]
		if !ok {
			sum = ember.ZerosLike(p).AddScalar(a.InitialAccumulator)
			st["sum"] = sum
		}
		clr := a.lr / (1 + (step-1)*a.LRDecay)
		sum.AddcmulInPlace(g, g, 1)
		p.AddcdivInPlace(g, sum.Sqrt().AddScalar(a.Eps), -clr)
	})
}

// LR returns the learning rate.
func (a *Adagrad) LR() float64 { return a.b("LR").LR() }

// SetLR sets the learning rate (schedulers call it).
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
