package optim

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/weights"
)

// moreFixture is testdata/nn/optim_more.json, written by
// testdata/gen_optim_more_fixtures.py (PyTorch 1.13).
type moreFixture struct {
	groupsFixture
	LBFGS map[string]struct {
		Problem struct {
			A, B         fixTensor
			X0           []float64
			LR           float64 `json:"lr"`
			MaxIter      int     `json:"max_iter"`
			MaxEval      int     `json:"max_eval"`
			HistorySize  int     `json:"history_size"`
			LineSearchFn string  `json:"line_search_fn"`
			TolChange    float64 `json:"tolerance_change"`
		}
		Steps []struct {
			X         fixTensor
			Loss      float64
			FuncEvals int `json:"func_evals"`
			NIter     int `json:"n_iter"`
		}
		StateDict map[string]fixTensor `json:"state_dict"`
	}
	Swa json.RawMessage
}

func readMoreFixture(t *testing.T) moreFixture {
	t.Helper()
	b, err := os.ReadFile("../testdata/nn/optim_more.json")
	if err != nil {
		t.Fatal(err)
	}
	var f moreFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// moreCases build the generator's optimizers, as groupCases.
var moreCases = map[string]struct {
	mk    func(p []Param) grouped
	added []Option
}{
	"adamax": {func(p []Param) grouped {
		return AdamaxGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.01), WeightDecay(0), Betas(0.8, 0.99)}}}, LR(0.02), WeightDecay(0.1))
	}, []Option{LR(0.03), Eps(1e-3)}},
	"adamax_maximize": {func(p []Param) grouped {
		return AdamaxGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.01)}}}, Maximize())
	}, []Option{LR(0.03)}},
	"nadam": {func(p []Param) grouped {
		return NAdamGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.01), WeightDecay(0), MomentumDecay(0.01)}}}, LR(0.02), WeightDecay(0.1))
	}, []Option{LR(0.03), Betas(0.5, 0.9)}},
	"radam": {func(p []Param) grouped {
		return RAdamGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.01), WeightDecay(0), Betas(0.8, 0.9)}}}, LR(0.02), WeightDecay(0.1), Betas(0.5, 0.6))
	}, []Option{LR(0.03)}},
	"adadelta": {func(p []Param) grouped {
		return AdadeltaGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.5), WeightDecay(0), Rho(0.5)}}}, LR(1), WeightDecay(0.1))
	}, []Option{LR(2), Eps(1e-3)}},
	"adadelta_maximize": {func(p []Param) grouped {
		return AdadeltaGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.5)}}}, Maximize())
	}, []Option{Rho(0.7)}},
	"rprop": {func(p []Param) grouped {
		return RpropGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.05), Etas(0.3, 1.5)}}}, LR(0.01), StepSizes(1e-3, 0.04))
	}, []Option{LR(0.02), Maximize()}},
	"asgd": {func(p []Param) grouped {
		return ASGDGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.05), WeightDecay(0), T0(2)}}}, LR(0.1), Lambd(0.01), WeightDecay(0.1))
	}, []Option{LR(0.2), Alpha(0.5), T0(0), Maximize()}},
}

