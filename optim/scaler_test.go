package optim

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// TestGradScalerSequence runs a scripted overflow sequence, worked by hand
// with torch.cuda.amp.GradScaler's rules (torch 1.13's scaler refuses CPU
// tensors, so it cannot be run here): init scale 4, growth interval 2, SGD
// lr 0.1 on p = [1, 2] with loss (p·[g, 0.5])·scale.
func TestGradScalerSequence(t *testing.T) {
	p := ember.FromSlice([]float32{1, 2}, nil).SetRequiresGrad(true)
	opt := NewSGD([]Param{{Name: "p", Tensor: p}}, nil, 0.1, 0, 0, 0, false)
	s := NewGradScaler().WithInitScale(4)
	s.GrowthInterval = 2
	inf, nan := math.Inf(1), math.NaN()
	steps := []struct {
		g           float64
		ran         bool
		scale       float64 // after Update
		tracker     float64
		p0, p1      float32
		unscaleWant []float32 // explicit Unscale before Step: the unscaled grads
	}{
		{1, true, 4, 1, 0.9, 1.95, nil},
		{inf, false, 2, 0, 0.9, 1.95, nil},
		{2, true, 2, 1, 0.7, 1.9, nil},
		{3, true, 4, 0, 0.4, 1.85, nil},
		{nan, false, 2, 0, 0.4, 1.85, nil},
		{4, true, 2, 1, 0, 1.8, []float32{4, 0.5}},
		{5, true, 4, 0, -0.5, 1.75, nil},
	}
	for i, st := range steps {
		opt.ZeroGrad()
		loss := p.Mul(ember.FromSlice([]float32{float32(st.g), 0.5}, nil)).Sum()
		s.ScaleLoss(loss).Backward()
		if st.unscaleWant != nil {
			s.Unscale(opt)
			if g := p.Grad().Float32s(); g[0] != st.unscaleWant[0] || g[1] != st.unscaleWant[1] {
				t.Errorf("step %d: unscaled grad %v, want %v", i, g, st.unscaleWant)
			}
		}
		if ran := s.Step(opt); ran != st.ran {
			t.Errorf("step %d: ran %v, want %v", i, ran, st.ran)
		}
		s.Update()
		sd := s.StateDict()
		if sd["scale"] != st.scale || sd["_growth_tracker"] != st.tracker {
			t.Errorf("step %d: scale %v tracker %v, want %v %v", i, sd["scale"], sd["_growth_tracker"], st.scale, st.tracker)
		}
		if v := p.Detach().Float32s(); math.Abs(float64(v[0]-st.p0)) > 1e-6 || math.Abs(float64(v[1]-st.p1)) > 1e-6 {
			t.Errorf("step %d: p %v, want [%v %v]", i, v, st.p0, st.p1)
		}
	}
	r := NewGradScaler()
	if err := r.LoadStateDict(s.StateDict()); err != nil || r.Scale() != 4 || r.GrowthInterval != 2 {
		t.Errorf("LoadStateDict: %v %v %v", err, r.Scale(), r.GrowthInterval)
	}
	if err := r.LoadStateDict(map[string]float64{"scale": 1}); err == nil {
		t.Error("LoadStateDict took an incomplete state")
	}
}

// TestGradScalerMisuse: a second Unscale before Update, an optimizer from
// elsewhere and a nil one panic with *ember.ValueError, which ember.Try
// returns (PyTorch raises RuntimeError for the first).
func TestGradScalerMisuse(t *testing.T) {
	p := ember.FromSlice([]float32{1, 2}, nil).SetRequiresGrad(true)
	opt := NewSGD([]Param{{Name: "p", Tensor: p}}, nil, 0.1, 0, 0, 0, false)
	s := NewGradScaler()
	s.ScaleLoss(p.Sum()).Backward()
	s.Unscale(opt)
	for name, f := range map[string]func(){
		"Unscale twice": func() { s.Unscale(opt) },
		"nil optimizer": func() { s.Step(nil) },
		"ScaleLoss nil": func() { s.ScaleLoss(nil) },
	} {
		err := ember.Try(f)
		var ve *ember.ValueError
		var se *ember.ShapeError
		if !errors.As(err, &ve) && !errors.As(err, &se) {
			t.Errorf("%s: %v, want a typed ember error", name, err)
		}
	}
}

