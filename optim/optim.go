// Package optim holds optimizers (SGD, Adam, AdamW, RMSprop, Adagrad) and learning-rate
// schedules (StepLR, MultiStepLR, ExponentialLR, LinearLR, LambdaLR,
// CosineAnnealingLR, CosineAnnealingWarmRestarts, OneCycleLR, SequentialLR,
// ReduceLROnPlateau) with PyTorch's update rules and state-dict layout.
//
// An optimizer updates its parameters in place (through detached views) from
// their gradients, p.Grad(), as filled by loss.Backward(); the parameters
// keep their identity, so the module, its state dict and the optimizer
// always see the same tensors. A training step is
//
//	opt.ZeroGrad()
//	loss := crit.Loss(model.Forward(x), y)
//	loss.Backward()
//	opt.Step()
package optim

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// Param is one parameter the optimizer updates, with its name.
type Param struct {
	Name   string
	Tensor *ember.Tensor
}

// ModuleParams returns m's parameters (in registration order) as optimizer
// Params. Call it after m.To(dev): To replaces tensors it moves.
func ModuleParams(m nn.Module) []Param {
	named := m.NamedParameters()
	out := make([]Param, len(named))
	for i, n := range named {
		out[i] = Param{n.Name, n.Tensor}
	}
	return out
}

// GradFunc returns the gradient of parameter i (nil: no gradient, skip it).
// A nil GradFunc means p.Grad(), the gradient Backward accumulated.
type GradFunc func(i int, p *ember.Tensor) *ember.Tensor

// Optimizer updates parameters from their gradients.
type Optimizer interface {
	// Step applies one update in place; parameters without a gradient are
	// skipped.
	Step()
	// ZeroGrad clears every parameter's gradient (set_to_none=True,
	// PyTorch 2's default; 1.13's zeroed them): a parameter that gets no
	// gradient before the next Step is skipped by it, its momentum and
	// weight decay included, as in PyTorch 2.
	ZeroGrad()
	// LR returns the learning rate; SetLR changes it (schedules call it).
	LR() float64
	SetLR(lr float64)
	// StateDict returns the per-parameter state as "state.<i>.<name>" tensors
	// and the hyperparameters as "param_groups.0.<name>" scalars, so it can be
	// stored with weights.SaveSafetensors. The state tensors are the live
	// ones, updated by later steps.
	StateDict() map[string]*ember.Tensor
	// LoadStateDict restores a StateDict (copying its tensors).
	LoadStateDict(sd map[string]*ember.Tensor) error
}

type base struct {
	params []Param
	grad   GradFunc
	lr     float64
	state  []map[string]*ember.Tensor
	hyper  map[string]*float64
	// initialLR is torch's group "initial_lr" (0: not yet set), which the
	// first schedule sets (see initialLR in sched.go)
	initialLR float64
}

func (b *base) initial() float64 {
	if b.initialLR == 0 {
		b.initialLR = b.lr
	}
	return b.initialLR
}

// hyperErr panics with PyTorch's ValueError for a hyper-parameter out of
// range (NaN included: the checks are written so that NaN fails them).
func hyperErr(op string, ok bool, format string, args ...any) {
	if !ok {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf(format, args...)})
	}
}

