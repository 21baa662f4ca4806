// Package optim holds optimizers (SGD, Adam, AdamW, RMSprop, Adagrad,
// Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD, LBFGS), learning-rate
// schedules (StepLR, MultiStepLR, ExponentialLR, LinearLR, ConstantLR,
// PolynomialLR, LambdaLR, MultiplicativeLR, CosineAnnealingLR,
// CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR, SequentialLR,
// ChainedScheduler, ReduceLROnPlateau, SWALR) and torch.optim.swa_utils'
// AveragedModel and UpdateBN, with PyTorch's update rules and state-dict
// layout.
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
	"maps"
	"math"
	"slices"
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

// GradFunc returns the gradient of parameter i (nil: no gradient, skip it),
// i counting the parameters of every group in order.
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
	// LR returns the learning rate (the first parameter group's); SetLR
	// sets every group's (schedules set each group's own, see ParamGroups).
	LR() float64
	SetLR(lr float64)
	// StateDict returns the per-parameter state as "state.<i>.<name>"
	// tensors, i counting the parameters of every group in order, and each
	// group's hyper-parameters as "param_groups.<n>.<name>" scalars (and
	// its parameters' indices as "param_groups.<n>.params"), torch's
	// layout, so it can be stored with weights.SaveSafetensors. The state
	// tensors are the live ones, updated by later steps.
	StateDict() map[string]*ember.Tensor
	// LoadStateDict restores a StateDict (copying its tensors).
	LoadStateDict(sd map[string]*ember.Tensor) error
}

// Group is one parameter group given to a constructor such as SGDGroups,
// torch's {'params': ..., 'lr': ...}: its parameters and the options in
// which it differs from the optimizer's defaults.
//
//	optim.Group{Params: head, Options: []optim.Option{optim.LR(1e-3), optim.WeightDecay(0)}}
type Group struct {
	Params  []Param
	Options []Option
}

// ParamGroup is one parameter group of an optimizer, an element of torch's
// optimizer.param_groups: its parameters, its learning rate and the
// hyper-parameters it sets itself; it follows the optimizer's fields (its
// defaults: SGD.Momentum, Adam.Beta1, ...) in the others. Schedules set
// each group's rate from the group's own initial rate.
type ParamGroup struct {
	b             *base
	params        []Param
	first         int // the index of params[0] among the optimizer's
	lr, initialLR float64
	// initialLR is torch's group "initial_lr" (0: not yet set), which the
	// first schedule sets (see initialLRs in sched.go)
	own map[string]float64 // hyper-parameters set for the group (flags as 1)
}

// kind describes one optimizer for its constructors and groups.
type kind struct {
	op string
	// check panics with torch's ValueError for a group whose values are out
	// of range (the constructor's defaults are checked as a group of none)
	check func(op string, g *ParamGroup)
}

type base struct {
	kind   *kind
	groups []*ParamGroup
	params []Param // every group's, in order
	grad   GradFunc
	state  []map[string]*ember.Tensor
	// the defaults, fields of the optimizer: hyper is written in state
	// dicts; lr is the constructor's, for AddParamGroup
	hyper map[string]*float64
	flag  map[string]*bool
	lr    float64
}

// hyperErr panics with PyTorch's ValueError for a hyper-parameter out of
// range (NaN included: the checks are written so that NaN fails them).
func hyperErr(op string, ok bool, format string, args ...any) {
	if !ok {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf(format, args...)})
	}
}

// one is the single group of the one-group constructors, which refuse an
// empty list as torch.optim.SGD([], ...).
func one(op string, params []Param) []Group {
	hyperErr(op, len(params) > 0, "optimizer got an empty parameter list")
	return []Group{{Params: params}}
}

// init sets b up with defaults hyper and flag (pointers to the
// optimizer's fields) and adds groups, after checking the defaults.
func (b *base) init(k *kind, groups []Group, grad GradFunc, lr float64, hyper map[string]*float64, flag map[string]*bool) {
	b.kind, b.lr, b.hyper, b.flag = k, lr, hyper, flag
	hyperErr(k.op, len(groups) > 0, "optimizer got an empty parameter list")
	b.checkGroup(k.op, &ParamGroup{b: b, lr: lr})
	if grad == nil {
		grad = func(_ int, p *ember.Tensor) *ember.Tensor { return p.Grad() }
	}
	b.grad = grad
	for _, g := range groups {
		b.addGroup(k.op, g)
	}
}

