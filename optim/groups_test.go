package optim

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/weights"
)

// groupsFixture is testdata/nn/optim_groups.json, written by
// testdata/gen_optim_groups_fixtures.py (PyTorch 1.13).
type groupsFixture struct {
	Optim struct {
		Init  []fixTensor
		Grads [][]fixTensor
		Cases map[string]struct {
			Steps     [][]fixTensor
			StateDict map[string]fixTensor `json:"state_dict"`
		}
	}
	Sched map[string]json.RawMessage
}

type fixTensor struct {
	Shape []int
	Data  []float64
}

func (f fixTensor) on(dev ember.Device) *ember.Tensor {
	return ember.FromSlice(f.Data, ember.Shape(f.Shape)).Cast(ember.Float32).To(dev)
}

// stateDict makes a torch state dict (flattened by the generator) into
// ember's, as weights.LoadSafetensors would give it.
func stateDictOf(m map[string]fixTensor) map[string]*ember.Tensor {
	out := map[string]*ember.Tensor{}
	for k, v := range m {
		t := ember.FromSlice(v.Data, ember.Shape(v.Shape))
		if strings.HasSuffix(k, ".params") {
			t = t.Cast(ember.Int64)
		}
		out[k] = t
	}
	return out
}

func readGroupsFixture(t *testing.T) groupsFixture {
	t.Helper()
	b, err := os.ReadFile("../testdata/nn/optim_groups.json")
	if err != nil {
		t.Fatal(err)
	}
	var f groupsFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// eachDevice runs f on the CPU and on an emulated cuda:0 (the CUDA
// backend's kernels run on the CPU).
func eachDevice(t *testing.T, f func(t *testing.T, dev ember.Device)) {
	t.Run("cpu", func(t *testing.T) { f(t, ember.CPU) })
	t.Run("cuda", func(t *testing.T) {
		if testing.Short() {
			t.Skip("emulated CUDA: in the full suite")
		}
		if ember.DeviceCount() == 0 {
			restore := cudatest.Use(t)
			defer restore()
		}
		f(t, ember.CUDA(0))
	})
}

type grouped interface {
	Optimizer
	ParamGroups() []*ParamGroup
	AddParamGroup(Group)
}

// groupCases build the generator's optimizers: two groups from p[0] and
// p[1], and the group add_param_group adds with p[2] before the third
// step (nil: none).
var groupCases = map[string]struct {
	mk    func(p []Param) grouped
	added []Option
}{
	"sgd_momentum": {func(p []Param) grouped {
		return SGDGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.03), WeightDecay(0)}}}, 0.1, Momentum(0.9), WeightDecay(0.01))
	}, []Option{LR(0.05), Momentum(0.5), Nesterov()}},
	"adam": {func(p []Param) grouped {
		return AdamGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.003), WeightDecay(0), Betas(0.8, 0.99)}}}, LR(0.01), WeightDecay(0.1))
	}, []Option{LR(0.02), AMSGrad()}},
	"adamw": {func(p []Param) grouped {
		return AdamWGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.02), WeightDecay(0)}}}, LR(0.01), WeightDecay(0.05))
	}, []Option{LR(0.005), Eps(1e-6)}},
	"rmsprop": {func(p []Param) grouped {
		return RMSpropGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.005), WeightDecay(0), Alpha(0.9)}}}, LR(0.01), Momentum(0.5), WeightDecay(0.02))
	}, []Option{Centered()}},
	"adagrad": {func(p []Param) grouped {
		return AdagradGroups([]Group{{Params: p[:1]}, {Params: p[1:2], Options: []Option{LR(0.05), WeightDecay(0), InitialAccumulator(0.1)}}}, LR(0.1), LRDecay(0.01), WeightDecay(0.01))
	}, nil},
}

const groupsAddAt, groupsSDAt = 2, 5

