package optim

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// lbfgsProblem makes the generator's problem on dev: its parameter (float64,
// as the generator's) and closure.
func lbfgsProblem(f moreFixture, name string, dev ember.Device) (*ember.Tensor, func(opt *LBFGS) func() *ember.Tensor) {
	pr := f.LBFGS[name].Problem
	x := ember.FromSlice(pr.X0, ember.Shape{len(pr.X0)}).To(dev).SetRequiresGrad(true)
	var loss func() *ember.Tensor
	if pr.A.Data != nil {
		a := ember.FromSlice(pr.A.Data, ember.Shape(pr.A.Shape)).To(dev)
		b := ember.FromSlice(pr.B.Data, ember.Shape(pr.B.Shape)).To(dev)
		loss = func() *ember.Tensor { return a.MatMul(x).Sub(b).Square().Sum() }
	} else {
		loss = func() *ember.Tensor {
			x0, x1 := x.Select(0, 0), x.Select(0, 1)
			return x0.RSubScalar(1).Square().Add(x1.Sub(x0.Square()).Square().MulScalar(100))
		}
	}
	return x, func(opt *LBFGS) func() *ember.Tensor {
		return func() *ember.Tensor {
			opt.ZeroGrad()
			l := loss()
			l.Backward()
			return l
		}
	}
}

func lbfgsOf(f moreFixture, name string, x *ember.Tensor) *LBFGS {
	pr := f.LBFGS[name].Problem
	opts := []Option{LR(pr.LR), MaxIter(pr.MaxIter), LineSearch(pr.LineSearchFn)}
	if pr.HistorySize != 0 {
		opts = append(opts, HistorySize(pr.HistorySize))
	}
	if pr.MaxEval != 0 {
		opts = append(opts, MaxEval(pr.MaxEval))
	}
	if pr.TolChange != 0 {
		opts = append(opts, ToleranceChange(pr.TolChange))
	}
	return LBFGSWith(Tensors(x), opts...)
}

// TestLBFGSMatchesTorch: four steps of LBFGS on a least-squares problem and
// on Rosenbrock's function, with a fixed step and with the strong-Wolfe
// line search (once with a large tolerance_change, which torch's line
// search does not see), against PyTorch 1.13 (float64 parameters): the parameters,
// the returned loss, func_evals and n_iter after each step; the state dict
// after two steps against torch's state_dict() (flattened), and steps 3
// and 4 again from an LBFGS that loaded torch's.
func TestLBFGSMatchesTorch(t *testing.T) {
	f := readMoreFixture(t)
	if len(f.LBFGS) != 5 {
		t.Fatalf("%d LBFGS fixtures", len(f.LBFGS))
	}
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		for name, c := range f.LBFGS {
			x, closure := lbfgsProblem(f, name, dev)
			opt := lbfgsOf(f, name, x)
			for k, want := range c.Steps {
				loss := opt.Step(closure(opt))
				at := fmt.Sprintf("%s step %d", name, k+1)
				near(t, at+" x", x.Detach().CPU().Float64s(), want.X.Data, 1e-9)
				near(t, at+" loss", []float64{loss.Item()}, []float64{want.Loss}, 1e-9)
				if opt.funcEvals != want.FuncEvals || opt.nIter != want.NIter {
					t.Errorf("%s: func_evals %d n_iter %d, want %d %d", at, opt.funcEvals, opt.nIter, want.FuncEvals, want.NIter)
				}
				if k == 1 {
					compareStateDict(t, name, opt.StateDict(), c.StateDict, true)
				}
			}
			// resume from torch's state after two steps
			x, closure = lbfgsProblem(f, name, dev)
			x.Detach().CopyFrom(ember.FromSlice(c.Steps[1].X.Data, ember.Shape{x.NumElements()}).To(dev))
			opt = lbfgsOf(f, name, x)
			if err := opt.LoadStateDict(stateDictOf(c.StateDict)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for k := 2; k < 4; k++ {
				opt.Step(closure(opt))
				near(t, fmt.Sprintf("%s resumed step %d", name, k+1), x.Detach().CPU().Float64s(), c.Steps[k].X.Data, 1e-9)
			}
		}
	})
}

// TestLBFGSRefuses: torch's refusals (line_search_fn other than
// strong_wolfe: "only 'strong_wolfe' is supported"), a nil closure or
// loss, parameters on two devices, a state dict of other parameters; a
// refused LoadStateDict changes nothing.
func TestLBFGSRefuses(t *testing.T) {
	x := ember.Zeros(ember.Shape{3}, ember.Dtype(ember.Float64), ember.WithGrad())
	for name, c := range map[string]func(){
		"line search": func() { LBFGSWith(Tensors(x), LineSearch("armijo")) },
		"momentum":    func() { LBFGSWith(Tensors(x), Momentum(0.9)) },
		"lr":          func() { LBFGSWith(Tensors(x), LR(-1)) },
		"history 0":   func() { LBFGSWith(Tensors(x), HistorySize(0)) },
		"empty":       func() { LBFGSWith(nil) },
		"dtypes":      func() { LBFGSWith(Tensors(x, ember.Zeros(ember.Shape{1}, ember.WithGrad()))) },
		"nil closure": func() { LBFGSWith(Tensors(x)).Step(nil) },
		"nil loss":    func() { LBFGSWith(Tensors(x)).Step(func() *ember.Tensor { return nil }) },
	} {
		testenv.Raises[*ember.ValueError](t, name, c)
	}
	opt := LBFGSWith(Tensors(x), MaxIter(3))
	if opt.MaxEval != 3 || opt.HistorySize != 100 || opt.ToleranceGrad != 1e-7 || opt.ToleranceChange != 1e-9 || opt.LR() != 1 {
		t.Errorf("defaults %+v", opt)
	}
	// a minimum already: Step returns at once, as torch's (opt_cond)
	opt.Step(func() *ember.Tensor { opt.ZeroGrad(); l := x.Square().Sum(); l.Backward(); return l })
	before := opt.StateDict()
	for name, sd := range map[string]map[string]*ember.Tensor{
		"bad d":   {"param_groups.0.lr": ember.Scalar(1), "state.0.n_iter": ember.Scalar(1), "state.0.d": ember.Zeros(ember.Shape{4})},
		"bad key": {"param_groups.0.lr": ember.Scalar(1), "state.1.d": ember.Zeros(ember.Shape{3})},
		"nil":     {"state.0.t": nil},
		"no d":    {"state.0.n_iter": ember.Scalar(2)},
	} {
		if err := opt.LoadStateDict(sd); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if after := opt.StateDict(); !slices.Equal(slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before))) || opt.LR() != 1 {
		t.Errorf("a refused LoadStateDict changed the state: %v", slices.Sorted(maps.Keys(after)))
	}
}
