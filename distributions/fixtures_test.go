package distributions

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
)

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

type ftensor struct {
	Shape []int  `json:"shape"`
	DType string `json:"dtype"`
	Data  []any  `json:"data"`
}

func (f ftensor) values() []float64 {
	out := make([]float64, len(f.Data))
	for i, v := range f.Data {
		switch v := v.(type) {
		case float64:
			out[i] = v
		case string:
			out[i] = map[string]float64{"nan": math.NaN(), "inf": math.Inf(1), "-inf": math.Inf(-1)}[v]
		}
	}
	return out
}

// build makes f on dev, in dt when it is floating (Int64 indices stay).
func (f ftensor) build(dev ember.Device, dt ember.DType, grad bool) *ember.Tensor {
	if f.DType == "int64" {
		v := f.values()
		iv := make([]int64, len(v))
		for i := range v {
			iv[i] = int64(v[i])
		}
		return ember.FromSlice(iv, f.Shape).To(dev)
	}
	t := ember.FromSlice(f.values(), f.Shape).Cast(dt).To(dev)
	if grad {
		t.SetRequiresGrad(true)
	}
	return t
}

type fspec struct {
	Name   string              `json:"name"`
	Params [][]json.RawMessage `json:"params"`
	Base   *fspec              `json:"base"`
	N      int                 `json:"n"`
}

type leaf struct {
	name string
	t    *ember.Tensor
}

var ctors = map[string]func(p []*ember.Tensor) Distribution{
	"Normal":                  func(p []*ember.Tensor) Distribution { return NewNormal(p[0], p[1]) },
	"LogNormal":               func(p []*ember.Tensor) Distribution { return NewLogNormal(p[0], p[1]) },
	"Uniform":                 func(p []*ember.Tensor) Distribution { return NewUniform(p[0], p[1]) },
	"Exponential":             func(p []*ember.Tensor) Distribution { return NewExponential(p[0]) },
	"Laplace":                 func(p []*ember.Tensor) Distribution { return NewLaplace(p[0], p[1]) },
	"Gamma":                   func(p []*ember.Tensor) Distribution { return NewGamma(p[0], p[1]) },
	"Beta":                    func(p []*ember.Tensor) Distribution { return NewBeta(p[0], p[1]) },
	"Dirichlet":               func(p []*ember.Tensor) Distribution { return NewDirichlet(p[0]) },
	"Poisson":                 func(p []*ember.Tensor) Distribution { return NewPoisson(p[0]) },
	"BernoulliProbs":          func(p []*ember.Tensor) Distribution { return NewBernoulliProbs(p[0]) },
	"BernoulliLogits":         func(p []*ember.Tensor) Distribution { return NewBernoulliLogits(p[0]) },
	"BinomialProbs":           func(p []*ember.Tensor) Distribution { return NewBinomialProbs(p[0], p[1]) },
	"BinomialLogits":          func(p []*ember.Tensor) Distribution { return NewBinomialLogits(p[0], p[1]) },
	"GeometricProbs":          func(p []*ember.Tensor) Distribution { return NewGeometricProbs(p[0]) },
	"GeometricLogits":         func(p []*ember.Tensor) Distribution { return NewGeometricLogits(p[0]) },
	"CategoricalProbs":        func(p []*ember.Tensor) Distribution { return NewCategoricalProbs(p[0]) },
	"CategoricalLogits":       func(p []*ember.Tensor) Distribution { return NewCategoricalLogits(p[0]) },
	"OneHotCategoricalProbs":  func(p []*ember.Tensor) Distribution { return NewOneHotCategoricalProbs(p[0]) },
	"OneHotCategoricalLogits": func(p []*ember.Tensor) Distribution { return NewOneHotCategoricalLogits(p[0]) },
	"MultivariateNormal":      func(p []*ember.Tensor) Distribution { return NewMultivariateNormal(p[0], p[1]) },
	"MultivariateNormalPrecision": func(p []*ember.Tensor) Distribution {
		return NewMultivariateNormalPrecision(p[0], p[1])
	},
	"MultivariateNormalScaleTril": func(p []*ember.Tensor) Distribution {
		return NewMultivariateNormalScaleTril(p[0], p[1])
	},
	"StudentT":               func(p []*ember.Tensor) Distribution { return NewStudentT(p[0], p[1], p[2]) },
	"Cauchy":                 func(p []*ember.Tensor) Distribution { return NewCauchy(p[0], p[1]) },
	"HalfNormal":             func(p []*ember.Tensor) Distribution { return NewHalfNormal(p[0]) },
	"HalfCauchy":             func(p []*ember.Tensor) Distribution { return NewHalfCauchy(p[0]) },
	"Gumbel":                 func(p []*ember.Tensor) Distribution { return NewGumbel(p[0], p[1]) },
	"Chi2":                   func(p []*ember.Tensor) Distribution { return NewChi2(p[0]) },
	"VonMises":               func(p []*ember.Tensor) Distribution { return NewVonMises(p[0], p[1]) },
	"Weibull":                func(p []*ember.Tensor) Distribution { return NewWeibull(p[0], p[1]) },
	"Pareto":                 func(p []*ember.Tensor) Distribution { return NewPareto(p[0], p[1]) },
	"RelaxedBernoulliProbs":  func(p []*ember.Tensor) Distribution { return NewRelaxedBernoulliProbs(p[0], p[1]) },
	"RelaxedBernoulliLogits": func(p []*ember.Tensor) Distribution { return NewRelaxedBernoulliLogits(p[0], p[1]) },
	"RelaxedOneHotCategoricalProbs": func(p []*ember.Tensor) Distribution {
		return NewRelaxedOneHotCategoricalProbs(p[0], p[1])
	},
	"RelaxedOneHotCategoricalLogits": func(p []*ember.Tensor) Distribution {
		return NewRelaxedOneHotCategoricalLogits(p[0], p[1])
	},
	"ContinuousBernoulliProbs":  func(p []*ember.Tensor) Distribution { return NewContinuousBernoulliProbs(p[0]) },
	"ContinuousBernoulliLogits": func(p []*ember.Tensor) Distribution { return NewContinuousBernoulliLogits(p[0]) },
	"LowRankMultivariateNormal": func(p []*ember.Tensor) Distribution {
		return NewLowRankMultivariateNormal(p[0], p[1], p[2])
	},
}