func (b *base) checkGroup(op string, g *ParamGroup) {
	hyperErr(op, g.lr >= 0, "Invalid learning rate: %v", g.lr)
	b.kind.check(op, g)
}

// allowed lists the options b takes (torch's names).
func (b *base) allowed() []string {
	out := []string{"lr"}
	for k := range b.hyper {
		out = append(out, k)
	}
	for k := range b.flag {
		out = append(out, k)
	}
	return out
}

// addGroup checks and appends one group: nothing changes when it panics.
func (b *base) addGroup(op string, gr Group) {
	for _, o := range gr.Options {
		if o == nil {
			panic(&ember.ValueError{Op: op, Msg: "nil Option"})
		}
		var probe Options
		if o(&probe); slices.Contains(probe.set, "grad") {
			panic(&ember.ValueError{Op: op, Msg: "WithGrad is an option of the optimizer, not of a parameter group"})
		}
	}
	o := options(op, Options{}, gr.Options, b.allowed())
	g := &ParamGroup{b: b, params: slices.Clone(gr.Params), first: len(b.params), lr: b.lr, own: map[string]float64{}}
	fl, bl := o.floats(), o.flags()
	for _, name := range o.set {
		switch {
		case name == "lr":
			g.lr = o.LR
		case fl[name] != nil:
			g.own[name] = *fl[name]
		case bl[name] != nil && *bl[name]:
			g.own[name] = 1
		}
	}
	seen := map[*ember.Tensor]string{}
	for i, p := range b.params {
		seen[p.Tensor] = paramName(p, i)
	}
	mine := map[*ember.Tensor]string{}
	for j, p := range g.params {
		name := paramName(p, g.first+j)
		hyperErr(op, p.Tensor != nil, "parameter %q is a nil tensor", name)
		if was, dup := mine[p.Tensor]; dup {
			// PyTorch 1.13 warns that this "will cause an error"; each step would update it twice
			hyperErr(op, false, "optimizer contains a parameter group with duplicate parameters: %q is the same tensor as %q", name, was)
		}
		if was, dup := seen[p.Tensor]; dup {
			hyperErr(op, false, "some parameters appear in more than one parameter group (%q is the same tensor as %q)", name, was)
		}
		mine[p.Tensor] = name
		if dt := p.Tensor.DType(); !dt.IsFloat() {
			panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{dt}, Msg: fmt.Sprintf("optimizer can only optimize Tensors of floating point dtype, parameter %q is %v", name, dt)})
		}
		hyperErr(op, p.Tensor.IsLeaf(), "can't optimize a non-leaf Tensor (parameter %q is the output of %s)", name, p.Tensor.GradFn())
	}
	b.checkGroup(op, g)
	b.groups = append(b.groups, g)
	b.params = append(b.params, g.params...)
	for range g.params {
		b.state = append(b.state, map[string]*ember.Tensor{})
	}
}

func paramName(p Param, i int) string {
	if p.Name == "" {
		return strconv.Itoa(i)
	}
	return p.Name
}

// f is the group's value of the float hyper-parameter name, its own or
// the optimizer's.
func (g *ParamGroup) f(name string) float64 {
	if v, ok := g.own[name]; ok {
		return v
	}
	return *g.b.hyper[name]
}

// flag is the group's value of the flag name (nesterov, amsgrad, ...).
func (g *ParamGroup) flag(name string) bool {
	if v, ok := g.own[name]; ok {
		return v != 0
	}
	return *g.b.flag[name]
}

func (g *ParamGroup) live(op string) *ParamGroup {
	if g == nil || g.b == nil {
		panic(&ember.ValueError{Op: "optim.ParamGroup." + op, Msg: "called on a nil or zero *optim.ParamGroup (take groups from an optimizer's ParamGroups)"})
	}
	return g
}

// Params returns the group's parameters.
func (g *ParamGroup) Params() []Param { return slices.Clone(g.live("Params").params) }