// TestHyperParameterChecks: the constructors refuse what PyTorch's refuse,
// with its messages (NaNs too), and take the boundary values it takes.
func TestHyperParameterChecks(t *testing.T) {
	ps := []Param{{Name: "p", Tensor: ember.Ones(ember.Shape{2}).SetRequiresGrad(true)}}
	nan := math.NaN()
	for want, f := range map[string]func(){
		"Invalid learning rate: -0.1":                              func() { NewSGD(ps, nil, -0.1, 0, 0, 0, false) },
		"Invalid learning rate: NaN":                               func() { NewAdam(ps, nil, nan, 0.9, 0.999, 1e-8, 0) },
		"Invalid momentum value: -1":                               func() { NewSGD(ps, nil, 0.1, -1, 0, 0, false) },
		"Invalid weight_decay value: -0.01":                        func() { NewSGD(ps, nil, 0.1, 0, 0, -0.01, false) },
		"Nesterov momentum requires a momentum and zero dampening": func() { NewSGD(ps, nil, 0.1, 0.9, 0.1, 0, true) },
		"Invalid epsilon value: -1e-08":                            func() { NewAdam(ps, nil, 1e-3, 0.9, 0.999, -1e-8, 0) },
		"Invalid beta parameter at index 0: 1":                     func() { NewAdamW(ps, nil, 1e-3, 1, 0.999, 1e-8, 0.01) },
		"Invalid beta parameter at index 1: NaN":                   func() { NewAdam(ps, nil, 1e-3, 0.9, nan, 1e-8, 0) },
		`parameter "q" is a nil tensor`:                            func() { NewSGD([]Param{{Name: "q"}}, nil, 0.1, 0, 0, 0, false) },
	} {
		err := ember.Try(f)
		var ve *ember.ValueError
		if !errors.As(err, &ve) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%v, want a *ember.ValueError saying %q", err, want)
		}
	}
	NewSGD(ps, nil, 0, 0, 0, 0, false)
	NewSGD(ps, nil, 0.1, 0.9, 0, 0, true)
	NewAdam(ps, nil, 1e-3, 0, 0, 0, 0)
	if err := ember.Try(func() { NewAdamW(ps, nil, -1, 0.9, 0.999, 1e-8, 0) }); err == nil || !strings.HasPrefix(err.Error(), "optim.AdamW:") {
		t.Errorf("AdamW's error %v does not name it", err)
	}
}

// TestSchedulerChecks: a scheduler's step size, period and total steps
// below 1 (integer division by zero, NaN rates), pct_start outside [0, 1]
// and a nil optimizer are *ember.ValueError when it is made.
func TestSchedulerChecks(t *testing.T) {
	opt := NewSGD(Tensors(ember.Ones(ember.Shape{2}).SetRequiresGrad(true)), nil, 0.1, 0, 0, 0, false)
	for name, f := range map[string]func(){
		"StepLR 0":         func() { StepLR(opt, 0, 0.1) },
		"Cosine 0":         func() { CosineAnnealingLR(opt, 0, 0) },
		"OneCycle 0 steps": func() { OneCycleLR(opt, 0.1, 0, 0.3, 25, 1e4) },
		"OneCycle pct 1.5": func() { OneCycleLR(opt, 0.1, 10, 1.5, 25, 1e4) },
		"OneCycle div 0":   func() { OneCycleLR(opt, 0.1, 10, 0.3, 0, 1e4) },
		"StepLR nil":       func() { StepLR(nil, 1, 0.1) },
		"Cosine nil":       func() { CosineAnnealingLR(nil, 1, 0) },
		"OneCycle nil":     func() { OneCycleLR(nil, 0.1, 10, 0.3, 25, 1e4) },
	} {
		err := ember.Try(f)
		var ve *ember.ValueError
		if !errors.As(err, &ve) {
			t.Errorf("%s: %v, want a *ember.ValueError", name, err)
		}
	}
	// pct_start·total_steps = 1: no warm-up steps, the schedule starts at
	// max_lr (PyTorch divides by zero there)
	OneCycleLR(opt, 0.1, 10, 0.1, 25, 1e4)
	if lr := opt.LR(); lr != 0.1 {
		t.Errorf("OneCycleLR without warm-up starts at %v, want 0.1", lr)
	}
}