func newBase(op string, params []Param, grad GradFunc, lr float64) base {
	hyperErr(op, lr >= 0, "Invalid learning rate: %v", lr)
	hyperErr(op, len(params) > 0, "optimizer got an empty parameter list")
	first := map[*ember.Tensor]string{}
	for i, p := range params {
		name := p.Name
		if name == "" {
			name = strconv.Itoa(i)
		}
		hyperErr(op, p.Tensor != nil, "parameter %q is a nil tensor", name)
		if was, dup := first[p.Tensor]; dup {
			// PyTorch 1.13 warns that this "will cause an error"; each step would update it twice
			hyperErr(op, false, "optimizer contains a parameter group with duplicate parameters: %q is the same tensor as %q", name, was)
		}
		first[p.Tensor] = name
		if dt := p.Tensor.DType(); !dt.IsFloat() {
			panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{dt}, Msg: fmt.Sprintf("optimizer can only optimize Tensors of floating point dtype, parameter %q is %v", name, dt)})
		}
		hyperErr(op, p.Tensor.IsLeaf(), "can't optimize a non-leaf Tensor (parameter %q is the output of %s)", name, p.Tensor.GradFn())
	}
	if grad == nil {
		grad = func(_ int, p *ember.Tensor) *ember.Tensor { return p.Grad() }
	}
	b := base{params: params, grad: grad, lr: lr, state: make([]map[string]*ember.Tensor, len(params))}
	for i := range b.state {
		b.state[i] = map[string]*ember.Tensor{}
	}
	return b
}

func (b *base) LR() float64      { return b.lr }
func (b *base) SetLR(lr float64) { b.lr = lr }

func (b *base) ZeroGrad() {
	for _, p := range b.params {
		p.Tensor.ZeroGrad()
	}
}

func (b *base) StateDict() map[string]*ember.Tensor {
	out := map[string]*ember.Tensor{}
	for i, st := range b.state {
		for k, v := range st {
			out[fmt.Sprintf("state.%d.%s", i, k)] = v
		}
	}
	out["param_groups.0.lr"] = ember.Scalar(b.lr, ember.Dtype(ember.Float64))
	if b.initialLR != 0 {
		out["param_groups.0.initial_lr"] = ember.Scalar(b.initialLR, ember.Dtype(ember.Float64))
	}
	for k, v := range b.hyper {
		out["param_groups.0."+k] = ember.Scalar(*v, ember.Dtype(ember.Float64))
	}
	return out
}

func (b *base) LoadStateDict(sd map[string]*ember.Tensor) error {
	if _, ok := sd["param_groups.0.lr"]; !ok {
		return fmt.Errorf("optim: the state dict has no param_groups.0.lr (not an optimizer's StateDict?)")
	}
	state := make([]map[string]*ember.Tensor, len(b.params))
	for i := range state {
		state[i] = map[string]*ember.Tensor{}
	}
	hyper := map[string]float64{}
	var err error
	// everything read before anything is set: a bad entry (a meta or
	// released tensor panics when read) changes nothing
	if perr := ember.Try(func() { err = b.readState(sd, state, hyper) }); perr != nil {
		return fmt.Errorf("optim: load state dict: %w", perr)
	}
	if err != nil {
		return err
	}
	b.lr = hyper["lr"]
	if v, ok := hyper["initial_lr"]; ok && v > 0 {
		b.initialLR = v
	}
	for k, p := range b.hyper {
		if v, ok := hyper[k]; ok {
			*p = v
		}
	}
	b.state = state
	return nil
}