// build makes the distribution of s with fresh leaf parameters.
func (s fspec) build(t *testing.T, dev ember.Device, dt ember.DType) (Distribution, []leaf) {
	t.Helper()
	if s.Name == "Independent" {
		b, leaves := s.Base.build(t, dev, dt)
		return NewIndependent(b, s.N), leaves
	}
	var leaves []leaf
	var ps []*ember.Tensor
	for _, p := range s.Params {
		var name string
		var ft ftensor
		if err := json.Unmarshal(p[0], &name); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(p[1], &ft); err != nil {
			t.Fatal(err)
		}
		x := ft.build(dev, dt, true)
		leaves = append(leaves, leaf{name, x})
		ps = append(ps, x)
	}
	mk, ok := ctors[s.Name]
	if !ok {
		t.Fatalf("no constructor for %s", s.Name)
	}
	return mk(ps), leaves
}

type distCase struct {
	Spec       fspec                      `json:"spec"`
	BatchShape []int                      `json:"batch_shape"`
	EventShape []int                      `json:"event_shape"`
	HasRSample bool                       `json:"has_rsample"`
	Value      *ftensor                   `json:"value"`
	Q          *ftensor                   `json:"q"`
	Out        map[string]json.RawMessage `json:"-"`
}

type klCase struct {
	P    fspec              `json:"p"`
	Q    fspec              `json:"q"`
	KL   ftensor            `json:"kl"`
	Grad map[string]ftensor `json:"grad"`
}

// fixtures holds the generator's cases computed by torch in float64 and,
// for the float32 runs, in float32 (torch's eps and rounding differ).
type fixtures struct {
	Cases   []map[string]json.RawMessage `json:"cases"`
	KL      []klCase                     `json:"kl"`
	Cases32 []map[string]json.RawMessage `json:"cases32"`
	KL32    []klCase                     `json:"kl32"`
	// GammaGrad is torch._standard_gamma_grad(alpha, x).
	GammaGrad struct{ Alpha, X, Grad ftensor } `json:"gamma_grad"`
}

func (f fixtures) cases(dt ember.DType) []map[string]json.RawMessage {
	if dt == ember.Float32 {
		return f.Cases32
	}
	return f.Cases
}

func (f fixtures) kls(dt ember.DType) []klCase {
	if dt == ember.Float32 {
		return f.KL32
	}
	return f.KL
}

func loadFixtures(t *testing.T) fixtures {
	t.Helper()
	b, err := os.ReadFile("testdata/dist_fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	var f fixtures
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func tols(dt ember.DType) (rtol, atol float64) {
	if dt == ember.Float64 {
		return 1e-9, 1e-10
	}
	return 2e-5, 2e-5
}

func closeTo(t *testing.T, what string, got *ember.Tensor, want ftensor, dt ember.DType) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: nil result", what)
		return
	}
	if !got.Shape().Equal(want.Shape) {
		t.Errorf("%s: shape %v, torch %v", what, got.Shape(), want.Shape)
		return
	}
	rtol, atol := tols(dt)
	g := got.Cast(ember.Float64).CPU().Float64s()
	w := want.values()
	for i := range w {
		a, b := g[i], w[i]
		switch {
		case math.IsNaN(b) && math.IsNaN(a), a == b:
		case math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) || math.Abs(a-b) > atol+rtol*math.Abs(b):
			t.Errorf("%s[%d] = %v, torch %v", what, i, a, b)
			return
		}
	}
}

