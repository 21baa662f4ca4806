package optim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/emberml/ember"
)

// LBFGS is torch.optim.LBFGS: the limited-memory BFGS quasi-Newton
// method, whose Step re-evaluates the loss through a closure, up to
// MaxIter iterations (MaxEval evaluations) per Step, with torch's
// termination tests and either a fixed step (lr) or the strong-Wolfe line
// search (LineSearchFn "strong_wolfe"). As torch's, it has one parameter
// group, and all its parameters must be on one device. Its Step takes the
// closure, so it is not an Optimizer; the fields may be changed between
// steps.
type LBFGS struct {
	params                         []Param
	lr                             float64
	MaxIter, MaxEval, HistorySize  int
	ToleranceGrad, ToleranceChange float64
	LineSearchFn                   string

	// torch's state of the first parameter
	funcEvals, nIter int
	d, prevFlatGrad  *ember.Tensor
	t, hDiag         float64
	prevLoss         float64
	oldDirs, oldStps []*ember.Tensor
	ro               []float64
}

// LBFGSWith is torch.optim.LBFGS(params, ...): lr 1, max_iter 20,
// max_eval max_iter·5/4, tolerance_grad 1e-7, tolerance_change 1e-9,
// history_size 100, no line search unless options say otherwise (LR,
// MaxIter, MaxEval, ToleranceGrad, ToleranceChange, HistorySize,
// LineSearch).
//
//	opt := optim.LBFGSWith(optim.ModuleParams(m), optim.LineSearch("strong_wolfe"))
//	loss := opt.Step(func() *ember.Tensor {
//		opt.ZeroGrad()
//		loss := crit.Loss(m.Forward(x), y)
//		loss.Backward()
//		return loss
//	})
func LBFGSWith(params []Param, opts ...Option) *LBFGS {
	const op = "optim.LBFGS"
	o := options(op, Options{LR: 1, MaxIter: 20, ToleranceGrad: 1e-7, ToleranceChange: 1e-9, HistorySize: 100}, opts,
		[]string{"lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change", "history_size", "line_search_fn"})
	if !slices.Contains(o.set, "max_eval") {
		o.MaxEval = o.MaxIter * 5 / 4
	}
	// checked as a base checks its group (duplicates, dtypes, leaves)
	var b base
	b.init(&kind{op: op, check: func(string, *ParamGroup) {}}, one(op, params), nil, o.LR, map[string]*float64{}, map[string]*bool{})
	l := &LBFGS{params: b.params, lr: o.LR, MaxIter: o.MaxIter, MaxEval: o.MaxEval, HistorySize: o.HistorySize,
		ToleranceGrad: o.ToleranceGrad, ToleranceChange: o.ToleranceChange, LineSearchFn: o.LineSearchFn, hDiag: 1}
	dev, dt := params[0].Tensor.Device(), params[0].Tensor.DType()
	for i, p := range params {
		hyperErr(op, p.Tensor.Device() == dev, "all parameters must be on one device (parameter %q is on %v, %q on %v)", paramName(p, i), p.Tensor.Device(), paramName(params[0], 0), dev)
		hyperErr(op, p.Tensor.DType() == dt, "all parameters must have one dtype (parameter %q is %v, %q %v)", paramName(p, i), p.Tensor.DType(), paramName(params[0], 0), dt)
	}
	l.check()
	return l
}

func (l *LBFGS) live(op string) *LBFGS {
	if l == nil || l.params == nil {
		nilOptimizer("LBFGS", op)
	}
	return l
}

func (l *LBFGS) check() {
	const op = "optim.LBFGS"
	hyperErr(op, l.lr >= 0, "Invalid learning rate: %v", l.lr)
	hyperErr(op, l.MaxIter >= 1, "max_iter %d < 1", l.MaxIter)
	hyperErr(op, l.HistorySize >= 1, "history_size %d < 1", l.HistorySize)
	hyperErr(op, l.LineSearchFn == "" || l.LineSearchFn == "strong_wolfe", "only 'strong_wolfe' is supported (line_search_fn %q)", l.LineSearchFn)
	hyperErr(op, !math.IsNaN(l.ToleranceGrad) && !math.IsNaN(l.ToleranceChange), "NaN tolerance")
}

// LR returns the learning rate.
func (l *LBFGS) LR() float64 { return l.live("LR").lr }

// SetLR sets the learning rate.
func (l *LBFGS) SetLR(lr float64) {
	l.live("SetLR")
	hyperErr("optim.LBFGS.SetLR", lr >= 0, "Invalid learning rate: %v", lr)
	l.lr = lr
}