// readState parses sd into per-parameter state and hyper-parameters.
func (b *base) readState(sd map[string]*ember.Tensor, state []map[string]*ember.Tensor, hyper map[string]float64) error {
	for k, v := range sd {
		if v == nil {
			return fmt.Errorf("optim: %s is a nil tensor", k)
		}
		switch {
		case strings.HasPrefix(k, "state."):
			rest := strings.TrimPrefix(k, "state.")
			is, name, ok := strings.Cut(rest, ".")
			i, err := strconv.Atoi(is)
			if !ok || err != nil || i < 0 || i >= len(state) {
				return fmt.Errorf("optim: state key %q does not name one of %d parameters", k, len(state))
			}
			p := b.params[i].Tensor
			if name != "step" && !v.Shape().Equal(p.Shape()) {
				return fmt.Errorf("optim: %s has shape %v, parameter %s has %v", k, v.Shape(), b.params[i].Name, p.Shape())
			}
			if name == "step" {
				// a count: one finite non-negative whole number, kept
				// as a float64 on the CPU (torch 1.13 writes float32)
				if v.NumElements() != 1 {
					return fmt.Errorf("optim: %s has shape %v, want a scalar step count", k, v.Shape())
				}
				if x := v.Item(); !(x >= 0 && x <= 1<<53 && x == math.Trunc(x)) {
					return fmt.Errorf("optim: %s is %v, want a step count", k, x)
				}
				v = v.Reshape().Cast(ember.Float64).CPU()
			} else {
				v = v.Cast(p.DType()).To(p.Device())
			}
			state[i][name] = v.Detach().Clone()
		case strings.HasPrefix(k, "param_groups.0."):
			if v.NumElements() != 1 {
				return fmt.Errorf("optim: %s is not a scalar", k)
			}
			x := v.Item()
			if math.IsNaN(x) || math.IsInf(x, 0) || (k == "param_groups.0.lr" && x < 0) {
				return fmt.Errorf("optim: %s is %v", k, x)
			}
			hyper[strings.TrimPrefix(k, "param_groups.0.")] = x
		default:
			return fmt.Errorf("optim: unexpected state key %q", k)
		}
	}
	return nil
}

// each calls f for every parameter with a gradient, with a detached view
// of the parameter (its storage, outside autograd) that f updates in place.
// Detached views record no graph, without ember.NoGrad.
func (b *base) each(f func(i int, p, g *ember.Tensor, st map[string]*ember.Tensor)) {
	for i, pr := range b.params {
		g := b.grad(i, pr.Tensor)
		if g == nil {
			continue
		}
		f(i, pr.Tensor.Detach(), g.Detach(), b.state[i])
	}
}

// SGD is stochastic gradient descent with momentum, dampening, Nesterov
// momentum and weight decay, as torch.optim.SGD.
//
// Maximize (torch's maximize=True) ascends the gradient instead.
type SGD struct {
	base
	Momentum, Dampening, WeightDecay float64
	Nesterov, Maximize               bool
}

// NewSGD returns an SGD optimizer; grad nil takes gradients from p.Grad().
func NewSGD(params []Param, grad GradFunc, lr, momentum, dampening, weightDecay float64, nesterov bool) *SGD {
	const op = "optim.SGD"
	hyperErr(op, momentum >= 0, "Invalid momentum value: %v", momentum)
	hyperErr(op, weightDecay >= 0, "Invalid weight_decay value: %v", weightDecay)
	hyperErr(op, !nesterov || (momentum > 0 && dampening == 0), "Nesterov momentum requires a momentum and zero dampening")
	s := &SGD{base: newBase(op, params, grad, lr), Momentum: momentum, Dampening: dampening, WeightDecay: weightDecay, Nesterov: nesterov}
	s.hyper = map[string]*float64{"momentum": &s.Momentum, "dampening": &s.Dampening, "weight_decay": &s.WeightDecay}
	return s
}

// Step applies p -= lr·d with d the (momentum-filtered) gradient.
func (s *SGD) Step() {
	s.b("Step").each(func(_ int, p, g *ember.Tensor, st map[string]*ember.Tensor) {
		if s.Maximize {
			g = g.Neg()
		}
		if s.WeightDecay != 0 {
			g = g.Add(p.MulScalar(s.WeightDecay))
		}
		if s.Momentum != 0 {
			buf, ok := st["momentum_buffer"]
			if !ok {
				buf = g.Clone()
				st["momentum_buffer"] = buf
			} else {
				buf.MulScalarInPlace(s.Momentum).AddScaledInPlace(g, 1-s.Dampening)
			}
			if s.Nesterov {
				g = g.Add(buf.MulScalar(s.Momentum))
			} else {
				g = buf
			}
		}
		p.AddScaledInPlace(g, -s.lr)
	})
}