// LR returns the group's learning rate.
func (g *ParamGroup) LR() float64 { return g.live("LR").lr }

// SetLR sets the group's learning rate, as torch's group['lr'] = lr.
func (g *ParamGroup) SetLR(lr float64) { g.live("SetLR").lr = lr }

// Options returns the group's values: its own, and the optimizer's
// defaults for the others (fields the optimizer does not have are zero).
func (g *ParamGroup) Options() Options {
	g.live("Options")
	var o Options
	o.LR = g.lr
	fl, bl := o.floats(), o.flags()
	for k := range g.b.hyper {
		*fl[k] = g.f(k)
	}
	for k := range g.b.flag {
		*bl[k] = g.flag(k)
	}
	return o
}

// Set gives the group its own values of opts (torch's group['momentum'] =
// ...), checked as the constructor checks them; an option the optimizer
// does not take, or a value out of range, panics with an
// *ember.ValueError and changes nothing. The flags (Nesterov, AMSGrad,
// Maximize, Centered) can only be turned on.
func (g *ParamGroup) Set(opts ...Option) {
	b := g.live("Set").b
	op := b.kind.op + ".ParamGroup.Set"
	trial := &ParamGroup{b: b, lr: g.lr, own: maps.Clone(g.own)}
	o := options(op, Options{}, opts, b.allowed())
	fl, bl := o.floats(), o.flags()
	for _, name := range o.set {
		switch {
		case name == "lr":
			trial.lr = o.LR
		case fl[name] != nil:
			trial.own[name] = *fl[name]
		case bl[name] != nil && *bl[name]:
			trial.own[name] = 1
		}
	}
	b.checkGroup(op, trial)
	g.lr, g.own = trial.lr, trial.own
}

func (b *base) initials() []float64 {
	out := make([]float64, len(b.groups))
	for i, g := range b.groups {
		if g.initialLR == 0 {
			g.initialLR = g.lr
		}
		out[i] = g.initialLR
	}
	return out
}

func (b *base) paramGroups() []*ParamGroup { return slices.Clone(b.groups) }

func (b *base) LR() float64 { return b.groups[0].lr }
func (b *base) SetLR(lr float64) {
	for _, g := range b.groups {
		g.lr = lr
	}
}

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
	f64 := ember.Dtype(ember.Float64)
	for n, g := range b.groups {
		pre := fmt.Sprintf("param_groups.%d.", n)
		out[pre+"lr"] = ember.Scalar(g.lr, f64)
		if g.initialLR != 0 {
			out[pre+"initial_lr"] = ember.Scalar(g.initialLR, f64)
		}
		for k := range b.hyper {
			out[pre+k] = ember.Scalar(g.f(k), f64)
		}
		ids := make([]int64, len(g.params))
		for j := range ids {
			ids[j] = int64(g.first + j)
		}
		out[pre+"params"] = ember.FromSlice(ids, ember.Shape{len(ids)})
	}
	return out
}

// loaded is a state dict read by readState, before anything is set.
type loaded struct {
	state []map[string]*ember.Tensor
	hyper []map[string]float64 // per group
}

func (b *base) LoadStateDict(sd map[string]*ember.Tensor) error {
	if _, ok := sd["param_groups.0.lr"]; !ok {
		return fmt.Errorf("optim: the state dict has no param_groups.0.lr (not an optimizer's StateDict?)")
	}
	var l loaded
	var err error
	// everything read before anything is set: a bad entry (a meta or
	// released tensor panics when read) changes nothing
	if perr := ember.Try(func() { l, err = b.readState(sd) }); perr != nil {
		return fmt.Errorf("optim: load state dict: %w", perr)
	}
	if err != nil {
		return err
	}
	for n, g := range b.groups {
		h := l.hyper[n]
		g.lr = h["lr"]
		if v, ok := h["initial_lr"]; ok && v > 0 {
			g.initialLR = v
		}
		for k, p := range b.hyper {
			v, ok := h[k]
			_, own := g.own[k]
			switch {
			case !ok:
			case len(b.groups) == 1 && !own:
				// the one group follows the defaults: they are its
				// values, as before groups (a group's own value stays
				// its own, so the defaults AddParamGroup gives stay)
				*p = v
			case v == *p:
				delete(g.own, k)
			default:
				g.own[k] = v
			}
		}
	}
	b.state = l.state
	return nil
}