// TestParamGroupsMatchTorch: six steps of SGD (momentum; the added group
// Nesterov), Adam (the added group AMSGrad), AdamW, RMSprop (the added
// group centered) and Adagrad over two groups differing in lr, weight
// decay and more, a third group added before the third step, against
// PyTorch 1.13; the state dict after five steps against torch's
// state_dict() (the same keys and values), and the sixth step again from
// an optimizer that loaded torch's state dict.
func TestParamGroupsMatchTorch(t *testing.T) {
	f := readGroupsFixture(t)
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		for name, c := range groupCases {
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
				if k == groupsAddAt && c.added != nil {
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
			if len(opt.ParamGroups()) != n {
				t.Errorf("%s: %d groups, want %d", name, len(opt.ParamGroups()), n)
			}

			// resume from torch's state dict after five steps
			for i := range 3 {
				params[i] = Param{Tensor: want.Steps[groupsSDAt-1][i].on(dev).SetRequiresGrad(true)}
			}
			opt = c.mk(params)
			if c.added != nil {
				opt.AddParamGroup(Group{Params: params[2:], Options: c.added})
			}
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

// compareStateDict checks ember's state dict against torch's (flattened):
// the same keys when exact (else ember's a subset), the same values.
func compareStateDict(t *testing.T, name string, got map[string]*ember.Tensor, want map[string]fixTensor, exact bool) {
	t.Helper()
	gk, wk := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))
	if exact && !slices.Equal(gk, wk) {
		t.Errorf("%s: state dict keys\n%v\nwant torch's\n%v", name, gk, wk)
	}
	for _, k := range gk {
		w, ok := want[k]
		if !ok {
			t.Errorf("%s: state dict key %s, which torch's lacks", name, k)
			continue
		}
		g := got[k]
		if !g.Shape().Equal(ember.Shape(w.Shape)) && !(g.NumElements() == 1 && len(w.Data) == 1) {
			t.Errorf("%s: %s has shape %v, torch's %v", name, k, g.Shape(), w.Shape)
			continue
		}
		near(t, name+" "+k, g.Cast(ember.Float64).CPU().Float64s(), w.Data, 1e-5)
	}
}

func twoGroups() *SGD {
	q0, q1 := ember.Zeros(ember.Shape{1}, ember.WithGrad()), ember.Zeros(ember.Shape{1}, ember.WithGrad())
	return SGDGroups([]Group{{Params: Tensors(q0)}, {Params: Tensors(q1), Options: []Option{LR(0.01), Momentum(0.8)}}}, 0.1, Momentum(0.9))
}

// TestSchedulesOverGroupsMatchTorch: every schedule drives each group from
// its own initial rate (LambdaLR with one function per group; OneCycleLR
// sets both groups' rate and momentum alike), as PyTorch 1.13's over an
// SGD with two groups (lr 0.1 and 0.01, momentum 0.9 and 0.8); the state
// dict after them carries torch's values (initial_lr included).
func TestSchedulesOverGroupsMatchTorch(t *testing.T) {
	f := readGroupsFixture(t)
	var metrics []float64
	if err := json.Unmarshal(f.Sched["plateau_metrics"], &metrics); err != nil {
		t.Fatal(err)
	}
	mks := map[string]func(o *SGD) Scheduler{
		"steplr":      func(o *SGD) Scheduler { return StepLR(o, 3, 0.5) },
		"multistep":   func(o *SGD) Scheduler { return MultiStepLR(o, []int{2, 5, 5}, 0.5) },
		"exponential": func(o *SGD) Scheduler { return ExponentialLR(o, 0.8) },
		"cosine":      func(o *SGD) Scheduler { return CosineAnnealingLR(o, 6, 0.001) },
		"linear":      func(o *SGD) Scheduler { return LinearLR(o, 0.25, 1, 4) },
		"lambda2": func(o *SGD) Scheduler {
			return LambdaLRGroups(o, []func(int) float64{func(e int) float64 { return math.Pow(0.9, float64(e)) }, func(e int) float64 { return 1 / float64(e+1) }})
		},
		"warm_restarts": func(o *SGD) Scheduler { return CosineAnnealingWarmRestarts(o, 3, 2, 0.001) },
		"sequential": func(o *SGD) Scheduler {
			return SequentialLR(o, []Scheduler{LinearLR(o, 0.1, 1, 3), CosineAnnealingLR(o, 5, 0.001)}, []int{3})
		},
		"onecycle":          func(o *SGD) Scheduler { return OneCycleLR(o, 0.5, 10, 0.3, 25, 1e4) },
		"onecycle_momentum": func(o *SGD) Scheduler { return OneCycleLRMomentum(o, 0.5, 10, 0.3, 25, 1e4, 0.85, 0.95) },
		"plateau":           nil,
	}
	for name, mk := range mks {
		var want struct {
			LR, Momentum [][]float64
			StateDict    map[string]fixTensor `json:"state_dict"`
		}
		if err := json.Unmarshal(f.Sched[name], &want); err != nil || want.LR == nil {
			t.Fatalf("%s: no fixture (%v)", name, err)
		}
		opt := twoGroups()
		var s Scheduler
		var p *Plateau
		if mk != nil {
			s = mk(opt)
		} else {
			p = ReduceLROnPlateau(opt, "min", 0.5, 1)
			p.MinLR = 0.004
		}
		rates := func() (lr, m []float64) {
			for _, g := range opt.ParamGroups() {
				lr, m = append(lr, g.LR()), append(m, g.Options().Momentum)
			}
			return
		}
		for i := range want.LR {
			if i > 0 {
				opt.Step()
				if s != nil {
					s.Step()
				} else {
					p.Step(metrics[i-1])
				}
			}
			lr, m := rates()
			near(t, name+" lr at "+string(rune('0'+i)), lr, want.LR[i], 1e-9)
			near(t, name+" momentum at "+string(rune('0'+i)), m, want.Momentum[i], 1e-9)
		}
		// the keys torch adds that ember does not keep (OneCycleLR's
		// max_lr, ...) are left out; steplr's must be exactly torch's
		compareStateDict(t, name, opt.StateDict(), want.StateDict, name == "steplr")
		if s != nil && s.LR() != opt.LR() {
			t.Errorf("%s: the schedule's LR %v is not the first group's %v", name, s.LR(), opt.LR())
		}
	}
}

// TestParamGroupsRefuse: torch's ValueErrors for groups ("some parameters
// appear in more than one parameter group", no group at all, a
// LoadStateDict of other groups, a wrong number of lr_lambdas), and
// ember's for an option the optimizer does not take or a value out of
// range in a group; a refused AddParamGroup or Set changes nothing. An
// empty group is taken, as by torch.
func TestParamGroupsRefuse(t *testing.T) {
	a, b, c := ember.Zeros(ember.Shape{2}, ember.WithGrad()), ember.Zeros(ember.Shape{3}, ember.WithGrad()), ember.Zeros(ember.Shape{1}, ember.WithGrad())
	ve := testenv.Raises[*ember.ValueError](t, "a in two groups", func() {
		SGDGroups([]Group{{Params: []Param{{"w", a}}}, {Params: []Param{{"v", a}}}}, 0.1)
	})
	if ve.Op != "optim.SGD" || ve.Msg != `some parameters appear in more than one parameter group ("v" is the same tensor as "w")` {
		t.Error(ve)
	}
	if ve = testenv.Raises[*ember.ValueError](t, "no group", func() { AdamGroups(nil) }); ve.Msg != "optimizer got an empty parameter list" {
		t.Error(ve)
	}
	for name, f := range map[string]func(){
		"sgd group betas":      func() { SGDGroups([]Group{{Params: Tensors(a), Options: []Option{Betas(0.1, 0.2)}}}, 0.1) },
		"adam group momentum":  func() { AdamGroups([]Group{{Params: Tensors(a), Options: []Option{Momentum(0.9)}}}) },
		"group WithGrad":       func() { AdamGroups([]Group{{Params: Tensors(a), Options: []Option{WithGrad(nil)}}}) },
		"group nil option":     func() { AdamGroups([]Group{{Params: Tensors(a), Options: []Option{nil}}}) },
		"group lr -1":          func() { AdamGroups([]Group{{Params: Tensors(a), Options: []Option{LR(-1)}}}) },
		"group beta 1":         func() { AdamWGroups([]Group{{Params: Tensors(a), Options: []Option{Betas(1, 0.9)}}}) },
		"group nesterov":       func() { SGDGroups([]Group{{Params: Tensors(a), Options: []Option{Nesterov()}}}, 0.1) },
		"rmsprop group alpha":  func() { RMSpropGroups([]Group{{Params: Tensors(a), Options: []Option{Alpha(-0.5)}}}) },
		"adagrad group decay":  func() { AdagradGroups([]Group{{Params: Tensors(a), Options: []Option{LRDecay(-1)}}}) },
		"adagrad group alpha":  func() { AdagradGroups([]Group{{Params: Tensors(a), Options: []Option{Alpha(0.5)}}}) },
		"lambdas for 1 of 2":   func() { LambdaLRGroups(twoGroups(), []func(int) float64{func(int) float64 { return 1 }}) },
		"nil lambda of groups": func() { LambdaLRGroups(twoGroups(), []func(int) float64{func(int) float64 { return 1 }, nil}) },
	} {
		testenv.Raises[*ember.ValueError](t, name, f)
	}
	if e := testenv.Raises[*ember.ValueError](t, "lambdas", func() {
		LambdaLRGroups(twoGroups(), []func(int) float64{func(int) float64 { return 1 }})
	}); e.Msg != "Expected 2 lr_lambdas, but got 1" {
		t.Error(e)
	}

	// an empty group is taken (torch 1.13 takes {'params': []})
	opt := SGDGroups([]Group{{Params: Tensors(a)}, {}}, 0.1, Momentum(0.9))
	opt.AddParamGroup(Group{})
	// a refused AddParamGroup changes nothing
	for name, g := range map[string]Group{
		"a again":   {Params: Tensors(b, a)},
		"twice":     {Params: Tensors(b, b)},
		"bad value": {Params: Tensors(b), Options: []Option{Momentum(-1)}},
		"int64":     {Params: Tensors(ember.Zeros(ember.Shape{1}, ember.Dtype(ember.Int64)))},
		"foreign":   {Params: Tensors(b), Options: []Option{Eps(1)}},
	} {
		testenv.Raises[error](t, "AddParamGroup "+name, func() { opt.AddParamGroup(g) })
	}
	if len(opt.ParamGroups()) != 3 || len(opt.params) != 1 || len(opt.state) != 1 {
		t.Fatalf("refused AddParamGroups changed the optimizer: %d groups, %d params", len(opt.ParamGroups()), len(opt.params))
	}
	opt.AddParamGroup(Group{Params: []Param{{"b", b}, {"c", c}}, Options: []Option{LR(0.5), Dampening(0.1)}})
	g := opt.ParamGroups()[3]
	if o := g.Options(); o.LR != 0.5 || o.Momentum != 0.9 || o.Dampening != 0.1 || len(g.Params()) != 2 {
		t.Errorf("added group: %+v", o)
	}
	// Set: checked, and all or nothing
	testenv.Raises[*ember.ValueError](t, "Set momentum -1", func() { g.Set(LR(0.7), Momentum(-1)) })
	testenv.Raises[*ember.ValueError](t, "Set betas", func() { g.Set(Betas(0.1, 0.2)) })
	g.Set(Momentum(0.5))
	if o := g.Options(); o.LR != 0.5 || o.Momentum != 0.5 || opt.Momentum != 0.9 {
		t.Errorf("after Set: group %+v, default momentum %v", o, opt.Momentum)
	}
	// a group follows the defaults it does not set
	opt.Dampening = 0.2
	if o, o0 := g.Options(), opt.ParamGroups()[0].Options(); o.Dampening != 0.1 || o0.Dampening != 0.2 {
		t.Errorf("defaults: group 3 dampening %v (its own 0.1), group 0 %v (the field 0.2)", o.Dampening, o0.Dampening)
	}

	// LoadStateDict of other groups: torch's errors, nothing changed
	two := AdamGroups([]Group{{Params: Tensors(a)}, {Params: Tensors(b), Options: []Option{LR(0.01)}}})
	a.SetGrad(ember.Ones(ember.Shape{2}))
	b.SetGrad(ember.Ones(ember.Shape{3}))
	two.Step()
	sd := two.StateDict()
	for name, c := range map[string]struct {
		opt  Optimizer
		want string
	}{
		"one group":  {AdamWith(Tensors(a, b)), "loaded state dict has a different number of parameter groups"},
		"three":      {AdamGroups([]Group{{Params: Tensors(a)}, {Params: Tensors(b)}, {Params: Tensors(c)}}), "loaded state dict has a different number of parameter groups"},
		"other size": {AdamGroups([]Group{{Params: Tensors(a, c)}, {Params: Tensors(b)}}), "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"},
	} {
		err := c.opt.LoadStateDict(sd)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
		if _, ok := c.opt.StateDict()["state.0.exp_avg"]; ok {
			t.Errorf("%s: a refused load changed the optimizer", name)
		}
	}
}

// TestOneGroupStateDictCompat: a one-group state dict as ember wrote it
// before groups (no param_groups.0.params) still loads, and a grouped one
// goes through a safetensors file.
func TestOneGroupStateDictCompat(t *testing.T) {
	p := ember.Ones(ember.Shape{2}, ember.WithGrad())
	opt := SGDWith(Tensors(p), 0.1, Momentum(0.9))
	p.SetGrad(ember.Ones(ember.Shape{2}))
	opt.Step()
	sd := opt.StateDict()
	if v := sd["param_groups.0.params"]; v == nil || v.DType() != ember.Int64 || !slices.Equal(v.Float64s(), []float64{0}) {
		t.Fatalf("param_groups.0.params = %v", v)
	}
	delete(sd, "param_groups.0.params")
	sd["param_groups.0.momentum"] = ember.Scalar(0.5)
	opt2 := SGDWith(Tensors(ember.Ones(ember.Shape{2}, ember.WithGrad())), 0.1)
	if err := opt2.LoadStateDict(sd); err != nil {
		t.Fatal(err)
	}
	if opt2.Momentum != 0.5 || opt2.state[0]["momentum_buffer"] == nil {
		t.Errorf("old state dict: momentum %v, state %v", opt2.Momentum, opt2.state[0])
	}

	a, b := ember.Ones(ember.Shape{2}, ember.WithGrad()), ember.Ones(ember.Shape{3}, ember.WithGrad())
	mk := func() *Adam {
		return AdamWGroups([]Group{{Params: Tensors(a)}, {Params: Tensors(b), Options: []Option{WeightDecay(0), LR(0.5)}}})
	}
	two := mk()
	a.SetGrad(ember.Ones(ember.Shape{2}))
	b.SetGrad(ember.Ones(ember.Shape{3}))
	two.Step()
	path := t.TempDir() + "/optim.safetensors"
	if err := weights.SaveSafetensors(path, two.StateDict()); err != nil {
		t.Fatal(err)
	}
	loaded, err := weights.LoadSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	back := mk()
	if err := back.LoadStateDict(loaded); err != nil {
		t.Fatal(err)
	}
	if g := back.ParamGroups()[1].Options(); g.LR != 0.5 || g.WeightDecay != 0 || back.WeightDecay != 0.01 {
		t.Errorf("loaded group 1: %+v (default wd %v)", g, back.WeightDecay)
	}
	if s := back.state[1]["step"]; s == nil || s.Item() != 1 {
		t.Errorf("loaded state.1.step %v", s)
	}
}

// TestGradScalerAndClipOverGroups: GradScaler unscales and checks every
// group's gradients (an inf in the second group skips the step), and
// ClipGradNorm over every group's parameters scales them together; the
// step then uses each group's rate (hand-worked: SGD without momentum).
func TestGradScalerAndClipOverGroups(t *testing.T) {
	a, b := ember.Zeros(ember.Shape{1}, ember.WithGrad()), ember.Zeros(ember.Shape{1}, ember.WithGrad())
	opt := SGDGroups([]Group{{Params: Tensors(a)}, {Params: Tensors(b), Options: []Option{LR(0.01)}}}, 0.1)
	s := NewGradScaler().WithInitScale(4)
	a.SetGrad(ember.FromSlice([]float32{12}, ember.Shape{1}))
	b.SetGrad(ember.FromSlice([]float32{float32(math.Inf(1))}, ember.Shape{1}))
	if s.Step(opt) {
		t.Error("stepped with an inf gradient in group 1")
	}
	s.Update()
	if a.Item() != 0 || b.Item() != 0 || s.Scale() != 2 {
		t.Fatalf("after a skipped step: a %v b %v scale %v", a.Item(), b.Item(), s.Scale())
	}
	opt.ZeroGrad()
	a.SetGrad(ember.FromSlice([]float32{6}, ember.Shape{1}))  // 3 unscaled
	b.SetGrad(ember.FromSlice([]float32{-8}, ember.Shape{1})) // -4 unscaled
	s.Unscale(opt)
	var ps []*ember.Tensor
	for _, g := range opt.ParamGroups() {
		for _, p := range g.Params() {
			ps = append(ps, p.Tensor)
		}
	}
	total := nn.ClipGradNorm(ps, 1, 2).Item() // norm 5: gradients 0.6, -0.8
	if !s.Step(opt) {
		t.Fatal("step skipped")
	}
	near(t, "norm", []float64{total}, []float64{5}, 1e-6)
	near(t, "a", []float64{a.Item()}, []float64{-0.1 * 0.6}, 1e-6)
	near(t, "b", []float64{b.Item()}, []float64{0.01 * 0.8}, 1e-6)
}

// TestGroupAddedAfterSchedule: a schedule drives the groups the optimizer
// had when it was made (torch's base_lrs); a group added later keeps its
// rate, and a schedule made then starts it from that rate.
func TestGroupAddedAfterSchedule(t *testing.T) {
	opt := twoGroups()
	s := StepLR(opt, 1, 0.5)
	opt.AddParamGroup(Group{Params: Tensors(ember.Zeros(ember.Shape{1}, ember.WithGrad())), Options: []Option{LR(0.3)}})
	s.Step()
	var lrs []float64
	for _, g := range opt.ParamGroups() {
		lrs = append(lrs, g.LR())
	}
	near(t, "after a step", lrs, []float64{0.05, 0.005, 0.3}, 1e-12)
	s2 := ExponentialLR(opt, 0.1)
	s2.Step()
	lrs = lrs[:0]
	for _, g := range opt.ParamGroups() {
		lrs = append(lrs, g.LR())
	}
	near(t, "a second schedule", lrs, []float64{0.01, 0.001, 0.03}, 1e-12)
	if sd := opt.StateDict(); sd["param_groups.2.initial_lr"].Item() != 0.3 || sd["param_groups.0.initial_lr"].Item() != 0.1 {
		t.Errorf("initial_lr: %v %v", sd["param_groups.0.initial_lr"].Item(), sd["param_groups.2.initial_lr"].Item())
	}
}

// TestGroupStepRefusedChangesNothing: a Step that refuses one group's
// value (a default field set out of range after construction, which a
// group without its own value follows) panics before any group is
// updated, as the one-group Step did: no parameter moves, no state is
// made.
func TestGroupStepRefusedChangesNothing(t *testing.T) {
	for name, c := range map[string]struct {
		mk    func(a, b *ember.Tensor) Optimizer
		spoil func(o Optimizer)
	}{
		"rmsprop alpha": {func(a, b *ember.Tensor) Optimizer {
			return RMSpropGroups([]Group{{Params: Tensors(a), Options: []Option{Alpha(0.9)}}, {Params: Tensors(b)}}, LR(0.1))
		}, func(o Optimizer) { o.(*RMSprop).Alpha = -1 }},
		"adagrad lr_decay": {func(a, b *ember.Tensor) Optimizer {
			return AdagradGroups([]Group{{Params: Tensors(a), Options: []Option{LRDecay(0.01)}}, {Params: Tensors(b)}}, LR(0.1))
		}, func(o Optimizer) { o.(*Adagrad).LRDecay = -1 }},
	} {
		a, b := ember.Ones(ember.Shape{2}, ember.WithGrad()), ember.Ones(ember.Shape{2}, ember.WithGrad())
		opt := c.mk(a, b)
		c.spoil(opt)
		a.SetGrad(ember.Ones(ember.Shape{2}))
		b.SetGrad(ember.Ones(ember.Shape{2}))
		testenv.Raises[*ember.ValueError](t, name, opt.Step)
		if got := append(a.Float64s(), b.Float64s()...); !slices.Equal(got, []float64{1, 1, 1, 1}) {
			t.Errorf("%s: a refused Step moved the parameters to %v", name, got)
		}
		for k := range opt.StateDict() {
			if strings.HasPrefix(k, "state.") {
				t.Errorf("%s: a refused Step made state %s", name, k)
			}
		}
	}
}

// TestLambdaLRGroupsRefusedRecordsNothing: a LambdaLRGroups refused for
// its number of functions (or a nil one) leaves the groups without an
// initial_lr, as torch's LambdaLR checks its lr_lambdas before its
// scheduler records initial_lr: a schedule made after a rate change then
// starts from the new rate.
func TestLambdaLRGroupsRefusedRecordsNothing(t *testing.T) {
	one := func(int) float64 { return 1 }
	for name, fs := range map[string][]func(int) float64{
		"one for two": {one},
		"a nil one":   {one, nil},
	} {
		opt := twoGroups()
		testenv.Raises[*ember.ValueError](t, name, func() { LambdaLRGroups(opt, fs) })
		for k := range opt.StateDict() {
			if strings.HasSuffix(k, ".initial_lr") {
				t.Errorf("%s: a refused LambdaLRGroups recorded %s", name, k)
			}
		}
		opt.ParamGroups()[0].SetLR(0.4)
		StepLR(opt, 1, 0.5).SetStepCount(1)
		if lr := opt.ParamGroups()[0].LR(); lr != 0.2 {
			t.Errorf("%s: a later StepLR took group 0 from 0.4 to %v, want 0.2", name, lr)
		}
	}
}

// TestLoadStateDictKeepsDefaults: loading the state dict of a one-group
// optimizer whose group sets its own momentum keeps it the group's: the
// optimizer's default (SGD.Momentum, which AddParamGroup gives a new
// group) stays the constructor's, as torch's load_state_dict leaves
// defaults alone (torch 1.13: the added group's momentum is 0).
func TestLoadStateDictKeepsDefaults(t *testing.T) {
	a, b := ember.Zeros(ember.Shape{1}, ember.WithGrad()), ember.Zeros(ember.Shape{1}, ember.WithGrad())
	mk := func() *SGD { return SGDGroups([]Group{{Params: Tensors(a), Options: []Option{Momentum(0.5)}}}, 0.1) }
	sd := mk().StateDict()
	opt := mk()
	if err := opt.LoadStateDict(sd); err != nil {
		t.Fatal(err)
	}
	opt.AddParamGroup(Group{Params: Tensors(b)})
	var got []float64
	for _, g := range opt.ParamGroups() {
		got = append(got, g.Options().Momentum)
	}
	if !slices.Equal(got, []float64{0.5, 0}) || opt.Momentum != 0 {
		t.Errorf("groups' momentum %v (default %v), want torch's [0.5 0] (default 0)", got, opt.Momentum)
	}
}