// TestMoreOptimizersMatchTorch: six steps of Adamax, NAdam, RAdam,
// Adadelta, Rprop and ASGD (maximize where torch 1.13 has it) over two
// groups differing in lr and more, a third group added before the third
// step, against PyTorch 1.13 on every device; the state dict after five
// steps against torch's state_dict() (the same keys and values), and the
// sixth step again from an optimizer that loaded torch's state dict.
func TestMoreOptimizersMatchTorch(t *testing.T) {
	f := readMoreFixture(t)
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		for name, c := range moreCases {
			want := f.Optim.Cases[name]
			if want.Steps == nil {
				t.Fatalf("%s: no fixture", name)
			}
			params := make([]Param, 3)
			for i, init := range f.Optim.Init {
				params[i] = Param{Tensor: init.on(dev).SetRequiresGrad(true)}
			}
			opt := c.mk(params)
			n := 2
			for k, grads := range f.Optim.Grads {
				if k == groupsAddAt {
					opt.AddParamGroup(Group{Params: params[2:], Options: c.added})
					n = 3
				}
				opt.ZeroGrad()
				for i := range n {
					params[i].Tensor.SetGrad(grads[i].on(dev))
				}
				opt.Step()
				for i := range 3 {
					near(t, name+" step "+string(rune('1'+k))+" p"+string(rune('0'+i)), params[i].Tensor.Detach().Cast(ember.Float64).CPU().Float64s(), want.Steps[k][i].Data, 1e-5)
				}
				if k+1 == groupsSDAt {
					compareStateDict(t, name, opt.StateDict(), want.StateDict, true)
				}
			}
			for i := range 3 {
				params[i] = Param{Tensor: want.Steps[groupsSDAt-1][i].on(dev).SetRequiresGrad(true)}
			}
			opt = c.mk(params)
			opt.AddParamGroup(Group{Params: params[2:], Options: c.added})
			if err := opt.LoadStateDict(stateDictOf(want.StateDict)); err != nil {
				t.Fatalf("%s: loading torch's state dict: %v", name, err)
			}
			for i := range n {
				params[i].Tensor.SetGrad(f.Optim.Grads[groupsSDAt][i].on(dev))
			}
			opt.Step()
			for i := range 3 {
				near(t, name+" resumed step 6", params[i].Tensor.Detach().Cast(ember.Float64).CPU().Float64s(), want.Steps[groupsSDAt][i].Data, 1e-5)
			}
		}
	})
}

// TestMoreOptimizersRefuse: torch 1.13's ValueErrors for hyper-parameters
// out of range, an option another optimizer takes refused.
func TestMoreOptimizersRefuse(t *testing.T) {
	ps := Tensors(ember.Ones(ember.Shape{2}, ember.WithGrad()))
	for name, c := range map[string]struct {
		f   func()
		msg string
	}{
		"adamax beta":      {func() { AdamaxWith(ps, Betas(1, 0.9)) }, "Invalid beta parameter at index 0: 1"},
		"adamax eps":       {func() { AdamaxWith(ps, Eps(-1)) }, "Invalid epsilon value: -1"},
		"nadam decay":      {func() { NAdamWith(ps, MomentumDecay(-0.1)) }, "Invalid momentum_decay value: -0.1"},
		"nadam maximize":   {func() { NAdamWith(ps, Maximize()) }, "got an unexpected option maximize (it belongs to another optimizer)"},
		"radam beta2":      {func() { RAdamWith(ps, Betas(0.9, -0.5)) }, "Invalid beta parameter at index 1: -0.5"},
		"radam wd":         {func() { RAdamWith(ps, WeightDecay(-1)) }, "Invalid weight_decay value: -1"},
		"adadelta rho":     {func() { AdadeltaWith(ps, Rho(1.5)) }, "Invalid rho value: 1.5"},
		"adadelta lr":      {func() { AdadeltaWith(ps, LR(-1)) }, "Invalid learning rate: -1"},
		"rprop etas":       {func() { RpropWith(ps, Etas(0.5, 0.9)) }, "Invalid eta values: 0.5, 0.9"},
		"rprop group etas": {func() { RpropGroups([]Group{{Params: ps, Options: []Option{Etas(0, 2)}}}) }, "Invalid eta values: 0, 2"},
		"rprop wd":         {func() { RpropWith(ps, WeightDecay(0.1)) }, "got an unexpected option weight_decay (it belongs to another optimizer)"},
		"asgd wd":          {func() { ASGDWith(ps, WeightDecay(-1)) }, "Invalid weight_decay value: -1"},
		"asgd betas":       {func() { ASGDWith(ps, Betas(0.1, 0.2)) }, "got an unexpected option betas (it belongs to another optimizer)"},
		"sgd rho":          {func() { SGDWith(ps, 0.1, Rho(0.5)) }, "got an unexpected option rho (it belongs to another optimizer)"},
		"empty":            {func() { ASGDWith(nil) }, "optimizer got an empty parameter list"},
	} {
		if e := testenv.Raises[*ember.ValueError](t, name, c.f); e.Msg != c.msg {
			t.Errorf("%s: %q, want %q", name, e.Msg, c.msg)
		}
	}
	// torch's defaults
	if a := ASGDWith(ps); a.LR() != 0.01 || a.Lambd != 1e-4 || a.Alpha != 0.75 || a.T0 != 1e6 {
		t.Errorf("ASGD defaults %+v", a)
	}
	if r := RpropWith(ps); r.EtaMinus != 0.5 || r.EtaPlus != 1.2 || r.StepSizeMin != 1e-6 || r.StepSizeMax != 50 {
		t.Errorf("Rprop defaults %+v", r)
	}
	if a := AdadeltaWith(ps); a.LR() != 1 || a.Rho != 0.9 || a.Eps != 1e-6 {
		t.Errorf("Adadelta defaults %+v", a)
	}
	if n := NAdamWith(ps); n.LR() != 2e-3 || n.MomentumDecay != 4e-3 {
		t.Errorf("NAdam defaults %+v", n)
	}
}