// scalarState names the per-parameter state that is one number besides
// the step count (NAdam's mu_product, ASGD's eta and mu), kept as a
// float64 scalar on the CPU.
var scalarState = map[string]bool{"mu_product": true, "eta": true, "mu": true}

// readState parses sd into per-parameter state and per-group
// hyper-parameters, refusing a state dict of other groups as torch's
// load_state_dict does.
func (b *base) readState(sd map[string]*ember.Tensor) (loaded, error) {
	l := loaded{state: make([]map[string]*ember.Tensor, len(b.params)), hyper: make([]map[string]float64, len(b.groups))}
	for i := range l.state {
		l.state[i] = map[string]*ember.Tensor{}
	}
	for n := range l.hyper {
		l.hyper[n] = map[string]float64{}
	}
	// the groups' entries, sorted out first: a state dict of another
	// number of groups is refused as such, as torch's
	groups := make([]map[string]*ember.Tensor, len(b.groups))
	for n := range groups {
		groups[n] = map[string]*ember.Tensor{}
	}
	for k, v := range sd {
		if v == nil {
			return l, fmt.Errorf("optim: %s is a nil tensor", k)
		}
		rest, ok := strings.CutPrefix(k, "param_groups.")
		if !ok {
			continue
		}
		ns, name, _ := strings.Cut(rest, ".")
		n, err := strconv.Atoi(ns)
		if err != nil || n < 0 || name == "" {
			return l, fmt.Errorf("optim: unexpected state key %q", k)
		}
		if n >= len(b.groups) {
			return l, fmt.Errorf("optim: loaded state dict has a different number of parameter groups (%s; the optimizer has %d)", k, len(b.groups))
		}
		groups[n][name] = v
	}
	for n, g := range groups {
		if g["lr"] == nil {
			return l, fmt.Errorf("optim: loaded state dict has a different number of parameter groups (no param_groups.%d.lr; the optimizer has %d)", n, len(b.groups))
		}
	}
	// the saved parameter ids, mapped in order onto the optimizer's as
	// torch does (identity when the state dict has no params lists, as
	// ember's before groups)
	ids := map[int]int{}
	withIDs := 0
	for n, entries := range groups {
		g := b.groups[n]
		for name, v := range entries {
			k := fmt.Sprintf("param_groups.%d.%s", n, name)
			if name == "params" {
				if v.Dim() != 1 || v.NumElements() != len(g.params) {
					return l, fmt.Errorf("optim: loaded state dict contains a parameter group that doesn't match the size of optimizer's group (%s has shape %v, group %d has %d parameters)", k, v.Shape(), n, len(g.params))
				}
				withIDs++
				for j, x := range v.Cast(ember.Float64).Float64s() {
					if !(x >= 0 && x < 1<<31 && x == math.Trunc(x)) {
						return l, fmt.Errorf("optim: %s holds %v, not a parameter index", k, x)
					}
					if _, dup := ids[int(x)]; dup {
						return l, fmt.Errorf("optim: parameter index %v appears twice in the state dict's param_groups", x)
					}
					ids[int(x)] = g.first + j
				}
				continue
			}
			if v.NumElements() != 1 {
				return l, fmt.Errorf("optim: %s is not a scalar", k)
			}
			x := v.Item()
			if math.IsNaN(x) || math.IsInf(x, 0) || (name == "lr" && x < 0) {
				return l, fmt.Errorf("optim: %s is %v", k, x)
			}
			l.hyper[n][name] = x
		}
	}
	if withIDs != 0 && withIDs != len(b.groups) {
		return l, fmt.Errorf("optim: the state dict lists the parameters of %d of its %d parameter groups", withIDs, len(b.groups))
	}
	if withIDs == 0 {
		for i := range b.params {
			ids[i] = i
		}
	}
	for k, v := range sd {
		if strings.HasPrefix(k, "param_groups.") {
			continue
		}
		rest, isState := strings.CutPrefix(k, "state.")
		if !isState {
			return l, fmt.Errorf("optim: unexpected state key %q", k)
		}
		is, name, ok := strings.Cut(rest, ".")
		id, err := strconv.Atoi(is)
		i, known := ids[id]
		if !ok || err != nil || !known {
			return l, fmt.Errorf("optim: state key %q does not name one of %d parameters", k, len(b.params))
		}
		p := b.params[i].Tensor
		if name != "step" && !scalarState[name] && !v.Shape().Equal(p.Shape()) {
			return l, fmt.Errorf("optim: %s has shape %v, parameter %s has %v", k, v.Shape(), paramName(b.params[i], i), p.Shape())
		}
		if name == "step" {
			// a count: one finite non-negative whole number, kept
			// as a float64 on the CPU (torch 1.13 writes float32)
			if v.NumElements() != 1 {
				return l, fmt.Errorf("optim: %s has shape %v, want a scalar step count", k, v.Shape())
			}
			if x := v.Item(); !(x >= 0 && x <= 1<<53 && x == math.Trunc(x)) {
				return l, fmt.Errorf("optim: %s is %v, want a step count", k, x)
			}
			v = v.Reshape().Cast(ember.Float64).CPU()
		} else if scalarState[name] {
			if v.NumElements() != 1 {
				return l, fmt.Errorf("optim: %s has shape %v, want a scalar", k, v.Shape())
			}
			v = v.Reshape().Cast(ember.Float64).CPU()
		} else {
			v = v.Cast(p.DType()).To(p.Device())
		}
		l.state[i][name] = v.Detach().Clone()
	}
	return l, nil
}