// quantity computes what of d ("log_prob", ...), nil when the case has no input for it.
func quantity(d Distribution, what string, value, q *ember.Tensor) *ember.Tensor {
	switch what {
	case "log_prob":
		return d.LogProb(value)
	case "cdf":
		return d.CDF(value)
	case "icdf":
		return d.ICDF(q)
	case "entropy":
		return d.Entropy()
	case "mean":
		return d.Mean()
	case "variance":
		return d.Variance()
	case "stddev":
		return d.Stddev()
	}
	panic(what)
}

func TestFixturesMatchTorch(t *testing.T) {
	f := loadFixtures(t)
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		for _, dt := range []ember.DType{ember.Float64, ember.Float32} {
			for _, raw := range f.cases(dt) {
				var c distCase
				b, _ := json.Marshal(raw)
				if err := json.Unmarshal(b, &c); err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%s/%v", c.Spec.Name, dt)
				if c.Spec.Base != nil {
					name = fmt.Sprintf("Independent(%s,%d)/%v", c.Spec.Base.Name, c.Spec.N, dt)
				}
				d, _ := c.Spec.build(t, dev, dt)
				if !d.BatchShape().Equal(c.BatchShape) || !d.EventShape().Equal(c.EventShape) {
					t.Errorf("%s: batch %v event %v, torch %v %v", name, d.BatchShape(), d.EventShape(), c.BatchShape, c.EventShape)
				}
				if d.HasRSample() != c.HasRSample {
					t.Errorf("%s: HasRSample %v, torch %v", name, d.HasRSample(), c.HasRSample)
				}
				for _, what := range []string{"log_prob", "cdf", "icdf", "entropy", "mean", "variance", "stddev"} {
					r, ok := raw[what]
					if !ok {
						continue
					}
					var value, q *ember.Tensor
					if c.Value != nil {
						value = c.Value.build(dev, dt, false)
					}
					if c.Q != nil {
						q = c.Q.build(dev, dt, false)
					}
					d, leaves := c.Spec.build(t, dev, dt)
					if string(r) == `"not_implemented"` {
						err := ember.Try(func() { quantity(d, what, value, q) })
						var ni *NotImplementedError
						if !errors.As(err, &ni) {
							t.Errorf("%s %s: %v, want a *NotImplementedError as torch", name, what, err)
						}
						continue
					}
					var want ftensor
					if err := json.Unmarshal(r, &want); err != nil {
						t.Fatal(err)
					}
					out := quantity(d, what, value, q)
					closeTo(t, name+" "+what, out, want, dt)
					gr, ok := raw[what+"_grad"]
					if !ok {
						continue
					}
					var wg map[string]ftensor
					if err := json.Unmarshal(gr, &wg); err != nil {
						t.Fatal(err)
					}
					out.Sum().Backward()
					for _, l := range leaves {
						g := l.t.Grad()
						if g == nil {
							g = ember.ZerosLike(l.t)
						}
						closeTo(t, name+" d"+what+"/d"+l.name, g, wg[l.name], dt)
					}
				}
			}
		}
	})
}

func TestKLMatchesTorch(t *testing.T) {
	f := loadFixtures(t)
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		for _, dt := range []ember.DType{ember.Float64, ember.Float32} {
			for _, c := range f.kls(dt) {
				name := fmt.Sprintf("KL(%s||%s)/%v", c.P.Name, c.Q.Name, dt)
				if c.P.Base != nil {
					name = fmt.Sprintf("KL(Independent(%s)||Independent(%s))/%v", c.P.Base.Name, c.Q.Base.Name, dt)
				}
				p, lp := c.P.build(t, dev, dt)
				q, lq := c.Q.build(t, dev, dt)
				out := KLDivergence(p, q)
				closeTo(t, name, out, c.KL, dt)
				if c.Grad == nil {
					continue
				}
				out.Sum().Backward()
				for pre, ls := range map[string][]leaf{"p.": lp, "q.": lq} {
					for _, l := range ls {
						g := l.t.Grad()
						if g == nil {
							g = ember.ZerosLike(l.t)
						}
						closeTo(t, name+" d/d"+pre+l.name, g, c.Grad[pre+l.name], dt)
					}
				}
			}
		}
	})
}

func TestStandardGammaGradMatchesTorch(t *testing.T) {
	f := loadFixtures(t)
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		g := f.GammaGrad
		got := standardGammaGrad(g.Alpha.build(dev, ember.Float64, false), g.X.build(dev, ember.Float64, false))
		closeTo(t, "standardGammaGrad", got, g.Grad, ember.Float64)
	})
}
