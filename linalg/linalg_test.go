package linalg

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
)

// fixture is one tensor of testdata/linalg.json (gen_linalg_fixtures.py).
type fixture struct {
	Shape []int   `json:"shape"`
	Data  numbers `json:"data"`
}

// numbers reads a JSON list of numbers and the strings "inf", "-inf" and
// "nan".
type numbers []float64

func (n *numbers) UnmarshalJSON(b []byte) error {
	var raw []any
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*n = make(numbers, len(raw))
	for i, v := range raw {
		switch v := v.(type) {
		case float64:
			(*n)[i] = v
		case string:
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return err
			}
			(*n)[i] = f
		}
	}
	return nil
}

var (
	fixOnce sync.Once
	fixMap  map[string]fixture
	fixErr  error
)

func fixtures(t *testing.T) map[string]fixture {
	t.Helper()
	fixOnce.Do(func() {
		b, err := os.ReadFile("testdata/linalg.json")
		if err != nil {
			fixErr = err
			return
		}
		fixErr = json.Unmarshal(b, &fixMap)
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fixMap
}

func fix(t *testing.T, name string) fixture {
	t.Helper()
	f, ok := fixtures(t)[name]
	if !ok {
		t.Fatalf("no fixture %q", name)
	}
	return f
}

func (f fixture) tensor(dev ember.Device, dt ember.DType, grad bool) *ember.Tensor {
	x := ember.FromSlice([]float64(f.Data), ember.Shape(f.Shape), ember.Dtype(dt), ember.On(dev))
	if grad {
		x.SetRequiresGrad(true)
	}
	return x
}

// eachDevice runs f on the CPU and on an emulated cuda:0 (the CUDA
// backend's kernels on the CPU; linalg copies to the host and back).
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

func tolOf(dt ember.DType) float64 {
	if dt == ember.Float32 {
		return 2e-4
	}
	return 1e-8
}

// closeTo compares got with want elementwise: |got-want| <= tol·(1+|want|).
func closeTo(t *testing.T, what string, got *ember.Tensor, want fixture, tol float64) {
	t.Helper()
	if !got.Shape().Equal(ember.Shape(want.Shape)) {
		t.Errorf("%s: shape %v, want %v", what, got.Shape(), want.Shape)
		return
	}
	g := got.Float64s()
	for i, w := range want.Data {
		if math.IsInf(w, 0) && g[i] == w {
			continue
		}
		if !(math.Abs(g[i]-w) <= tol*(1+math.Abs(w))) {
			t.Errorf("%s: element %d is %v, want %v (tol %g)", what, i, g[i], w, tol)
			return
		}
	}
}

type fixCase struct {
	name   string
	inputs []string
	f      func(in []*ember.Tensor) []*ember.Tensor
	only64 bool // rank-deficient inputs: float32 rounding changes the rank
}

func one(f func(a *ember.Tensor) *ember.Tensor) func([]*ember.Tensor) []*ember.Tensor {
	return func(in []*ember.Tensor) []*ember.Tensor { return []*ember.Tensor{f(in[0])} }
}

func two(f func(a, b *ember.Tensor) *ember.Tensor) func([]*ember.Tensor) []*ember.Tensor {
	return func(in []*ember.Tensor) []*ember.Tensor { return []*ember.Tensor{f(in[0], in[1])} }
}

func eighInv(uplo string) func([]*ember.Tensor) []*ember.Tensor {
	return func(in []*ember.Tensor) []*ember.Tensor {
		l, v := Eigh(in[0], uplo)
		return []*ember.Tensor{l, v.Mul(v), v.MatMul(l.DiagEmbed(0, -2, -1)).MatMul(mT(v))}
	}
}

func svdInv(full bool) func([]*ember.Tensor) []*ember.Tensor {
	return func(in []*ember.Tensor) []*ember.Tensor {
		u, s, vh := SVD(in[0], full)
		k := s.Shape()[s.Dim()-1]
		u, vh = u.Narrow(-1, 0, k), vh.Narrow(-2, 0, k)
		return []*ember.Tensor{s, u.Mul(u), vh.Mul(vh), u.Mul(s.Unsqueeze(-2)).MatMul(vh)}
	}
}

func qrBoth(mode string) func([]*ember.Tensor) []*ember.Tensor {
	return func(in []*ember.Tensor) []*ember.Tensor {
		q, r := QR(in[0], mode)
		return []*ember.Tensor{q, r}
	}
}

func fixCases() []fixCase {
	cs := []fixCase{
		{"inv", []string{"A"}, one(Inv), false},
		{"solve", []string{"A", "B"}, two(Solve), false},
		{"solve_vec", []string{"A", "b1"}, two(Solve), false},
		{"solve_bvec", []string{"A", "bv"}, two(Solve), false},
		{"solve_triangular_upper", []string{"A", "B"}, two(func(a, b *ember.Tensor) *ember.Tensor { return SolveTriangular(a, b, true, false) }), false},
		{"solve_triangular_lower_unit", []string{"A0", "B"}, two(func(a, b *ember.Tensor) *ember.Tensor { return SolveTriangular(a, b, false, true) }), false},
		{"det", []string{"A"}, one(Det), false},
		{"det_singular", []string{"Sing"}, one(Det), false},
		{"slogdet", []string{"A"}, one(func(a *ember.Tensor) *ember.Tensor { _, l := Slogdet(a); return l }), false},
		{"cholesky", []string{"SPD"}, one(func(a *ember.Tensor) *ember.Tensor { return Cholesky(a, false) }), false},
		{"cholesky_upper", []string{"SPD"}, one(func(a *ember.Tensor) *ember.Tensor { return Cholesky(a, true) }), false},
		{"qr_tall", []string{"W"}, qrBoth("reduced"), false},
		{"qr_wide", []string{"Wd"}, qrBoth("reduced"), false},
		{"qr_square_complete", []string{"A"}, qrBoth("complete"), false},
		{"qr_wide_complete", []string{"Wd"}, qrBoth("complete"), false},
		{"eigh", []string{"SPD"}, eighInv("L"), false},
		{"eigh_upper", []string{"NonSym"}, eighInv("U"), false},
		{"eigvalsh", []string{"SPD"}, one(func(a *ember.Tensor) *ember.Tensor { return Eigvalsh(a, "L") }), false},
		{"svd_tall", []string{"W"}, svdInv(false), false},
		{"svd_wide", []string{"Wd"}, svdInv(false), false},
		{"svd_square", []string{"A"}, svdInv(false), false},
		{"svd_full_tall", []string{"W"}, svdInv(true), false},
		{"svdvals", []string{"Wd"}, one(Svdvals), false},
		{"pinv_tall", []string{"W"}, one(Pinv), false},
		{"pinv_wide", []string{"Wd"}, one(Pinv), false},
		{"pinv_rank", []string{"Rank"}, one(Pinv), true},
		{"pinv_atol", []string{"W"}, one(func(a *ember.Tensor) *ember.Tensor {
			return PinvTol(a, fixMap["pinv_atol.atol"].Data[0], 0)
		}), false},
		{"lstsq", []string{"W", "B4"}, two(Lstsq), false},
		{"vector_norm_3", []string{"W"}, one(func(a *ember.Tensor) *ember.Tensor { return VectorNorm(a, 3, false, -1) }), false},
		{"vector_norm_inf", []string{"W"}, one(func(a *ember.Tensor) *ember.Tensor { return VectorNorm(a, math.Inf(1), false) }), false},
		{"norm_none", []string{"W"}, one(func(a *ember.Tensor) *ember.Tensor { return Norm(a, "", false) }), false},
		{"norm_vec1", []string{"W"}, one(func(a *ember.Tensor) *ember.Tensor { return Norm(a, "1", false, 1) }), false},
		{"norm_mat_nuc", []string{"W"}, one(func(a *ember.Tensor) *ember.Tensor { return Norm(a, "nuc", false, 1, 2) }), false},
		{"matrix_power_3", []string{"A"}, one(func(a *ember.Tensor) *ember.Tensor { return MatrixPower(a, 3) }), false},
		{"matrix_power_m2", []string{"A"}, one(func(a *ember.Tensor) *ember.Tensor { return MatrixPower(a, -2) }), false},
		{"matrix_power_0", []string{"A"}, one(func(a *ember.Tensor) *ember.Tensor { return MatrixPower(a, 0) }), false},
		{"cond", []string{"W"}, one(func(a *ember.Tensor) *ember.Tensor { return Cond(a, "") }), false},
		{"cross", []string{"v1", "v2"}, two(func(a, b *ember.Tensor) *ember.Tensor { return Cross(a, b, -1) }), false},
		{"cross_dim0", []string{"v1", "v2"}, two(func(a, b *ember.Tensor) *ember.Tensor { return Cross(mT(a), mT(b), 0) }), false},
	}
	for _, o := range []string{"fro", "nuc", "inf", "-inf", "1", "-1", "2", "-2"} {
		py := map[string]string{"inf": "inf", "-inf": "-inf", "1": "1", "-1": "-1", "2": "2", "-2": "-2"}[o]
		if py == "" {
			py = o
		}
		cs = append(cs,
			fixCase{"matrix_norm_" + py, []string{"A"}, one(func(a *ember.Tensor) *ember.Tensor { return MatrixNorm(a, o, false) }), false},
			fixCase{"matrix_norm_tall_" + py, []string{"W"}, one(func(a *ember.Tensor) *ember.Tensor { return MatrixNorm(a, o, true, 0, 2) }), false})
	}
	return cs
}

// TestMatchesTorch compares values and gradients (of sum(w·out) for each
// output, the fixture's weights) with PyTorch 1.13's, in float64 and
// float32, on every device.
func TestMatchesTorch(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		for _, dt := range []ember.DType{ember.Float64, ember.Float32} {
			tol := tolOf(dt)
			for _, c := range fixCases() {
				if c.only64 && dt != ember.Float64 {
					continue
				}
				name := c.name + "/" + dt.String()
				in := make([]*ember.Tensor, len(c.inputs))
				for i, n := range c.inputs {
					in[i] = fix(t, n).tensor(dev, dt, true)
				}
				outs := c.f(in)
				var loss *ember.Tensor
				for i, o := range outs {
					key := c.name + ".out" + string(rune('0'+i))
					if o.Device() != dev {
						t.Errorf("%s: output %d on %v, want %v", name, i, o.Device(), dev)
					}
					closeTo(t, name+" "+key, o, fix(t, key), tol)
					w, ok := fixtures(t)["w."+key]
					if !ok {
						continue
					}
					term := o.Mul(w.tensor(dev, dt, false)).Sum()
					if loss == nil {
						loss = term
					} else {
						loss = loss.Add(term)
					}
				}
				if loss == nil || !loss.RequiresGrad() {
					for i := range in {
						if g, ok := fixtures(t)[c.name+".grad"+string(rune('0'+i))]; ok {
							closeTo(t, name+" zero grad", ember.Zeros(ember.Shape(g.Shape)), g, 0)
						}
					}
					continue
				}
				loss.Backward()
				for i, x := range in {
					key := c.name + ".grad" + string(rune('0'+i))
					g := x.Grad()
					if g == nil {
						g = ember.ZerosLike(x)
					}
					closeTo(t, name+" "+key, g, fix(t, key), tol*10)
				}
			}
		}
	})
}