// Adam is torch.optim.Adam (L2 weight decay added to the gradient) or,
// with Decoupled, torch.optim.AdamW (p *= 1 - lr·wd before the update).
// AMSGrad (torch's amsgrad=True) divides by the running maximum of the
// second moment (state "max_exp_avg_sq"); Maximize ascends the gradient.
type Adam struct {
	base
	Beta1, Beta2, Eps, WeightDecay float64
	Decoupled, AMSGrad, Maximize   bool
}

// NewAdam returns Adam with betas (b1, b2), eps and L2 weight decay; grad
// nil takes gradients from p.Grad().
func NewAdam(params []Param, grad GradFunc, lr, b1, b2, eps, weightDecay float64) *Adam {
	return newAdam("optim.Adam", params, grad, lr, b1, b2, eps, weightDecay)
}

func newAdam(op string, params []Param, grad GradFunc, lr, b1, b2, eps, weightDecay float64) *Adam {
	hyperErr(op, eps >= 0, "Invalid epsilon value: %v", eps)
	hyperErr(op, b1 >= 0 && b1 < 1, "Invalid beta parameter at index 0: %v", b1)
	hyperErr(op, b2 >= 0 && b2 < 1, "Invalid beta parameter at index 1: %v", b2)
	hyperErr(op, weightDecay >= 0, "Invalid weight_decay value: %v", weightDecay)
	a := &Adam{base: newBase(op, params, grad, lr), Beta1: b1, Beta2: b2, Eps: eps, WeightDecay: weightDecay}
	a.hyper = map[string]*float64{"beta1": &a.Beta1, "beta2": &a.Beta2, "eps": &a.Eps, "weight_decay": &a.WeightDecay}
	return a
}

// NewAdamW returns AdamW (decoupled weight decay; PyTorch's default 0.01).
func NewAdamW(params []Param, grad GradFunc, lr, b1, b2, eps, weightDecay float64) *Adam {
	a := newAdam("optim.AdamW", params, grad, lr, b1, b2, eps, weightDecay)
	a.Decoupled = true
	return a
}

// Step applies one Adam update with bias correction.
func (a *Adam) Step() {
	a.b("Step").each(func(_ int, p, g *ember.Tensor, st map[string]*ember.Tensor) {
		// the count is updated in place, so a StateDict taken earlier
		// follows it as it follows exp_avg
		s, ok := st["step"]
		if !ok {
			s = ember.Scalar(0, ember.Dtype(ember.Float64))
			st["step"] = s
		}
		s.AddScalarInPlace(1)
		step := s.Item()
		if a.Maximize {
			g = g.Neg()
		}
		if a.WeightDecay != 0 {
			if a.Decoupled {
				p.MulScalarInPlace(1 - a.lr*a.WeightDecay)
			} else {
				g = g.Add(p.MulScalar(a.WeightDecay))
			}
		}
		m, ok := st["exp_avg"]
		if !ok {
			m = ember.ZerosLike(p)
			st["exp_avg"] = m
		}
		v, ok := st["exp_avg_sq"]
		if !ok {
			v = ember.ZerosLike(p)
			st["exp_avg_sq"] = v
		}
		m.MulScalarInPlace(a.Beta1).AddScaledInPlace(g, 1-a.Beta1)
		v.MulScalarInPlace(a.Beta2).AddcmulInPlace(g, g, 1-a.Beta2)
		bc1 := 1 - math.Pow(a.Beta1, step)
		bc2 := 1 - math.Pow(a.Beta2, step)
		if a.AMSGrad {
			vmax, ok := st["max_exp_avg_sq"]
			if !ok {
				vmax = ember.ZerosLike(p)
				st["max_exp_avg_sq"] = vmax
			}
			vmax.CopyFrom(vmax.Maximum(v))
			v = vmax
		}
		denom := v.Sqrt().DivScalar(math.Sqrt(bc2)).AddScalar(a.Eps)
		p.AddcdivInPlace(m, denom, -a.lr/bc1)
	})
}