// ZeroGrad clears the parameters' gradients (set to none).
func (l *LBFGS) ZeroGrad() {
	for _, p := range l.live("ZeroGrad").params {
		p.Tensor.ZeroGrad()
	}
}

// flatGrad is torch's _gather_flat_grad: every gradient flattened and
// concatenated (zeros for a parameter without one).
func (l *LBFGS) flatGrad() *ember.Tensor {
	views := make([]*ember.Tensor, len(l.params))
	for i, p := range l.params {
		g := p.Tensor.Grad()
		if g == nil {
			views[i] = ember.ZerosLike(p.Tensor).Reshape(-1)
		} else {
			views[i] = g.Detach().Reshape(-1)
		}
	}
	return ember.Cat(views, 0)
}

// addGrad adds step·update (flat) to the parameters.
func (l *LBFGS) addGrad(step float64, update *ember.Tensor) {
	off := 0
	for _, p := range l.params {
		n := p.Tensor.NumElements()
		p.Tensor.Detach().AddScaledInPlace(update.Narrow(0, off, n).Reshape(p.Tensor.Shape()...), step)
		off += n
	}
}

func (l *LBFGS) cloneParams() []*ember.Tensor {
	out := make([]*ember.Tensor, len(l.params))
	for i, p := range l.params {
		out[i] = p.Tensor.Detach().Clone()
	}
	return out
}

func (l *LBFGS) setParams(x []*ember.Tensor) {
	for i, p := range l.params {
		p.Tensor.Detach().CopyFrom(x[i])
	}
}

func absMax(t *ember.Tensor) float64 { return t.Abs().Max().Item() }
func dot(a, b *ember.Tensor) float64 { return ember.Dot(a, b).Item() }

// Step runs up to MaxIter L-BFGS iterations; closure must clear the
// gradients, compute the loss, call Backward and return the loss (a
// one-element tensor). Step returns the loss of the first evaluation, as
// torch's. A nil closure or a nil loss panics with an *ember.ValueError.
func (l *LBFGS) Step(closure func() *ember.Tensor) *ember.Tensor {
	const op = "optim.LBFGS.Step"
	l.live("Step")
	l.check()
	hyperErr(op, closure != nil, "LBFGS's step needs a closure that re-evaluates the loss")
	eval := func() (*ember.Tensor, float64) {
		loss := closure()
		hyperErr(op, loss != nil, "the closure returned a nil loss")
		hyperErr(op, loss.NumElements() == 1, "the closure returned a loss of shape %v, want one element", loss.Shape())
		return loss, loss.Item()
	}
	lr, maxIter, maxEval := l.lr, l.MaxIter, l.MaxEval
	tolGrad, tolChange, history := l.ToleranceGrad, l.ToleranceChange, l.HistorySize

	origLoss, loss := eval()
	currentEvals := 1
	l.funcEvals++
	flat := l.flatGrad()
	optCond := absMax(flat) <= tolGrad
	if optCond {
		return origLoss
	}
	d, t := l.d, l.t
	nIter := 0
	for nIter < maxIter {
		nIter++
		l.nIter++
		if l.nIter == 1 {
			d = flat.Neg()
			l.oldDirs, l.oldStps, l.ro = nil, nil, nil
			l.hDiag = 1
		} else {
			y := flat.Sub(l.prevFlatGrad)
			s := d.MulScalar(t)
			ys := dot(y, s)
			if ys > 1e-10 {
				if len(l.oldDirs) == history {
					l.oldDirs, l.oldStps, l.ro = l.oldDirs[1:], l.oldStps[1:], l.ro[1:]
				}
				l.oldDirs = append(l.oldDirs, y)
				l.oldStps = append(l.oldStps, s)
				l.ro = append(l.ro, 1/ys)
				l.hDiag = ys / dot(y, y)
			}
			num := len(l.oldDirs)
			al := make([]float64, num)
			q := flat.Neg()
			for i := num - 1; i >= 0; i-- {
				al[i] = dot(l.oldStps[i], q) * l.ro[i]
				q.AddScaledInPlace(l.oldDirs[i], -al[i])
			}
			r := q.MulScalar(l.hDiag)
			for i := range num {
				be := dot(l.oldDirs[i], r) * l.ro[i]
				r.AddScaledInPlace(l.oldStps[i], al[i]-be)
			}
			d = r
		}
		if l.prevFlatGrad == nil {
			l.prevFlatGrad = flat.Clone()
		} else {
			l.prevFlatGrad.CopyFrom(flat)
		}
		l.prevLoss = loss
		if l.nIter == 1 {
			t = math.Min(1, 1/flat.Abs().Sum().Item()) * lr
		} else {
			t = lr
		}
		gtd := dot(flat, d)
		if gtd > -tolChange {
			break
		}
		lsEvals := 0
		if l.LineSearchFn != "" {
			x := l.cloneParams()
			obj := func(t float64) (float64, *ember.Tensor) {
				l.addGrad(t, d)
				_, f := eval()
				g := l.flatGrad()
				l.setParams(x)
				return f, g
			}
			// torch 1.13 leaves _strong_wolfe's tolerance_change at its
			// default, whatever the optimizer's is
			loss, flat, t, lsEvals = strongWolfe(obj, t, d, loss, flat, gtd, 1e-9)
			l.addGrad(t, d)
			optCond = absMax(flat) <= tolGrad
		} else {
			l.addGrad(t, d)
			if nIter != maxIter {
				_, loss = eval()
				flat = l.flatGrad()
				optCond = absMax(flat) <= tolGrad
				lsEvals = 1
			}
		}
		currentEvals += lsEvals
		l.funcEvals += lsEvals
		if nIter == maxIter || currentEvals >= maxEval || optCond {
			break
		}
		if absMax(d.MulScalar(t)) <= tolChange || math.Abs(loss-l.prevLoss) < tolChange {
			break
		}
	}
	l.d, l.t = d, t
	return origLoss
}

