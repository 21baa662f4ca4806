package optim

import "github.com/emberml/ember"

// The methods SGD and Adam share come from base. Go dereferences a nil
// *SGD to reach its base before any of base's code runs, so each type
// declares them itself with a nil check: a method on an optimizer that was
// never constructed (nil, or a zero &SGD{} without groups) is a
// *ember.ValueError naming it, not a nil dereference.

// nilOptimizer panics with the error of method op called on a nil kind.
func nilOptimizer(kind, op string) {
	panic(&ember.ValueError{Op: "optim." + kind + "." + op, Msg: "called on a nil (or zero) *optim." + kind + " (an optimizer that was never constructed?)"})
}

func (s *SGD) b(op string) *base {
	if s == nil || s.kind == nil {
		nilOptimizer("SGD", op)
	}
	return &s.base
}

func (a *Adam) b(op string) *base {
	if a == nil || a.kind == nil {
		nilOptimizer("Adam", op)
	}
	return &a.base
}

// LR returns the learning rate (the first parameter group's).
func (s *SGD) LR() float64 { return s.b("LR").LR() }

// SetLR sets every parameter group's learning rate.
func (s *SGD) SetLR(lr float64) { s.b("SetLR").SetLR(lr) }

// ZeroGrad clears the parameters' gradients (set to none, as PyTorch's default).
func (s *SGD) ZeroGrad() { s.b("ZeroGrad").ZeroGrad() }

// StateDict returns the state with torch's keys (state.N.momentum_buffer,
// param_groups.0.lr, ...).
func (s *SGD) StateDict() map[string]*ember.Tensor { return s.b("StateDict").StateDict() }

// LoadStateDict loads a StateDict (from ember or torch).
func (s *SGD) LoadStateDict(sd map[string]*ember.Tensor) error {
	return s.b("LoadStateDict").LoadStateDict(sd)
}

// LR returns the learning rate (the first parameter group's).
func (a *Adam) LR() float64 { return a.b("LR").LR() }

// SetLR sets every parameter group's learning rate.
func (a *Adam) SetLR(lr float64) { a.b("SetLR").SetLR(lr) }

// ZeroGrad clears the parameters' gradients (set to none, as PyTorch's default).
func (a *Adam) ZeroGrad() { a.b("ZeroGrad").ZeroGrad() }

// StateDict returns the state with torch's keys (state.N.exp_avg, state.N.step,
// param_groups.0.lr, ...).
func (a *Adam) StateDict() map[string]*ember.Tensor { return a.b("StateDict").StateDict() }

// LoadStateDict loads a StateDict (from ember or torch).
func (a *Adam) LoadStateDict(sd map[string]*ember.Tensor) error {
	return a.b("LoadStateDict").LoadStateDict(sd)
}

// The parameter groups' methods of every optimizer.

// ParamGroups returns the optimizer's parameter groups (torch's
// param_groups), live: a group's SetLR and Set change the optimizer.
func (s *SGD) ParamGroups() []*ParamGroup { return s.b("ParamGroups").paramGroups() }

// AddParamGroup adds a parameter group (torch's add_param_group): its
// options, or else the optimizer's defaults. A parameter already in a
// group, an option SGD does not take or a value out of range panics with
// an *ember.ValueError and adds nothing.
func (s *SGD) AddParamGroup(g Group) { s.b("AddParamGroup").addGroup("optim.SGD.AddParamGroup", g) }

// ParamGroups returns the optimizer's parameter groups (torch's
// param_groups), live: a group's SetLR and Set change the optimizer.
func (a *Adam) ParamGroups() []*ParamGroup { return a.b("ParamGroups").paramGroups() }

// AddParamGroup adds a parameter group (torch's add_param_group), as
// SGD.AddParamGroup.
func (a *Adam) AddParamGroup(g Group) {
	b := a.b("AddParamGroup")
	b.addGroup(b.kind.op+".AddParamGroup", g)
}

// ParamGroups returns the optimizer's parameter groups (torch's
// param_groups), live: a group's SetLR and Set change the optimizer.
func (r *RMSprop) ParamGroups() []*ParamGroup { return r.b("ParamGroups").paramGroups() }

// AddParamGroup adds a parameter group (torch's add_param_group), as
// SGD.AddParamGroup.
func (r *RMSprop) AddParamGroup(g Group) {
	r.b("AddParamGroup").addGroup("optim.RMSprop.AddParamGroup", g)
}

// ParamGroups returns the optimizer's parameter groups (torch's
// param_groups), live: a group's SetLR and Set change the optimizer.
func (a *Adagrad) ParamGroups() []*ParamGroup { return a.b("ParamGroups").paramGroups() }

// AddParamGroup adds a parameter group (torch's add_param_group), as
// SGD.AddParamGroup.
func (a *Adagrad) AddParamGroup(g Group) {
	a.b("AddParamGroup").addGroup("optim.Adagrad.AddParamGroup", g)
}