// TestValuesMatchTorch checks the outputs without a gradient in the
// fixtures.
func TestValuesMatchTorch(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		for _, dt := range []ember.DType{ember.Float64, ember.Float32} {
			tol := tolOf(dt)
			in := func(n string) *ember.Tensor { return fix(t, n).tensor(dev, dt, false) }
			sign, _ := Slogdet(in("A"))
			closeTo(t, "slogdet sign", sign, fix(t, "slogdet.sign"), 0)
			_, r := QR(in("W"), "complete")
			closeTo(t, "qr complete tall R", r, fix(t, "qr_tall_complete.R"), tol)
			q, r := QR(in("W"), "r")
			closeTo(t, "qr r", r, fix(t, "qr_r.R"), tol)
			if !q.Shape().Equal(ember.Shape{0}) {
				t.Errorf("qr mode r: Q of shape %v, want [0]", q.Shape())
			}
			closeTo(t, "eigvalsh L", Eigvalsh(in("NonSym"), "L"), fix(t, "eigvalsh_nonsym_L"), tol)
			closeTo(t, "eigvalsh U", Eigvalsh(in("NonSym"), "U"), fix(t, "eigvalsh_nonsym_U"), tol)
			closeTo(t, "lstsq vector", Lstsq(in("W"), in("b4")), fix(t, "lstsq_vec.out0"), tol)
			closeTo(t, "cond fro", Cond(in("A"), "fro"), fix(t, "cond_fro.out0"), tol)
			closeTo(t, "cond 1", Cond(in("A"), "1"), fix(t, "cond_1.out0"), tol)
			closeTo(t, "cond singular", Cond(in("Sing"), "1").Reshape(1), fix(t, "cond_singular_1"), 0)
			closeTo(t, "matrix_rank_tol", MatrixRankTol(in("W"), 1, 0).Cast(ember.Float64), fix(t, "matrix_rank_tol"), 0)
			if dt == ember.Float64 {
				rk := MatrixRank(ember.Stack([]*ember.Tensor{in("Rank"), in("W").Index(0)}, 0))
				if rk.DType() != ember.Int64 {
					t.Errorf("matrix_rank dtype %v", rk.DType())
				}
				closeTo(t, "matrix_rank", rk.Cast(ember.Float64), fix(t, "matrix_rank"), 0)
			}
		}
	})
}