// cubicInterpolate is torch's _cubic_interpolate: the minimiser of the
// cubic through (x1, f1, g1) and (x2, f2, g2), within bounds.
func cubicInterpolate(x1, f1, g1, x2, f2, g2 float64, bounds *[2]float64) float64 {
	var lo, hi float64
	switch {
	case bounds != nil:
		lo, hi = bounds[0], bounds[1]
	case x1 <= x2:
		lo, hi = x1, x2
	default:
		lo, hi = x2, x1
	}
	d1 := g1 + g2 - 3*(f1-f2)/(x1-x2)
	d2sq := d1*d1 - g1*g2
	if d2sq >= 0 {
		d2 := math.Sqrt(d2sq)
		var pos float64
		if x1 <= x2 {
			pos = x2 - (x2-x1)*((g2+d2-d1)/(g2-g1+2*d2))
		} else {
			pos = x1 - (x1-x2)*((g1+d2-d1)/(g1-g2+2*d2))
		}
		return math.Min(math.Max(pos, lo), hi)
	}
	return (lo + hi) / 2
}

// strongWolfe is torch's _strong_wolfe line search (c1 1e-4, c2 0.9, 25
// evaluations at most) along d from step t; obj evaluates the loss and
// flat gradient at step t.
func strongWolfe(obj func(t float64) (float64, *ember.Tensor), t float64, d *ember.Tensor, f float64, g *ember.Tensor, gtd, tolChange float64) (float64, *ember.Tensor, float64, int) {
	const c1, c2, maxLS = 1e-4, 0.9, 25
	dNorm := absMax(d)
	g = g.Clone()
	fNew, gNew := obj(t)
	evals := 1
	gtdNew := dot(gNew, d)
	tPrev, fPrev, gPrev, gtdPrev := 0.0, f, g, gtd
	done := false
	lsIter := 0
	var bracket, bf, bgtd []float64
	var bg []*ember.Tensor
	for lsIter < maxLS {
		if fNew > f+c1*t*gtd || (lsIter > 1 && fNew >= fPrev) {
			bracket, bf, bg, bgtd = []float64{tPrev, t}, []float64{fPrev, fNew}, []*ember.Tensor{gPrev, gNew.Clone()}, []float64{gtdPrev, gtdNew}
			break
		}
		if math.Abs(gtdNew) <= -c2*gtd {
			bracket, bf, bg = []float64{t}, []float64{fNew}, []*ember.Tensor{gNew}
			done = true
			break
		}
		if gtdNew >= 0 {
			bracket, bf, bg, bgtd = []float64{tPrev, t}, []float64{fPrev, fNew}, []*ember.Tensor{gPrev, gNew.Clone()}, []float64{gtdPrev, gtdNew}
			break
		}
		minStep := t + 0.01*(t-tPrev)
		maxStep := t * 10
		tmp := t
		t = cubicInterpolate(tPrev, fPrev, gtdPrev, t, fNew, gtdNew, &[2]float64{minStep, maxStep})
		tPrev, fPrev, gPrev, gtdPrev = tmp, fNew, gNew.Clone(), gtdNew
		fNew, gNew = obj(t)
		evals++
		gtdNew = dot(gNew, d)
		lsIter++
	}
	if lsIter == maxLS {
		bracket, bf, bg = []float64{0, t}, []float64{f, fNew}, []*ember.Tensor{g, gNew}
		// torch leaves bracket_gtd as it was (unset: the zoom below does
		// not run, ls_iter being max_ls)
	}
	insufProgress := false
	low, high := 0, 1
	if bf[0] > bf[len(bf)-1] {
		low, high = 1, 0
	}
	for !done && lsIter < maxLS {
		if math.Abs(bracket[1]-bracket[0])*dNorm < tolChange {
			break
		}
		t = cubicInterpolate(bracket[0], bf[0], bgtd[0], bracket[1], bf[1], bgtd[1], nil)
		bmax, bmin := math.Max(bracket[0], bracket[1]), math.Min(bracket[0], bracket[1])
		eps := 0.1 * (bmax - bmin)
		if math.Min(bmax-t, t-bmin) < eps {
			if insufProgress || t >= bmax || t <= bmin {
				if math.Abs(t-bmax) < math.Abs(t-bmin) {
					t = bmax - eps
				} else {
					t = bmin + eps
				}
				insufProgress = false
			} else {
				insufProgress = true
			}
		} else {
			insufProgress = false
		}
		fNew, gNew = obj(t)
		evals++
		gtdNew = dot(gNew, d)
		lsIter++
		if fNew > f+c1*t*gtd || fNew >= bf[low] {
			bracket[high], bf[high], bg[high], bgtd[high] = t, fNew, gNew.Clone(), gtdNew
			if bf[0] <= bf[1] {
				low, high = 0, 1
			} else {
				low, high = 1, 0
			}
		} else {
			if math.Abs(gtdNew) <= -c2*gtd {
				done = true
			} else if gtdNew*(bracket[high]-bracket[low]) >= 0 {
				bracket[high], bf[high], bg[high], bgtd[high] = bracket[low], bf[low], bg[low], bgtd[low]
			}
			bracket[low], bf[low], bg[low], bgtd[low] = t, fNew, gNew.Clone(), gtdNew
		}
	}
	return bf[low], bg[low], bracket[low], evals
}