// each calls f for every parameter of g with a gradient, with a detached
// view of the parameter (its storage, outside autograd) that f updates in
// place. Detached views record no graph, without ember.NoGrad.
func (b *base) each(g *ParamGroup, f func(p, grad *ember.Tensor, st map[string]*ember.Tensor)) {
	for j, pr := range g.params {
		i := g.first + j
		gr := b.grad(i, pr.Tensor)
		if gr == nil {
			continue
		}
		f(pr.Tensor.Detach(), gr.Detach(), b.state[i])
	}
}

// SGD is stochastic gradient descent with momentum, dampening, Nesterov
// momentum and weight decay, as torch.optim.SGD.
//
// Maximize (torch's maximize=True) ascends the gradient instead. The
// fields are the defaults: every parameter group that does not set one
// itself follows it.
type SGD struct {
	base
	Momentum, Dampening, WeightDecay float64
	Nesterov, Maximize               bool
}

var sgdKind = &kind{op: "optim.SGD", check: func(op string, g *ParamGroup) {
	m, d := g.f("momentum"), g.f("dampening")
	hyperErr(op, m >= 0, "Invalid momentum value: %v", m)
	hyperErr(op, g.f("weight_decay") >= 0, "Invalid weight_decay value: %v", g.f("weight_decay"))
	hyperErr(op, !g.flag("nesterov") || (m > 0 && d == 0), "Nesterov momentum requires a momentum and zero dampening")
}}

// NewSGD returns an SGD optimizer; grad nil takes gradients from p.Grad().
func NewSGD(params []Param, grad GradFunc, lr, momentum, dampening, weightDecay float64, nesterov bool) *SGD {
	return newSGD(one("optim.SGD", params), grad, lr, momentum, dampening, weightDecay, nesterov, false)
}

func newSGD(groups []Group, grad GradFunc, lr, momentum, dampening, weightDecay float64, nesterov, maximize bool) *SGD {
	s := &SGD{Momentum: momentum, Dampening: dampening, WeightDecay: weightDecay, Nesterov: nesterov, Maximize: maximize}
	s.init(sgdKind, groups, grad, lr, map[string]*float64{"momentum": &s.Momentum, "dampening": &s.Dampening, "weight_decay": &s.WeightDecay},
		map[string]*bool{"nesterov": &s.Nesterov, "maximize": &s.Maximize})
	return s
}

