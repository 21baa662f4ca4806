package optim

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// GradScaler is dynamic loss scaling for float16 training, as
// torch.cuda.amp.GradScaler: Scale multiplies the loss by the scale before
// Backward; Step unscales the gradients (unless Unscale already did, e.g.
// before gradient clipping), skips the optimizer step when any of them is
// infinite or NaN, and Update then halves the scale (BackoffFactor) after a
// skipped step or doubles it (GrowthFactor) after GrowthInterval steps in a
// row without one. The scale is kept as a float32, as PyTorch keeps it.
//
// Several optimizers may share one scaler, as in PyTorch: Unscale and Step
// each of them, then Update once. Each optimizer's step is skipped when its
// own gradients hold an inf or NaN; Update backs off when any did.
type GradScaler struct {
	GrowthFactor, BackoffFactor float64
	GrowthInterval              int
	scale                       float32
	tracker                     int
	// per optimizer since the last Update: unscaled, and whether an
	// infinite or NaN gradient was found
	foundInf map[Optimizer]bool
	stepped  map[Optimizer]bool // Step was called since the last Update
	// unchecked: Unscale found no gradient (Step refuses to go on, as
	// PyTorch's "No inf checks were recorded for this optimizer.")
	unchecked map[Optimizer]bool
}

// NewGradScaler returns a scaler with PyTorch's defaults: scale 65536,
// growth 2, backoff 0.5, growth interval 2000.
func NewGradScaler() *GradScaler {
	return &GradScaler{GrowthFactor: 2, BackoffFactor: 0.5, GrowthInterval: 2000, scale: 65536}
}

// WithInitScale sets the scale (init_scale) and returns s.
func (s *GradScaler) WithInitScale(v float64) *GradScaler {
	s.live("WithInitScale").scale = float32(v)
	return s
}

// live panics with a *ember.ValueError when s is nil (a scaler that was
// never constructed), and returns s.
func (s *GradScaler) live(op string) *GradScaler {
	if s == nil {
		nilOptimizer("GradScaler", op)
	}
	return s
}

// Scale returns the current scale.
func (s *GradScaler) Scale() float64 { return float64(s.live("Scale").scale) }

// ScaleLoss returns loss times the scale, for Backward.
func (s *GradScaler) ScaleLoss(loss *ember.Tensor) *ember.Tensor {
	return loss.MulScalar(float64(s.live("ScaleLoss").scale))
}

// params lists an optimizer's parameters (every optimizer of this package).
func params(opt Optimizer) []Param {
	if p, ok := opt.(interface{ parameters() []Param }); ok {
		return p.parameters()
	}
	panic(&ember.ValueError{Op: "optim.GradScaler", Msg: fmt.Sprintf("needs an optimizer of package optim, not %T", opt)})
}

func (b *base) parameters() []Param { return b.params }

// Unscale divides the gradients of opt's parameters by the scale, in place
// (multiplying by the float32 reciprocal, as PyTorch), and records whether
// any is infinite or NaN. Call it at most once between Steps, before
// clipping or reading the gradients.
func (s *GradScaler) Unscale(opt Optimizer) {
	s.live("Unscale")
	if _, done := s.foundInf[opt]; done {
		panic(&ember.ValueError{Op: "optim.GradScaler", Msg: "Unscale was already called for this optimizer since the last Update"})
	}
	if s.foundInf == nil {
		s.foundInf = map[Optimizer]bool{}
	}
	inv := float64(float32(1 / float64(s.scale)))
	// one flag per device, read back once each (as PyTorch's
	// found_inf_per_device), not a host sync per gradient
	flags := map[ember.Device]*ember.Tensor{}
	var devs []ember.Device
	for _, p := range params(opt) {
		g := p.Tensor.Grad()
		if g == nil {
			continue
		}
		g.MulScalarInPlace(inv)
		bad := g.IsNaN().Any().LogicalOr(g.IsInf().Any())
		if f, ok := flags[g.Device()]; ok {
			bad = f.LogicalOr(bad)
		} else {
			devs = append(devs, g.Device())
		}
		flags[g.Device()] = bad
	}
	found := false
	for _, d := range devs {
		found = found || flags[d].Item() != 0
	}
	s.foundInf[opt] = found
	if len(devs) == 0 {
		if s.unchecked == nil {
			s.unchecked = map[Optimizer]bool{}
		}
		s.unchecked[opt] = true
	}
}

