package optim

import (
	"fmt"
	"slices"

	"github.com/emberml/ember"
)

// Options are the hyper-parameters of the option-form constructors
// (SGDWith, AdamWith, AdamWWith); fields not set by an Option keep
// PyTorch's defaults for the optimizer.
type Options struct {
	LR, Momentum, Dampening, WeightDecay float64
	Nesterov, AMSGrad, Maximize          bool
	Beta1, Beta2, Eps                    float64
	Grad                                 GradFunc

	set []string // the torch names of the options given
}

// Option sets one hyper-parameter.
type Option func(*Options)

// LR sets the learning rate.
func LR(lr float64) Option { return func(o *Options) { o.LR = lr } }

// Momentum sets SGD's momentum (default 0).
func Momentum(m float64) Option { return func(o *Options) { o.Momentum = m; o.mark("momentum") } }

// Dampening sets SGD's dampening (default 0).
func Dampening(d float64) Option { return func(o *Options) { o.Dampening = d; o.mark("dampening") } }

// Nesterov turns on SGD's Nesterov momentum.
func Nesterov() Option { return func(o *Options) { o.Nesterov = true; o.mark("nesterov") } }

// AMSGrad turns on Adam's and AdamW's AMSGrad variant (amsgrad=True).
func AMSGrad() Option { return func(o *Options) { o.AMSGrad = true; o.mark("amsgrad") } }

// Maximize makes the optimizer ascend the gradient (maximize=True).
func Maximize() Option { return func(o *Options) { o.Maximize = true } }

// WeightDecay sets the weight decay (default 0; AdamW's 0.01).
func WeightDecay(wd float64) Option { return func(o *Options) { o.WeightDecay = wd } }

// Betas sets Adam's coefficients (default 0.9, 0.999).
func Betas(b1, b2 float64) Option {
	return func(o *Options) { o.Beta1, o.Beta2 = b1, b2; o.mark("betas") }
}

// Eps sets Adam's eps (default 1e-8).
func Eps(eps float64) Option { return func(o *Options) { o.Eps = eps; o.mark("eps") } }

// WithGrad takes gradients from f instead of each parameter's Grad().
func WithGrad(f GradFunc) Option { return func(o *Options) { o.Grad = f } }

func (o *Options) mark(name string) { o.set = append(o.set, name) }

// options applies opts to def; an option the optimizer op does not take
// (foreign: Betas for SGD, Momentum for Adam) panics with a
// *ember.ValueError, as torch's constructors refuse an unexpected keyword
// argument, rather than being ignored.
func options(op string, def Options, opts []Option, foreign ...string) Options {
	for _, o := range opts {
		if o == nil {
			panic(&ember.ValueError{Op: op, Msg: "nil Option"})
		}
		o(&def)
	}
	for _, name := range def.set {
		if slices.Contains(foreign, name) {
			panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("got an unexpected option %s (it belongs to another optimizer)", name)})
		}
	}
	return def
}

// SGDWith is torch.optim.SGD(params, lr, ...): momentum, dampening,
// weight decay 0 and no Nesterov unless options say otherwise.
//
//	opt := optim.SGDWith(optim.ModuleParams(m), 0.1, optim.Momentum(0.9), optim.WeightDecay(5e-4))
func SGDWith(params []Param, lr float64, opts ...Option) *SGD {
	o := options("optim.SGDWith", Options{LR: lr}, opts, "betas", "eps", "amsgrad")
	s := NewSGD(params, o.Grad, o.LR, o.Momentum, o.Dampening, o.WeightDecay, o.Nesterov)
	s.Maximize = o.Maximize
	return s
}

// AdamWith is torch.optim.Adam(params, ...): lr 1e-3, betas (0.9, 0.999),
// eps 1e-8, weight decay 0 unless options say otherwise.
func AdamWith(params []Param, opts ...Option) *Adam {
	o := options("optim.AdamWith", Options{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, opts, "momentum", "dampening", "nesterov")
	a := NewAdam(params, o.Grad, o.LR, o.Beta1, o.Beta2, o.Eps, o.WeightDecay)
	a.AMSGrad, a.Maximize = o.AMSGrad, o.Maximize
	return a
}

// AdamWWith is torch.optim.AdamW(params, ...): AdamWith's defaults with
// decoupled weight decay 0.01.
func AdamWWith(params []Param, opts ...Option) *Adam {
	o := options("optim.AdamWWith", Options{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}, opts, "momentum", "dampening", "nesterov")
	a := NewAdamW(params, o.Grad, o.LR, o.Beta1, o.Beta2, o.Eps, o.WeightDecay)
	a.AMSGrad, a.Maximize = o.AMSGrad, o.Maximize
	return a
}

// Tensors makes params of plain tensors (torch.optim's list of tensors).
func Tensors(ts ...*ember.Tensor) []Param {
	out := make([]Param, len(ts))
	for i, t := range ts {
		out[i] = Param{Tensor: t}
	}
	return out
}