// SGDWith is torch.optim.SGD(params, lr, ...): momentum, dampening,
// weight decay 0 and no Nesterov unless options say otherwise.
//
//	opt := optim.SGDWith(optim.ModuleParams(m), 0.1, optim.Momentum(0.9), optim.WeightDecay(5e-4))
func SGDWith(params []Param, lr float64, opts ...Option) *SGD {
	return SGDGroups(one("optim.SGD", params), lr, opts...)
}

// SGDGroups is torch.optim.SGD([{'params': ..., 'lr': ...}, ...], lr,
// ...): one parameter group per Group, each with the options it gives
// and SGDWith's defaults (lr, opts) for the others.
func SGDGroups(groups []Group, lr float64, opts ...Option) *SGD {
	o := options("optim.SGD", Options{LR: lr}, opts, []string{"lr", "grad", "momentum", "dampening", "weight_decay", "nesterov", "maximize"})
	return newSGD(groups, o.Grad, o.LR, o.Momentum, o.Dampening, o.WeightDecay, o.Nesterov, o.Maximize)
}

// Step applies p -= lr·d with d the (momentum-filtered) gradient, with
// each group's values.
func (s *SGD) Step() {
	b := s.b("Step")
	for _, gr := range b.groups {
		lr, momentum, dampening, wd := gr.lr, gr.f("momentum"), gr.f("dampening"), gr.f("weight_decay")
		nesterov, maximize := gr.flag("nesterov"), gr.flag("maximize")
		b.each(gr, func(p, g *ember.Tensor, st map[string]*ember.Tensor) {
			if maximize {
				g = g.Neg()
			}
			if wd != 0 {
				g = g.Add(p.MulScalar(wd))
			}
			if momentum != 0 {
				buf, ok := st["momentum_buffer"]
				if !ok {
					buf = g.Clone()
					st["momentum_buffer"] = buf
				} else {
					buf.MulScalarInPlace(momentum).AddScaledInPlace(g, 1-dampening)
				}
				if nesterov {
					g = g.Add(buf.MulScalar(momentum))
				} else {
					g = buf
				}
			}
			p.AddScaledInPlace(g, -lr)
		})
	}
}

// Adam is torch.optim.Adam (L2 weight decay added to the gradient) or,
// with Decoupled, torch.optim.AdamW (p *= 1 - lr·wd before the update).
// AMSGrad (torch's amsgrad=True) divides by the running maximum of the
// second moment (state "max_exp_avg_sq"); Maximize ascends the gradient.
// The fields are the defaults: every parameter group that does not set
// one itself follows it (Decoupled is the whole optimizer's).
type Adam struct {
	base
	Beta1, Beta2, Eps, WeightDecay float64
	Decoupled, AMSGrad, Maximize   bool
}

var adamKind, adamWKind = &kind{op: "optim.Adam", check: checkAdam}, &kind{op: "optim.AdamW", check: checkAdam}

func checkAdam(op string, g *ParamGroup) {
	eps, b1, b2, wd := g.f("eps"), g.f("beta1"), g.f("beta2"), g.f("weight_decay")
	hyperErr(op, eps >= 0, "Invalid epsilon value: %v", eps)
	hyperErr(op, b1 >= 0 && b1 < 1, "Invalid beta parameter at index 0: %v", b1)
	hyperErr(op, b2 >= 0 && b2 < 1, "Invalid beta parameter at index 1: %v", b2)
	hyperErr(op, wd >= 0, "Invalid weight_decay value: %v", wd)
}

// NewAdam returns Adam with betas (b1, b2), eps and L2 weight decay; grad
// nil takes gradients from p.Grad().
func NewAdam(params []Param, grad GradFunc, lr, b1, b2, eps, weightDecay float64) *Adam {
	return newAdam(adamKind, one("optim.Adam", params), grad, Options{LR: lr, Beta1: b1, Beta2: b2, Eps: eps, WeightDecay: weightDecay})
}

