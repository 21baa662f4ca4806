package optim

import "github.com/emberml/ember"

// Options are the hyper-parameters of the option-form constructors
// (SGDWith, AdamWith, AdamWWith); fields not set by an Option keep
// PyTorch's defaults for the optimizer.
type Options struct {
	LR, Momentum, Dampening, WeightDecay float64
	Nesterov                             bool
	Beta1, Beta2, Eps                    float64
	Grad                                 GradFunc
}

// Option sets one hyper-parameter.
type Option func(*Options)

// LR sets the learning rate.
func LR(lr float64) Option { return func(o *Options) { o.LR = lr } }

// Momentum sets SGD's momentum (default 0).
func Momentum(m float64) Option { return func(o *Options) { o.Momentum = m } }

// Dampening sets SGD's dampening (default 0).
func Dampening(d float64) Option { return func(o *Options) { o.Dampening = d } }

// Nesterov turns on SGD's Nesterov momentum.
func Nesterov() Option { return func(o *Options) { o.Nesterov = true } }

// WeightDecay sets the weight decay (default 0; AdamW's 0.01).
func WeightDecay(wd float64) Option { return func(o *Options) { o.WeightDecay = wd } }

// Betas sets Adam's coefficients (default 0.9, 0.999).
func Betas(b1, b2 float64) Option { return func(o *Options) { o.Beta1, o.Beta2 = b1, b2 } }

// Eps sets Adam's eps (default 1e-8).
func Eps(eps float64) Option { return func(o *Options) { o.Eps = eps } }

// WithGrad takes gradients from f instead of each parameter's Grad().
func WithGrad(f GradFunc) Option { return func(o *Options) { o.Grad = f } }

func options(def Options, opts []Option) Options {
	for _, o := range opts {
		o(&def)
	}
	return def
}

// SGDWith is torch.optim.SGD(params, lr, ...): momentum, dampening,
// weight decay 0 and no Nesterov unless options say otherwise.
//
//	opt := optim.SGDWith(optim.ModuleParams(m), 0.1, optim.Momentum(0.9), optim.WeightDecay(5e-4))
func SGDWith(params []Param, lr float64, opts ...Option) *SGD {
	o := options(Options{LR: lr}, opts)
	return NewSGD(params, o.Grad, o.LR, o.Momentum, o.Dampening, o.WeightDecay, o.Nesterov)
}

// AdamWith is torch.optim.Adam(params, ...): lr 1e-3, betas (0.9, 0.999),
// eps 1e-8, weight decay 0 unless options say otherwise.
func AdamWith(params []Param, opts ...Option) *Adam {
	o := options(Options{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, opts)
	return NewAdam(params, o.Grad, o.LR, o.Beta1, o.Beta2, o.Eps, o.WeightDecay)
}

// AdamWWith is torch.optim.AdamW(params, ...): AdamWith's defaults with
// decoupled weight decay 0.01.
func AdamWWith(params []Param, opts ...Option) *Adam {
	o := options(Options{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}, opts)
	return NewAdamW(params, o.Grad, o.LR, o.Beta1, o.Beta2, o.Eps, o.WeightDecay)
}

// Tensors makes params of plain tensors (torch.optim's list of tensors).
func Tensors(ts ...*ember.Tensor) []Param {
	out := make([]Param, len(ts))
	for i, t := range ts {
		out[i] = Param{Tensor: t}
	}
	return out
}