// Step unscales the gradients if Unscale was not called, then runs
// opt.Step unless a gradient was infinite or NaN. It reports whether the
// step ran. A second Step of opt before Update panics with a
// *ember.ValueError, as PyTorch's "step() has already been called since
// the last update()" (it would apply the same gradients twice), and so
// does a Step of an optimizer none of whose parameters has a gradient
// (Backward forgotten), as PyTorch's "No inf checks were recorded for
// this optimizer."
func (s *GradScaler) Step(opt Optimizer) bool {
	s.live("Step")
	if s.stepped[opt] {
		panic(&ember.ValueError{Op: "optim.GradScaler", Msg: "step() has already been called since the last update()."})
	}
	if s.stepped == nil {
		s.stepped = map[Optimizer]bool{}
	}
	s.stepped[opt] = true
	if _, done := s.foundInf[opt]; !done {
		s.Unscale(opt)
	}
	if s.unchecked[opt] { // no gradient at all: Backward forgotten?
		panic(&ember.ValueError{Op: "optim.GradScaler", Msg: "No inf checks were recorded for this optimizer."})
	}
	if s.foundInf[opt] {
		return false
	}
	opt.Step()
	return true
}

// Update adjusts the scale after a Step (torch's _amp_update_scale_): a
// step with an inf/NaN gradient multiplies it by BackoffFactor and restarts
// the count; otherwise the count grows and, reaching GrowthInterval,
// multiplies the scale by GrowthFactor (when the result stays finite) and
// restarts. Update without a Step or Unscale since the last one panics
// with a *ember.ValueError, as PyTorch's "No inf checks were recorded prior
// to update." (it would count a step that never ran towards growth).
func (s *GradScaler) Update() {
	s.live("Update")
	if len(s.foundInf) == 0 {
		panic(&ember.ValueError{Op: "optim.GradScaler", Msg: "No inf checks were recorded prior to update."})
	}
	found := false
	for _, f := range s.foundInf {
		found = found || f
	}
	if found {
		s.scale = float32(float64(s.scale) * s.BackoffFactor)
		s.tracker = 0
	} else if s.tracker+1 == s.GrowthInterval {
		if g := float32(float64(s.scale) * s.GrowthFactor); !math.IsInf(float64(g), 0) {
			s.scale = g
		}
		s.tracker = 0
	} else {
		s.tracker++
	}
	clear(s.foundInf)
	clear(s.stepped)
	clear(s.unchecked)
}

// StateDict is torch's GradScaler.state_dict(): scale, growth_factor,
// backoff_factor, growth_interval and _growth_tracker.
func (s *GradScaler) StateDict() map[string]float64 {
	s.live("StateDict")
	return map[string]float64{"scale": float64(s.scale), "growth_factor": s.GrowthFactor, "backoff_factor": s.BackoffFactor,
		"growth_interval": float64(s.GrowthInterval), "_growth_tracker": float64(s.tracker)}
}

// LoadStateDict restores a StateDict.
func (s *GradScaler) LoadStateDict(sd map[string]float64) error {
	s.live("LoadStateDict")
	for _, k := range []string{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"} {
		if _, ok := sd[k]; !ok {
			return fmt.Errorf("optim: GradScaler state has no %q", k)
		}
	}
	// torch.cuda.amp.GradScaler's constructor checks (growth > 1, backoff
	// in (0, 1)), and a finite positive scale (NaN too fails these)
	sc, gf, bf, gi, tr := sd["scale"], sd["growth_factor"], sd["backoff_factor"], sd["growth_interval"], sd["_growth_tracker"]
	if !(sc > 0 && float32(sc) <= math.MaxFloat32) || !(gf > 1) || !(bf > 0 && bf < 1) || !(gi >= 1 && gi <= math.MaxInt32 && gi == math.Trunc(gi)) || !(tr >= 0 && tr < gi && tr == math.Trunc(tr)) {
		return fmt.Errorf("optim: GradScaler state: scale %v, growth_factor %v, backoff_factor %v, growth_interval %v, _growth_tracker %v: want a finite scale > 0, growth > 1, backoff in (0, 1), an interval in [1, 2³¹) and a count in [0, interval)", sc, gf, bf, gi, tr)
	}
	s.scale, s.GrowthFactor, s.BackoffFactor = float32(sc), gf, bf
	s.GrowthInterval, s.tracker = int(gi), int(tr)
	return nil
}
