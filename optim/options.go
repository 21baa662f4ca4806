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
	// NAdam's momentum_decay, Adadelta's rho, Rprop's etas and
	// step_sizes, ASGD's lambd and t0
	MomentumDecay, Rho       float64
	EtaMinus, EtaPlus        float64
	StepSizeMin, StepSizeMax float64
	Lambd, T0                float64
	// LBFGS's max_iter, max_eval (0: max_iter·5/4), tolerance_grad,
	// tolerance_change, history_size and line_search_fn ("" for None)
	MaxIter, MaxEval, HistorySize  int
	ToleranceGrad, ToleranceChange float64
	LineSearchFn                   string
	Grad                           GradFunc

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

// MomentumDecay sets NAdam's momentum_decay (default 4e-3).
func MomentumDecay(d float64) Option {
	return func(o *Options) { o.MomentumDecay = d; o.mark("momentum_decay") }
}

// Rho sets Adadelta's coefficient of its running averages (default 0.9).
func Rho(r float64) Option { return func(o *Options) { o.Rho = r; o.mark("rho") } }

// Etas sets Rprop's multiplicative decrease and increase factors
// (torch's etas, default 0.5, 1.2).
func Etas(minus, plus float64) Option {
	return func(o *Options) { o.EtaMinus, o.EtaPlus = minus, plus; o.mark("etaminus"); o.mark("etaplus") }
}

// StepSizes sets Rprop's minimal and maximal step sizes (torch's
// step_sizes, default 1e-6, 50).
func StepSizes(lo, hi float64) Option {
	return func(o *Options) {
		o.StepSizeMin, o.StepSizeMax = lo, hi
		o.mark("step_size_min")
		o.mark("step_size_max")
	}
}

// Lambd sets ASGD's decay term (default 1e-4).
func Lambd(l float64) Option { return func(o *Options) { o.Lambd = l; o.mark("lambd") } }

// T0 sets the step at which ASGD starts averaging (default 1e6).
func T0(t float64) Option { return func(o *Options) { o.T0 = t; o.mark("t0") } }

// MaxIter sets LBFGS's maximal number of iterations per Step (default 20).
func MaxIter(n int) Option { return func(o *Options) { o.MaxIter = n; o.mark("max_iter") } }

// MaxEval sets LBFGS's maximal number of closure evaluations per Step
// (default MaxIter·5/4).
func MaxEval(n int) Option { return func(o *Options) { o.MaxEval = n; o.mark("max_eval") } }

// ToleranceGrad sets LBFGS's termination tolerance on the gradient's
// largest magnitude (default 1e-7).
func ToleranceGrad(v float64) Option {
	return func(o *Options) { o.ToleranceGrad = v; o.mark("tolerance_grad") }
}

// ToleranceChange sets LBFGS's termination tolerance on changes of the
// loss and the parameters (default 1e-9); as in PyTorch 1.13, the
// strong-Wolfe line search keeps its own 1e-9.
func ToleranceChange(v float64) Option {
	return func(o *Options) { o.ToleranceChange = v; o.mark("tolerance_change") }
}

// HistorySize sets LBFGS's number of remembered updates (default 100).
func HistorySize(n int) Option { return func(o *Options) { o.HistorySize = n; o.mark("history_size") } }

// LineSearch sets LBFGS's line_search_fn: "strong_wolfe", or "" for none
// (the default).
func LineSearch(fn string) Option {
	return func(o *Options) { o.LineSearchFn = fn; o.mark("line_search_fn") }
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
		"alpha": &o.Alpha, "lr_decay": &o.LRDecay, "initial_accumulator_value": &o.InitialAccumulator,
		"momentum_decay": &o.MomentumDecay, "rho": &o.Rho, "etaminus": &o.EtaMinus, "etaplus": &o.EtaPlus,
		"step_size_min": &o.StepSizeMin, "step_size_max": &o.StepSizeMax, "lambd": &o.Lambd, "t0": &o.T0}
}

func (o *Options) flags() map[string]*bool {
	return map[string]*bool{"nesterov": &o.Nesterov, "amsgrad": &o.AMSGrad, "maximize": &o.Maximize, "centered": &o.Centered}
}

// torchName is the keyword torch's constructors take for option name.
func torchName(name string) string {
	switch name {
	case "beta1", "beta2":
		return "betas"
	case "etaminus", "etaplus":
		return "etas"
	case "step_size_min", "step_size_max":
		return "step_sizes"
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