func newAdam(k *kind, groups []Group, grad GradFunc, o Options) *Adam {
	a := &Adam{Beta1: o.Beta1, Beta2: o.Beta2, Eps: o.Eps, WeightDecay: o.WeightDecay, Decoupled: k == adamWKind, AMSGrad: o.AMSGrad, Maximize: o.Maximize}
	a.init(k, groups, grad, o.LR, map[string]*float64{"beta1": &a.Beta1, "beta2": &a.Beta2, "eps": &a.Eps, "weight_decay": &a.WeightDecay},
		map[string]*bool{"amsgrad": &a.AMSGrad, "maximize": &a.Maximize})
	return a
}

// NewAdamW returns AdamW (decoupled weight decay; PyTorch's default 0.01).
func NewAdamW(params []Param, grad GradFunc, lr, b1, b2, eps, weightDecay float64) *Adam {
	return newAdam(adamWKind, one("optim.AdamW", params), grad, Options{LR: lr, Beta1: b1, Beta2: b2, Eps: eps, WeightDecay: weightDecay})
}

var adamOptions = []string{"lr", "grad", "beta1", "beta2", "eps", "weight_decay", "amsgrad", "maximize"}

// AdamWith is torch.optim.Adam(params, ...): lr 1e-3, betas (0.9, 0.999),
// eps 1e-8, weight decay 0 unless options say otherwise.
func AdamWith(params []Param, opts ...Option) *Adam {
	return AdamGroups(one("optim.Adam", params), opts...)
}

// AdamGroups is torch.optim.Adam([{'params': ..., 'lr': ...}, ...], ...):
// one parameter group per Group, each with the options it gives and
// AdamWith's defaults (opts) for the others.
func AdamGroups(groups []Group, opts ...Option) *Adam {
	o := options("optim.Adam", Options{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, opts, adamOptions)
	return newAdam(adamKind, groups, o.Grad, o)
}

// AdamWWith is torch.optim.AdamW(params, ...): AdamWith's defaults with
// decoupled weight decay 0.01.
func AdamWWith(params []Param, opts ...Option) *Adam {
	return AdamWGroups(one("optim.AdamW", params), opts...)
}

// AdamWGroups is torch.optim.AdamW with parameter groups, as AdamGroups;
// a group that sets WeightDecay(0) is not decayed (torch's no_decay group
// of biases and norms).
//
//	opt := optim.AdamWGroups([]optim.Group{
//		{Params: weights},
//		{Params: biases, Options: []optim.Option{optim.WeightDecay(0)}},
//	}, optim.LR(3e-4), optim.WeightDecay(0.1))
func AdamWGroups(groups []Group, opts ...Option) *Adam {
	o := options("optim.AdamW", Options{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}, opts, adamOptions)
	return newAdam(adamWKind, groups, o.Grad, o)
}

// Step applies one Adam update with bias correction, with each group's
// values.
func (a *Adam) Step() {
	b := a.b("Step")
	for _, gr := range b.groups {
		lr, b1, b2, eps, wd := gr.lr, gr.f("beta1"), gr.f("beta2"), gr.f("eps"), gr.f("weight_decay")
		amsgrad, maximize := gr.flag("amsgrad"), gr.flag("maximize")
		b.each(gr, func(p, g *ember.Tensor, st map[string]*ember.Tensor) {
			// the count is updated in place, so a StateDict taken earlier
			// follows it as it follows exp_avg
			step := count(st)
			if maximize {
				g = g.Neg()
			}
			if wd != 0 {
				if a.Decoupled {
					p.MulScalarInPlace(1 - lr*wd)
				} else {
					g = g.Add(p.MulScalar(wd))
				}
			}
			m := stateZeros(st, "exp_avg", p)
			v := stateZeros(st, "exp_avg_sq", p)
			m.MulScalarInPlace(b1).AddScaledInPlace(g, 1-b1)
			v.MulScalarInPlace(b2).AddcmulInPlace(g, g, 1-b2)
			bc1 := 1 - math.Pow(b1, step)
			bc2 := 1 - math.Pow(b2, step)
			if amsgrad {
				vmax := stateZeros(st, "max_exp_avg_sq", p)
				vmax.CopyFrom(vmax.Maximum(v))
				v = vmax
			}
			denom := v.Sqrt().DivScalar(math.Sqrt(bc2)).AddScalar(eps)
			p.AddcdivInPlace(m, denom, -lr/bc1)
		})
	}
}