// StateDict returns torch's LBFGS state_dict() flattened as the other
// optimizers' (the state is the first parameter's, index 0):
// state.0.func_evals, n_iter, and once a step has run d, t, H_diag,
// prev_flat_grad, prev_loss and the history as old_dirs.K, old_stps.K,
// ro.K; param_groups.0 holds lr, max_iter, max_eval, tolerance_grad,
// tolerance_change, history_size and params (line_search_fn, a string, is
// the field's). torch's scratch list "al" is left out.
func (l *LBFGS) StateDict() map[string]*ember.Tensor {
	l.live("StateDict")
	f64 := ember.Dtype(ember.Float64)
	sc := func(v float64) *ember.Tensor { return ember.Scalar(v, f64) }
	out := map[string]*ember.Tensor{
		"param_groups.0.lr": sc(l.lr), "param_groups.0.max_iter": sc(float64(l.MaxIter)),
		"param_groups.0.max_eval": sc(float64(l.MaxEval)), "param_groups.0.tolerance_grad": sc(l.ToleranceGrad),
		"param_groups.0.tolerance_change": sc(l.ToleranceChange), "param_groups.0.history_size": sc(float64(l.HistorySize)),
	}
	ids := make([]int64, len(l.params))
	for i := range ids {
		ids[i] = int64(i)
	}
	out["param_groups.0.params"] = ember.FromSlice(ids, ember.Shape{len(ids)})
	if l.funcEvals == 0 {
		return out
	}
	out["state.0.func_evals"] = sc(float64(l.funcEvals))
	out["state.0.n_iter"] = sc(float64(l.nIter))
	if l.d == nil {
		return out
	}
	out["state.0.d"], out["state.0.t"], out["state.0.H_diag"] = l.d, sc(l.t), sc(l.hDiag)
	out["state.0.prev_flat_grad"], out["state.0.prev_loss"] = l.prevFlatGrad, sc(l.prevLoss)
	for k := range l.oldDirs {
		out[fmt.Sprintf("state.0.old_dirs.%d", k)] = l.oldDirs[k]
		out[fmt.Sprintf("state.0.old_stps.%d", k)] = l.oldStps[k]
		out[fmt.Sprintf("state.0.ro.%d", k)] = sc(l.ro[k])
	}
	return out
}