// TestMoreOptimizersWithGradScaler: a GradScaler's Step (loss scaled by
// 2¹⁶, gradients unscaled before the update) gives PyTorch 1.13's first
// step of each optimizer; a step with an infinite gradient is skipped,
// leaving parameters and state alone.
func TestMoreOptimizersWithGradScaler(t *testing.T) {
	f := readMoreFixture(t)
	for name, c := range moreCases {
		want := f.Optim.Cases[name]
		params := make([]Param, 3)
		for i, init := range f.Optim.Init {
			params[i] = Param{Tensor: init.on(ember.CPU).SetRequiresGrad(true)}
		}
		opt := c.mk(params)
		s := NewGradScaler().WithInitScale(1 << 16)
		loss := params[0].Tensor.Mul(f.Optim.Grads[0][0].on(ember.CPU)).Sum().Add(params[1].Tensor.Mul(f.Optim.Grads[0][1].on(ember.CPU)).Sum())
		s.ScaleLoss(loss).Backward()
		if !s.Step(opt) {
			t.Fatalf("%s: the scaler skipped a finite step", name)
		}
		s.Update()
		for i := range 3 {
			near(t, name+" scaled step p"+string(rune('0'+i)), params[i].Tensor.Detach().Cast(ember.Float64).Float64s(), want.Steps[0][i].Data, 1e-5)
		}
		opt.ZeroGrad()
		params[0].Tensor.Mul(ember.Full(ember.Shape{2, 3}, math.Inf(1))).Sum().Backward()
		if s.Step(opt) {
			t.Errorf("%s: the scaler stepped with an infinite gradient", name)
		}
		for i := range 3 {
			near(t, name+" skipped step p"+string(rune('0'+i)), params[i].Tensor.Detach().Cast(ember.Float64).Float64s(), want.Steps[0][i].Data, 1e-5)
		}
	}
}