// TestLoadStateDictRefusesBadState: an optimizer's or a scaler's state dict
// that is empty, holds a nil, meta or non-finite value, or settings the
// constructors refuse is an error that changes nothing (an empty one had
// silently dropped the optimizer's state; a NaN scale or learning rate
// loaded, and a nil or meta tensor panicked).
func TestLoadStateDictRefusesBadState(t *testing.T) {
	p := ember.Ones(ember.Shape{2}).SetRequiresGrad(true)
	opt := NewAdam(Tensors(p), nil, 1e-3, 0.9, 0.999, 1e-8, 0)
	p.Sum().Backward()
	opt.Step()
	good := opt.StateDict()
	with := func(k string, v *ember.Tensor) map[string]*ember.Tensor {
		m := map[string]*ember.Tensor{}
		for kk, vv := range good {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	for name, sd := range map[string]map[string]*ember.Tensor{
		"empty":       {},
		"nil tensor":  with("state.0.exp_avg", nil),
		"meta tensor": with("param_groups.0.eps", ember.Scalar(1, ember.On(ember.Meta))),
		"NaN rate":    with("param_groups.0.lr", ember.Scalar(math.NaN())),
		"Inf beta":    with("param_groups.0.beta1", ember.Scalar(math.Inf(1))),
	} {
		var err error
		if perr := ember.Try(func() { err = opt.LoadStateDict(sd) }); perr != nil || err == nil {
			t.Errorf("%s: error %v, panic %v; want an error", name, err, perr)
		}
		if opt.LR() != 1e-3 || len(opt.StateDict()) != len(good) {
			t.Errorf("%s: a failed load changed the optimizer", name)
		}
	}
	if err := opt.LoadStateDict(good); err != nil {
		t.Fatal(err)
	}
	s := NewGradScaler()
	for _, c := range []struct {
		k string
		v float64
	}{{"scale", math.NaN()}, {"scale", 0}, {"scale", math.Inf(1)}, {"growth_factor", 0.5}, {"backoff_factor", 1}, {"growth_interval", 0}, {"growth_interval", 2.5}, {"_growth_tracker", -1}} {
		sd := NewGradScaler().StateDict()
		sd[c.k] = c.v
		if err := s.LoadStateDict(sd); err == nil || s.Scale() != 65536 {
			t.Errorf("GradScaler %s = %v: %v (scale now %v)", c.k, c.v, err, s.Scale())
		}
	}
}

// TestGradScalerStepUpdateOrder: as torch.cuda.amp.GradScaler, a second Step before
// Update (which had stepped the optimizer twice on the same gradients) and
// an Update with no Step or Unscale since the last (which had counted
// towards growth) panic; a growth interval past int32 or a tracker not
// below it is refused on load (a huge interval had wrapped negative).
func TestGradScalerStepUpdateOrder(t *testing.T) {
	p := ember.FromSlice([]float32{1, 2}, nil).SetRequiresGrad(true)
	opt := NewSGD([]Param{{Name: "p", Tensor: p}}, nil, 0.1, 0, 0, 0, false)
	s := NewGradScaler().WithInitScale(2)
	p.SetGrad(ember.FromSlice([]float32{2, 4}, nil))
	s.Step(opt)
	testenv.Raises[*ember.ValueError](t, "second Step", func() { s.Step(opt) })
	if v := p.Detach().Float32s(); v[0] != 0.9 || v[1] != 1.8 {
		t.Errorf("p = %v, want [0.9 1.8] (one step)", v)
	}
	s.Update()
	testenv.Raises[*ember.ValueError](t, "Update with no Step", func() { s.Update() })
	p.SetGrad(ember.FromSlice([]float32{2, 4}, nil))
	s.Step(opt) // allowed again after Update
	s.Update()
	for _, sd := range []map[string]float64{
		{"scale": 2, "growth_factor": 2, "backoff_factor": 0.5, "growth_interval": 1e300, "_growth_tracker": 0},
		{"scale": 2, "growth_factor": 2, "backoff_factor": 0.5, "growth_interval": 10, "_growth_tracker": 10},
	} {
		if err := s.LoadStateDict(sd); err == nil {
			t.Errorf("LoadStateDict(%v) took it: %v", sd, s.StateDict())
		}
	}
}

// TestGradScalerNoGradients: a Step whose optimizer has no gradient at all
// (Backward forgotten) panics, as PyTorch's "No inf checks were recorded
// for this optimizer."; an inf in any of several gradients (checked on
// the device, read back once) skips the step.
func TestGradScalerNoGradients(t *testing.T) {
	p := ember.FromSlice([]float32{1, 2}, nil).SetRequiresGrad(true)
	opt := NewSGD([]Param{{Name: "p", Tensor: p}}, nil, 0.1, 0, 0, 0, false)
	s := NewGradScaler().WithInitScale(2)
	e := testenv.Raises[*ember.ValueError](t, "Step without gradients", func() { s.Step(opt) })
	if e.Msg != "No inf checks were recorded for this optimizer." {
		t.Errorf("message %q", e.Msg)
	}
	if v := p.Detach().Float32s(); v[0] != 1 || v[1] != 2 {
		t.Errorf("p = %v after the refused Step, want [1 2]", v)
	}
	// after an Update, a Step with gradients goes on; an inf in one of
	// three gradients skips it
	s = NewGradScaler().WithInitScale(2)
	q := ember.FromSlice([]float32{1}, nil).SetRequiresGrad(true)
	r := ember.FromSlice([]float32{1}, nil).SetRequiresGrad(true)
	opt = NewSGD([]Param{{"p", p}, {"q", q}, {"r", r}}, nil, 0.1, 0, 0, 0, false)
	p.SetGrad(ember.FromSlice([]float32{2, 4}, nil))
	q.SetGrad(ember.FromSlice([]float32{float32(math.Inf(1))}, nil))
	r.SetGrad(ember.FromSlice([]float32{2}, nil))
	if s.Step(opt) {
		t.Error("Step ran with an infinite gradient")
	}
	s.Update()
	q.SetGrad(ember.FromSlice([]float32{2}, nil))
	p.SetGrad(ember.FromSlice([]float32{2, 4}, nil))
	r.SetGrad(ember.FromSlice([]float32{2}, nil))
	if !s.Step(opt) {
		t.Error("Step skipped with finite gradients")
	}
}