// LoadStateDict restores a StateDict (copying its tensors); a state dict
// of other parameters (another number of elements) is refused and changes
// nothing.
func (l *LBFGS) LoadStateDict(sd map[string]*ember.Tensor) (err error) {
	l.live("LoadStateDict")
	n := 0
	for _, p := range l.params {
		n += p.Tensor.NumElements()
	}
	next := *l
	next.oldDirs, next.oldStps, next.ro = nil, nil, nil
	var dirs, stps map[int]*ember.Tensor = map[int]*ember.Tensor{}, map[int]*ember.Tensor{}
	ros := map[int]float64{}
	if perr := ember.Try(func() {
		dev, dt := l.params[0].Tensor.Device(), l.params[0].Tensor.DType()
		vec := func(k string, v *ember.Tensor) *ember.Tensor {
			if v.Dim() != 1 || v.NumElements() != n {
				err = fmt.Errorf("optim: LBFGS state %s has shape %v, want [%d]", k, v.Shape(), n)
				return nil
			}
			return v.Detach().Cast(dt).To(dev).Clone()
		}
		num := func(k string, v *ember.Tensor, whole bool) float64 {
			if v.NumElements() != 1 {
				err = fmt.Errorf("optim: LBFGS state %s is not a scalar", k)
				return 0
			}
			x := v.Item()
			if math.IsNaN(x) || (whole && !(x >= 0 && x < 1<<31 && x == math.Trunc(x))) {
				err = fmt.Errorf("optim: LBFGS state %s is %v", k, x)
			}
			return x
		}
		for k, v := range sd {
			if err != nil {
				return
			}
			if v == nil {
				err = fmt.Errorf("optim: %s is a nil tensor", k)
				return
			}
			name, isState := strings.CutPrefix(k, "state.0.")
			switch {
			case k == "param_groups.0.params":
				if v.NumElements() != len(l.params) {
					err = fmt.Errorf("optim: loaded state dict contains a parameter group that doesn't match the size of optimizer's group (%d parameters, the optimizer has %d)", v.NumElements(), len(l.params))
				}
			case k == "param_groups.0.lr":
				next.lr = num(k, v, false)
			case k == "param_groups.0.max_iter":
				next.MaxIter = int(num(k, v, true))
			case k == "param_groups.0.max_eval":
				next.MaxEval = int(num(k, v, true))
			case k == "param_groups.0.history_size":
				next.HistorySize = int(num(k, v, true))
			case k == "param_groups.0.tolerance_grad":
				next.ToleranceGrad = num(k, v, false)
			case k == "param_groups.0.tolerance_change":
				next.ToleranceChange = num(k, v, false)
			case !isState:
				err = fmt.Errorf("optim: unexpected LBFGS state key %q", k)
			case name == "func_evals":
				next.funcEvals = int(num(k, v, true))
			case name == "n_iter":
				next.nIter = int(num(k, v, true))
			case name == "t":
				next.t = num(k, v, false)
			case name == "H_diag":
				next.hDiag = num(k, v, false)
			case name == "prev_loss":
				next.prevLoss = num(k, v, false)
			case name == "d":
				next.d = vec(k, v)
			case name == "prev_flat_grad":
				next.prevFlatGrad = vec(k, v)
			case name == "al":
			default:
				list, is, _ := strings.Cut(name, ".")
				i, e := strconv.Atoi(is)
				if e != nil || i < 0 || i >= 1<<20 {
					err = fmt.Errorf("optim: unexpected LBFGS state key %q", k)
					return
				}
				switch list {
				case "old_dirs":
					dirs[i] = vec(k, v)
				case "old_stps":
					stps[i] = vec(k, v)
				case "ro":
					ros[i] = num(k, v, false)
				case "al":
				default:
					err = fmt.Errorf("optim: unexpected LBFGS state key %q", k)
				}
			}
		}
	}); perr != nil {
		return fmt.Errorf("optim: load state dict: %w", perr)
	}
	if err != nil {
		return err
	}
	for k := range len(dirs) {
		d, s, okS := dirs[k], stps[k], false
		r, okR := ros[k]
		if s != nil {
			okS = true
		}
		if d == nil || !okS || !okR {
			return fmt.Errorf("optim: LBFGS state: the history lists are not alike (entry %d)", k)
		}
		next.oldDirs, next.oldStps, next.ro = append(next.oldDirs, d), append(next.oldStps, s), append(next.ro, r)
	}
	if len(stps) != len(dirs) || len(ros) != len(dirs) {
		return fmt.Errorf("optim: LBFGS state: the history lists are not alike (%d, %d, %d entries)", len(dirs), len(stps), len(ros))
	}
	if next.nIter > 0 && (next.d == nil || next.prevFlatGrad == nil) {
		return fmt.Errorf("optim: LBFGS state: n_iter %d without d and prev_flat_grad", next.nIter)
	}
	if perr := ember.Try(next.check); perr != nil {
		return fmt.Errorf("optim: load state dict: %w", perr)
	}
	*l = next
	return nil
}
