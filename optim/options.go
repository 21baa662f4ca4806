package optim

import (
	"fmt"
	"slices"

	"github.com/emberml/ember"
)

// Options are the hyper-parameters of the option-form constructors
// (SGDWith, AdamWith, ..., SGDGroups, ...); fields not set by an Option
// keep PyTorch's defaults for the optimizer. A ParamGroup's Options are
// its values.
type Options struct {
	LR, Momentum, Dampening, WeightDecay float64
	Nesterov, AMSGrad, Maximize          bool
	Beta1, Beta2, Eps                    float64
	// RMSprop's alpha and centered, Adagrad's lr_decay and
	// initial_accumulator_value
	Alpha, LRDecay, InitialAccumulator float64
	Centered                           bool
	Grad                               GradFunc

	set []string // the torch names of the options given
}

// Option sets one hyper-parameter.
type Option func(*Options)

// LR sets the learning rate.
func LR(lr float64) Option { return func(o *Options) { o.LR = lr; o.mark("lr") } }

// Momentum sets SGD's and RMSprop's momentum (default 0).
func Momentum(m float64) Option { return func(o *Options) { o.Momentum = m; o.mark("momentum") } }

// Dampening sets SGD's dampening (default 0).
func Dampening(d float64) Option { return func(o *Options) { o.Dampening = d; o.mark("dampening") } }

// Nesterov turns on SGD's Nesterov momentum.
func Nesterov() Option { return func(o *Options) { o.Nesterov = true; o.mark("nesterov") } }

// AMSGrad turns on Adam's and AdamW's AMSGrad variant (amsgrad=True).
func AMSGrad() Option { return func(o *Options) { o.AMSGrad = true; o.mark("amsgrad") } }

// Maximize makes the optimizer ascend the gradient (maximize=True).
func Maximize() Option { return func(o *Options) { o.Maximize = true; o.mark("maximize") } }

// WeightDecay sets the weight decay (default 0; AdamW's 0.01).
func WeightDecay(wd float64) Option {
	return func(o *Options) { o.WeightDecay = wd; o.mark("weight_decay") }
}

// Betas sets Adam's coefficients (default 0.9, 0.999).
func Betas(b1, b2 float64) Option {
	return func(o *Options) { o.Beta1, o.Beta2 = b1, b2; o.mark("beta1"); o.mark("beta2") }
}

// Eps sets the eps of Adam (default 1e-8), RMSprop (1e-8) and Adagrad
// (1e-10).
func Eps(eps float64) Option { return func(o *Options) { o.Eps = eps; o.mark("eps") } }

// Alpha sets RMSprop's smoothing constant (default 0.99).
func Alpha(a float64) Option { return func(o *Options) { o.Alpha = a; o.mark("alpha") } }

// Centered turns on RMSprop's centered variant (centered=True).
func Centered() Option { return func(o *Options) { o.Centered = true; o.mark("centered") } }

// LRDecay sets Adagrad's learning-rate decay (default 0).
func LRDecay(d float64) Option { return func(o *Options) { o.LRDecay = d; o.mark("lr_decay") } }

// InitialAccumulator sets Adagrad's initial_accumulator_value (default 0).
func InitialAccumulator(v float64) Option {
	return func(o *Options) { o.InitialAccumulator = v; o.mark("initial_accumulator_value") }
}

// WithGrad takes gradients from f instead of each parameter's Grad(); it
// is the whole optimizer's, not a group's.
func WithGrad(f GradFunc) Option { return func(o *Options) { o.Grad = f; o.mark("grad") } }

func (o *Options) mark(name string) {
	if !slices.Contains(o.set, name) {
		o.set = append(o.set, name)
	}
}

// floats and flags name the fields of o by their torch names (Betas'
// two as beta1 and beta2, as the state dicts write them).
func (o *Options) floats() map[string]*float64 {
	return map[string]*float64{"lr": &o.LR, "momentum": &o.Momentum, "dampening": &o.Dampening,
		"weight_decay": &o.WeightDecay, "beta1": &o.Beta1, "beta2": &o.Beta2, "eps": &o.Eps,
		"alpha": &o.Alpha, "lr_decay": &o.LRDecay, "initial_accumulator_value": &o.InitialAccumulator}
}

func (o *Options) flags() map[string]*bool {
	return map[string]*bool{"nesterov": &o.Nesterov, "amsgrad": &o.AMSGrad, "maximize": &o.Maximize, "centered": &o.Centered}
}

// torchName is the keyword torch's constructors take for option name.
func torchName(name string) string {
	if name == "beta1" || name == "beta2" {
		return "betas"
	}
	return name
}

// options applies opts to def; an option the optimizer op does not take
// (one not in allowed: Betas for SGD, Momentum for Adam) panics with a
// *ember.ValueError, as torch's constructors refuse an unexpected keyword
// argument, rather than being ignored.
func options(op string, def Options, opts []Option, allowed []string) Options {
	def.set = nil
	for _, o := range opts {
		if o == nil {
			panic(&ember.ValueError{Op: op, Msg: "nil Option"})
		}
		o(&def)
	}
	for _, name := range def.set {
		if !slices.Contains(allowed, name) {
			panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("got an unexpected option %s (it belongs to another optimizer)", torchName(name))})
		}
	}
	return def
}

// Tensors makes params of plain tensors (torch.optim's list of tensors).
func Tensors(ts ...*ember.Tensor) []Param {
	out := make([]Param, len(ts))
	for i, t := range ts {
		out[i] = Param{Tensor: t}
	}
	return out
}