// TestOneCycleLRMomentumCyclesBeta1: OneCycleLR with cycle_momentum over
// NAdam cycles beta1, as PyTorch 1.13's (which takes any optimizer with
// betas).
func TestOneCycleLRMomentumCyclesBeta1(t *testing.T) {
	var want struct{ LR, Beta1 [][]float64 }
	b, err := os.ReadFile("../testdata/nn/optim_more.json")
	if err != nil {
		t.Fatal(err)
	}
	var all struct {
		OneCycle json.RawMessage `json:"onecycle_nadam"`
	}
	if err := json.Unmarshal(b, &all); err != nil || json.Unmarshal(all.OneCycle, &want) != nil {
		t.Fatal("no onecycle_nadam fixture")
	}
	q0, q1 := ember.Zeros(ember.Shape{1}, ember.WithGrad()), ember.Zeros(ember.Shape{1}, ember.WithGrad())
	opt := NAdamGroups([]Group{{Params: Tensors(q0)}, {Params: Tensors(q1), Options: []Option{LR(0.01)}}}, LR(0.1))
	s := OneCycleLRMomentum(opt, 0.5, 6, 0.3, 25, 1e4, 0.85, 0.95)
	for i := range want.LR {
		if i > 0 {
			s.Step()
		}
		var lr, b1 []float64
		for _, g := range opt.ParamGroups() {
			lr, b1 = append(lr, g.LR()), append(b1, g.Options().Beta1)
		}
		near(t, "lr", lr, want.LR[i], 1e-9)
		near(t, "beta1", b1, want.Beta1[i], 1e-9)
	}
	for name, o := range map[string]Optimizer{"adadelta": AdadeltaWith(Tensors(q0)), "rprop": RpropWith(Tensors(q0)), "asgd": ASGDWith(Tensors(q0))} {
		testenv.Raises[*ember.ValueError](t, name, func() { OneCycleLRMomentum(o, 0.5, 6, 0.3, 25, 1e4, 0.85, 0.95) })
	}
}

// TestMoreStateDictsThroughSafetensors: every new optimizer's state dict
// (ASGD's and NAdam's scalar eta, mu and mu_product included) and
// LBFGS's survive weights.SaveSafetensors and LoadSafetensors: an
// optimizer that loads it takes torch's sixth step.
func TestMoreStateDictsThroughSafetensors(t *testing.T) {
	f := readMoreFixture(t)
	dir := t.TempDir()
	for name, c := range moreCases {
		want := f.Optim.Cases[name]
		params := make([]Param, 3)
		for i, init := range f.Optim.Init {
			params[i] = Param{Tensor: init.on(ember.CPU).SetRequiresGrad(true)}
		}
		opt := c.mk(params)
		for k := range groupsSDAt {
			if k == groupsAddAt {
				opt.AddParamGroup(Group{Params: params[2:], Options: c.added})
			}
			for i := range min(3, 2+k/groupsAddAt) {
				params[i].Tensor.SetGrad(f.Optim.Grads[k][i].on(ember.CPU))
			}
			opt.Step()
		}
		path := filepath.Join(dir, name+".safetensors")
		if err := weights.SaveSafetensors(path, opt.StateDict()); err != nil {
			t.Fatal(err)
		}
		sd, err := weights.LoadSafetensors(path)
		if err != nil {
			t.Fatal(err)
		}
		fresh := c.mk(params)
		fresh.AddParamGroup(Group{Params: params[2:], Options: c.added})
		if err := fresh.LoadStateDict(sd); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range 3 {
			params[i].Tensor.SetGrad(f.Optim.Grads[groupsSDAt][i].on(ember.CPU))
		}
		fresh.Step()
		for i := range 3 {
			near(t, name+" step 6 after safetensors", params[i].Tensor.Detach().Cast(ember.Float64).Float64s(), want.Steps[groupsSDAt][i].Data, 1e-5)
		}
	}
	x, closure := lbfgsProblem(f, "rosen_wolfe", ember.CPU)
	opt := lbfgsOf(f, "rosen_wolfe", x)
	opt.Step(closure(opt))
	opt.Step(closure(opt))
	path := filepath.Join(dir, "lbfgs.safetensors")
	if err := weights.SaveSafetensors(path, opt.StateDict()); err != nil {
		t.Fatal(err)
	}
	sd, err := weights.LoadSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	fresh := lbfgsOf(f, "rosen_wolfe", x)
	if err := fresh.LoadStateDict(sd); err != nil {
		t.Fatal(err)
	}
	fresh.Step(closure(fresh))
	near(t, "LBFGS step 3 after safetensors", x.Detach().Float64s(), f.LBFGS["rosen_wolfe"].Steps[2].X.Data, 1e-9)
}
