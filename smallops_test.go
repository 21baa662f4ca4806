package ember

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PyTorch 1.13 references for smallops.go and orderstats.go, from
// testdata/gen_smallops_fixtures.py.

type smallTensor struct {
	Shape []int  `json:"shape"`
	DType string `json:"dtype"`
	Data  []any  `json:"data"`
}

type smallCase struct {
	Op      string         `json:"op"`
	Args    map[string]any `json:"args"`
	Inputs  []smallTensor  `json:"inputs"`
	Outputs []smallTensor  `json:"outputs"`
	W       []*smallTensor `json:"w"`
	Grads   []*smallTensor `json:"grads"`
}

func (s smallTensor) values() []float64 {
	out := make([]float64, len(s.Data))
	for i, v := range s.Data {
		switch v := v.(type) {
		case float64:
			out[i] = v
		case string:
			out[i] = map[string]float64{"nan": math.NaN(), "inf": math.Inf(1), "-inf": math.Inf(-1)}[v]
		}
	}
	return out
}

func (s smallTensor) dtype() DType {
	return map[string]DType{"float32": Float32, "float64": Float64, "int64": Int64, "int32": Int32, "bool": Bool}[s.DType]
}

func (s smallTensor) on(dev Device) *Tensor {
	return FromSlice(s.values(), Shape(s.Shape), On(dev)).Cast(s.dtype())
}

func (c smallCase) i(name string) int { return int(c.Args[name].(float64)) }
func (c smallCase) f(name string) float64 {
	if c.Args[name] == "inf" {
		return math.Inf(1)
	}
	return c.Args[name].(float64)
}
func (c smallCase) b(name string) bool { return c.Args[name].(bool) }

// reduceOpts turns the case's dim/keepdim into ReduceOptions.
func (c smallCase) reduceOpts() []ReduceOption {
	var o []ReduceOption
	if _, ok := c.Args["dim"]; ok {
		o = append(o, Dims(c.i("dim")))
	}
	if k, ok := c.Args["keepdim"]; ok && k.(bool) {
		o = append(o, KeepDim())
	}
	return o
}

// runSmallOp applies the case's op to in with ember.
func runSmallOp(c smallCase, in []*Tensor) []*Tensor {
	two := func(a, b *Tensor) []*Tensor { return []*Tensor{a, b} }
	switch c.Op {
	case "nonzero":
		return []*Tensor{in[0].Nonzero()}
	case "nonzero_tuple":
		return in[0].NonzeroTuple()
	case "unique":
		v, i, n := in[0].Unique()
		return []*Tensor{v, i, n}
	case "unique_consecutive":
		v, i, n := in[0].UniqueConsecutive()
		return []*Tensor{v, i, n}
	case "unique_dim":
		v, i, n := in[0].UniqueDim(c.i("dim"))
		return []*Tensor{v, i, n}
	case "unique_consecutive_dim":
		v, i, n := in[0].UniqueConsecutiveDim(c.i("dim"))
		return []*Tensor{v, i, n}
	case "bincount":
		var w *Tensor
		if len(in) > 1 {
			w = in[1]
		}
		return []*Tensor{Bincount(in[0], w, c.i("minlength"))}
	case "repeat_interleave":
		return []*Tensor{in[0].RepeatInterleave(c.i("repeats"), c.i("dim"))}
	case "repeat_interleave_t":
		return []*Tensor{in[0].RepeatInterleaveTensor(in[1], c.i("dim"))}
	case "meshgrid":
		return Meshgrid(c.Args["indexing"].(string), in...)
	case "lerp":
		return []*Tensor{Lerp(in[0], in[1], in[2])}
	case "lerp_scalar":
		return []*Tensor{LerpScalar(in[0], in[1], c.f("weight"))}
	case "trace":
		return []*Tensor{in[0].Trace()}
	case "rot90":
		var dims []int
		for _, d := range c.Args["dims"].([]any) {
			dims = append(dims, int(d.(float64)))
		}
		return []*Tensor{in[0].Rot90(c.i("k"), dims...)}
	case "kron":
		return []*Tensor{Kron(in[0], in[1])}
	case "median":
		return []*Tensor{in[0].Median()}
	case "nanmedian":
		return []*Tensor{in[0].NanMedian()}
	case "median_dim":
		return two(in[0].MedianDim(c.i("dim"), c.b("keepdim")))
	case "nanmedian_dim":
		return two(in[0].NanMedianDim(c.i("dim"), c.b("keepdim")))
	case "mode":
		return two(in[0].Mode(c.i("dim"), c.b("keepdim")))
	case "kthvalue":
		return two(in[0].Kthvalue(c.i("k"), c.i("dim"), c.b("keepdim")))
	case "quantile_scalar":
		return []*Tensor{in[0].QuantileScalar(c.f("q"), c.Args["interpolation"].(string))}
	case "quantile":
		return []*Tensor{in[0].Quantile(in[1], c.Args["interpolation"].(string), c.reduceOpts()...)}
	case "nanquantile":
		return []*Tensor{in[0].NanQuantile(in[1], c.Args["interpolation"].(string), c.reduceOpts()...)}
	case "nansum":
		return []*Tensor{in[0].NanSum(c.reduceOpts()...)}
	case "nanmean":
		return []*Tensor{in[0].NanMean(c.reduceOpts()...)}
	case "searchsorted":
		return []*Tensor{Searchsorted(in[0], in[1], c.b("right"), nil)}
	case "searchsorted_sorter":
		return []*Tensor{Searchsorted(in[0], in[1], c.b("right"), in[2])}
	case "bucketize":
		return []*Tensor{Bucketize(in[0], in[1], c.b("right"))}
	case "cummax":
		return two(in[0].Cummax(c.i("dim")))
	case "cummin":
		return two(in[0].Cummin(c.i("dim")))
	case "logcumsumexp":
		return []*Tensor{in[0].LogCumSumExp(c.i("dim"))}
	case "cdist":
		return []*Tensor{Cdist(in[0], in[1], c.f("p"), c.Args["mode"].(string))}
	case "cosine_similarity":
		return []*Tensor{CosineSimilarity(in[0], in[1], c.i("dim"), c.f("eps"))}
	case "pairwise_distance":
		return []*Tensor{PairwiseDistance(in[0], in[1], c.f("p"), c.f("eps"), c.b("keepdim"))}
	case "histc":
		return []*Tensor{in[0].Histc(c.i("bins"), c.f("min"), c.f("max"))}
	}
	panic("unknown op " + c.Op)
}

// nanKeys lists the cases whose NaN inputs make reductions return NaN
// with gradients PyTorch defines; no case is skipped today.
func loadSmallCases(t *testing.T) []smallCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "smallops", "smallops.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []smallCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

func smallClose(t *testing.T, what string, got *Tensor, want smallTensor, checkDType bool) {
	t.Helper()
	if !got.Shape().Equal(Shape(want.Shape)) {
		t.Fatalf("%s: shape %v, PyTorch %v", what, got.Shape(), want.Shape)
	}
	if checkDType && got.DType() != want.dtype() {
		t.Fatalf("%s: dtype %v, PyTorch %v", what, got.DType(), want.DType)
	}
	if got.Device().Type == Meta.Type {
		return
	}
	tol := 1e-12
	if want.dtype() == Float32 || got.DType() == Float32 {
		tol = 2e-6
	}
	w := want.values()
	atol := tol
	if !checkDType { // gradients: cancellation leaves noise relative to the largest entry
		for _, x := range w {
			atol = math.Max(atol, tol*math.Abs(x))
		}
	}
	for i, v := range got.Float64s() {
		if math.IsNaN(w[i]) && math.IsNaN(v) || v == w[i] {
			continue
		}
		if math.Abs(v-w[i]) > atol+tol*math.Abs(w[i]) {
			t.Fatalf("%s: %v, PyTorch %v", what, got.Float64s(), w)
		}
	}
}

// TestSmallOpsFixtures compares every case's outputs (values, dtypes,
// shapes, chosen indices) and the gradients of sum(out·w) with PyTorch's,
// on every device present.
func TestSmallOpsFixtures(t *testing.T) {
	cases := loadSmallCases(t)
	for _, dev := range testDevices() {
		for ci, c := range cases {
			if c.Args["cpu_only"] == true && dev != CPU {
				continue
			}
			checkSmallCase(t, dev, ci, c, runSmallOp, false, nil)
		}
	}
}

// checkSmallCase runs fixture case ci on dev through run and compares its
// outputs (values, dtypes, shapes) and the gradients of sum(out·w) with
// PyTorch's. With strict, an output PyTorch gives no gradient must not
// require grad either (unless exempt names its op).
func checkSmallCase(t *testing.T, dev Device, ci int, c smallCase, run func(smallCase, []*Tensor) []*Tensor, strict bool, exempt map[string]bool) {
	t.Helper()
	what := fmt.Sprintf("%s %v case %d on %v", c.Op, c.Args, ci, dev)
	in := make([]*Tensor, len(c.Inputs))
	for k, x := range c.Inputs {
		in[k] = x.on(dev)
		if in[k].DType().IsFloat() {
			in[k].SetRequiresGrad(true)
		}
	}
	var outs []*Tensor
	if err := Try(func() { outs = run(c, in) }); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(outs) != len(c.Outputs) {
		t.Fatalf("%s: %d outputs, PyTorch %d", what, len(outs), len(c.Outputs))
	}
	var loss *Tensor
	for k, o := range outs {
		smallClose(t, fmt.Sprintf("%s output %d", what, k), o, c.Outputs[k], true)
		if c.W[k] != nil && o.RequiresGrad() {
			term := WhereScalar(o.Detach().IsNaN(), 0, o.Mul(c.W[k].on(dev))).Sum()
			if loss == nil {
				loss = term
			} else {
				loss = loss.Add(term)
			}
		} else if c.W[k] != nil {
			t.Fatalf("%s: output %d does not require grad, PyTorch's does", what, k)
		} else if strict && o.RequiresGrad() && !exempt[c.Op] {
			t.Fatalf("%s: output %d requires grad, PyTorch's has no gradient", what, k)
		}
	}
	if loss == nil {
		return
	}
	loss.Backward()
	for k, g := range c.Grads {
		if g == nil {
			continue
		}
		got := in[k].Grad()
		if got == nil {
			got = ZerosLike(in[k])
		}
		smallClose(t, fmt.Sprintf("%s grad %d", what, k), got, *g, false)
	}
}

// TestSmallOpsMeta runs the fixture cases whose result's shape does not
// depend on the data on the meta device: the shapes and dtypes are
// PyTorch's. The data-dependent ones refuse with ErrNoData.
func TestSmallOpsMeta(t *testing.T) {
	dataDependent := map[string]bool{"nonzero": true, "nonzero_tuple": true, "unique": true,
		"unique_consecutive": true, "unique_dim": true, "unique_consecutive_dim": true, "bincount": true, "repeat_interleave_t": true}
	for ci, c := range loadSmallCases(t) {
		what := fmt.Sprintf("%s %v case %d on meta", c.Op, c.Args, ci)
		in := make([]*Tensor, len(c.Inputs))
		for k, x := range c.Inputs {
			in[k] = Empty(Shape(x.Shape), On(Meta), Dtype(x.dtype()))
		}
		var outs []*Tensor
		err := Try(func() { outs = runSmallOp(c, in) })
		if dataDependent[c.Op] && err != nil { // (an empty input has nothing to read)
			if !errors.Is(err, ErrNoData) {
				t.Fatalf("%s: %v, want ErrNoData", what, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for k, o := range outs {
			if o.Device() != Meta {
				t.Fatalf("%s: output %d on %v", what, k, o.Device())
			}
			smallClose(t, fmt.Sprintf("%s output %d", what, k), o, c.Outputs[k], true)
		}
	}
}

// TestSmallOpsErrors: misuse panics with the typed errors and PyTorch's
// wording.
func TestSmallOpsErrors(t *testing.T) {
	v := FromSlice([]float64{1, 2, 3}, Shape{3})
	m := Ones(Shape{2, 3})
	i := FromSlice([]int64{1, 2}, Shape{2})
	raises := func(kind, what, msg string, f func()) {
		t.Helper()
		err := Try(f)
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if got := fmt.Sprintf("%T", err); got != kind {
			t.Fatalf("%s: %s (%v), want %s", what, got, err, kind)
		}
		if msg != "" && !strings.Contains(err.Error(), msg) {
			t.Fatalf("%s: %q does not say %q", what, err.Error(), msg)
		}
	}
	const se, ve, de = "*ember.ShapeError", "*ember.ValueError", "*ember.DTypeError"
	raises(se, "bincount 2-D", "bincount only supports 1-d non-negative integral inputs.", func() { Bincount(m.Cast(Int64), nil, 0) })
	raises(se, "bincount negative", "non-negative", func() { Bincount(FromSlice([]int64{-1}, Shape{1}), nil, 0) })
	raises(de, "bincount float", `"bincount_cpu" not implemented for 'Float'`, func() { Bincount(FromSlice([]float32{1}, Shape{1}), nil, 0) })
	raises(se, "bincount weights", "weights should be 1-d and have the same length as input", func() { Bincount(i, v, 0) })
	raises(ve, "bincount minlength", "minlength should be >= 0", func() { Bincount(i, nil, -1) })
	raises(ve, "repeat negative", "repeats can not be negative", func() { v.RepeatInterleave(-1, 0) })
	raises(ve, "repeat tensor negative", "repeats can not be negative", func() { v.RepeatInterleaveTensor(FromSlice([]int64{1, -2, 1}, Shape{3}), 0) })
	raises(se, "repeat size", "repeats must have the same size as input along dim", func() { v.RepeatInterleaveTensor(i, 0) })
	raises(de, "repeat float", "", func() { v.RepeatInterleaveTensor(v, 0) })
	raises(se, "repeat dim", "", func() { v.RepeatInterleave(2, 1) })
	raises(ve, "meshgrid empty", "torch.meshgrid expects a non-empty TensorList", func() { Meshgrid("ij") })
	raises(ve, "meshgrid indexing", `indexing must be one of "xy" or "ij", but received: foo`, func() { Meshgrid("foo", v) })
	raises(se, "meshgrid 2-D", "Expected 0D or 1D tensor", func() { Meshgrid("ij", m) })
	raises(de, "meshgrid dtypes", "meshgrid expects all tensors to have the same dtype", func() { Meshgrid("ij", v, i) })
	raises(de, "lerp end dtype", "expected dtype double for `end` but got dtype float", func() { LerpScalar(v, v.Cast(Float32), 0.5) })
	raises(de, "lerp weight dtype", "expected dtype double for `weight` but got dtype float", func() { Lerp(v, v, v.Cast(Float32)) })
	raises(de, "lerp long", `"lerp_kernel_scalar" not implemented for 'Long'`, func() { LerpScalar(i, i, 0.5) })
	raises(se, "lerp shapes", "", func() { Lerp(v, Ones(Shape{2, 3}, Dtype(Float64)), Ones(Shape{2}, Dtype(Float64))) })
	raises(se, "trace 1-D", "trace: expected a matrix, but got tensor with dim 1", func() { v.Trace() })
	raises(de, "trace bool", `"trace" not implemented for 'Bool'`, func() { m.Cast(Bool).Trace() })
	raises(se, "rot90 one dim", "expected total rotation dims == 2, but got dims = 1", func() { m.Rot90(1, 0) })
	raises(se, "rot90 1-D", "expected total dims >= 2, but got total dims = 1", func() { v.Rot90(1) })
	raises(se, "rot90 same", "expected rotation dims to be different, but got dim0 = 0 and dim1 = -2", func() { m.Rot90(1, 0, -2) })
	raises(se, "rot90 range", "Rotation dim0 out of range, dim0 = 3", func() { m.Rot90(1, 3, 0) })
	raises(se, "median empty dim", "median(): Expected reduction dim 0 to have non-zero size.", func() { Ones(Shape{0, 3}).MedianDim(0, false) })
	raises(se, "median dim range", "", func() { m.MedianDim(2, false) })
	raises(de, "median bool", "", func() { m.Cast(Bool).MedianDim(0, false) })
	raises(se, "mode empty dim", "mode(): Expected reduction dim 1 to have non-zero size.", func() { Ones(Shape{2, 0}).Mode(1, false) })
	raises(se, "kthvalue k", "kthvalue(): selected number k out of range for dimension 0", func() { v.Kthvalue(4, 0, false) })
	raises(se, "kthvalue k 0", "kthvalue(): selected number k out of range for dimension 1", func() { m.Kthvalue(0, 1, false) })
	raises(de, "kthvalue bool", `"kthvalue_cpu" not implemented for 'Bool'`, func() { v.Cast(Bool).Kthvalue(1, 0, false) })
	raises(se, "quantile empty", "quantile() input tensor must be non-empty", func() { Ones(Shape{0}).QuantileScalar(0.5, "linear") })
	raises(ve, "quantile q", "quantile() q must be in the range [0, 1] but got 1.5", func() { v.QuantileScalar(1.5, "linear") })
	raises(ve, "quantile q tensor", "quantile() q values must be in the range [0, 1]", func() { v.Quantile(FromSlice([]float64{0.5, -0.1}, Shape{2}), "linear") })
	raises(ve, "quantile interpolation", "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got foo", func() { v.QuantileScalar(0.5, "foo") })
	raises(se, "quantile q 2-D", "quantile() q must be a scalar or 1D tensor", func() { v.Quantile(Ones(Shape{2, 2}, Dtype(Float64)), "linear") })
	raises(de, "quantile long", "quantile() input tensor must be either float or double dtype", func() { i.QuantileScalar(0.5, "linear") })
	raises(de, "quantile q dtype", "quantile() q tensor must be same dtype as the input tensor", func() { v.Quantile(Scalar(0.5), "linear") })
	raises(de, "nanmean long", "nanmean(): expected input to have floating point dtype but got Long", func() { i.NanMean() })
	raises(se, "searchsorted dims", "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions", func() { Searchsorted(m, Ones(Shape{3, 3}), false, nil) })
	raises(se, "searchsorted sorter", "boundary and sorter must have the same size", func() { Searchsorted(v, v, false, i) })
	raises(se, "bucketize 2-D", "boundaries tensor must be 1 dimension, but got dim(2)", func() { Bucketize(v, m, false) })
	raises(de, "logcumsumexp long", `"logcumsumexp_out_cpu" not implemented for 'Long'`, func() { i.LogCumSumExp(0) })
	raises(de, "histc long", `"histogram_cpu" not implemented for 'Long'`, func() { i.Histc(3, 0, 1) })
	raises(ve, "histc bins", "torch.histogram(): bins must be > 0, but got 0 for dimension 0", func() { v.Histc(0, 0, 1) })
	raises(ve, "histc range", "torch.histc: max must be larger than min", func() { v.Histc(3, 2, 1) })
	raises(ve, "histc nan range", "is not finite", func() { FromSlice([]float64{math.NaN()}, Shape{1}).Histc(3, 0, 0) })
	raises(se, "cdist 1-D", "cdist only supports at least 2D tensors, X1 got: 1D", func() { Cdist(v, m, 2, "") })
	raises(se, "cdist columns", "X1 and X2 must have the same number of columns. X1: 3 X2: 4", func() { Cdist(m, Ones(Shape{2, 4}), 2, "") })
	raises(de, "cdist long", "cdist only supports floating-point dtypes, X1 got: Long", func() { Cdist(m.Cast(Int64), m, 2, "") })
	raises(de, "cdist dtypes", "expected scalar type Float but found Double", func() { Cdist(m, m.Cast(Float64), 2, "") })
	raises(ve, "cdist p", "cdist only supports non-negative p values", func() { Cdist(m, m, -1, "") })
	raises(ve, "cdist mode", "foo is not a valid value for compute_mode", func() { Cdist(m, m, 2, "foo") })
	raises(se, "cdist batch", "", func() { Cdist(Ones(Shape{2, 2, 3}), Ones(Shape{3, 2, 3}), 2, "") })
	raises(de, "cosine ints", "expected common dtype to be floating point, yet common dtype is Long", func() { CosineSimilarity(i, i, 0, 1e-8) })
	raises(se, "cosine shapes", "", func() { CosineSimilarity(v, Ones(Shape{2}, Dtype(Float64)), 0, 1e-8) })
	raises("*ember.DeviceMismatchError", "kron devices", "", func() { Kron(v, Ones(Shape{2}, On(Meta))) })
}

// TestSmallOpsNoRuntimePanics runs every new op over every dtype, empty,
// 0-dim and size-1 shapes and in- and out-of-range dims: misuse must panic
// with a typed error (Try returns it), never a Go runtime error.
func TestSmallOpsNoRuntimePanics(t *testing.T) {
	var ins []*Tensor
	for _, dt := range []DType{Float32, Float64, Int64, Int32, Bool, BFloat16, Float16} {
		for _, s := range []Shape{{}, {0}, {3}, {2, 3}, {2, 0}, {0, 2}, {2, 1, 3}} {
			x := Arange(0, float64(s.NumElements()), 1, Dtype(Float64)).Reshape(s...).Remainder(Scalar(3, Dtype(Float64))).Cast(dt)
			ins = append(ins, x)
		}
	}
	for _, x := range ins {
		for _, dim := range []int{-4, -1, 0, 1, 2, 5} {
			ops := map[string]func(){
				"nonzero":   func() { x.Nonzero(); x.NonzeroTuple() },
				"unique":    func() { x.Unique(); x.UniqueConsecutive() },
				"uniquedim": func() { x.UniqueDim(dim); x.UniqueConsecutiveDim(dim) },
				"bincount":  func() { Bincount(x, nil, 2) },
				"bincountw": func() { Bincount(x, x, 2) },
				"ri":        func() { x.RepeatInterleave(2, dim) },
				"rit":       func() { x.RepeatInterleaveTensor(x, dim) },
				"mesh":      func() { Meshgrid("xy", x, x) },
				"lerp":      func() { Lerp(x, x, x); LerpScalar(x, x, 0.7) },
				"trace":     func() { x.Trace() },
				"rot":       func() { x.Rot90(dim, 0, dim) },
				"kron":      func() { Kron(x, x) },
				"median":    func() { x.Median(); x.NanMedian() },
				"mediand":   func() { x.MedianDim(dim, true); x.NanMedianDim(dim, false) },
				"kth":       func() { x.Kthvalue(1, dim, false); x.Kthvalue(2, dim, true) },
				"mode":      func() { x.Mode(dim, false) },
				"q":         func() { x.QuantileScalar(0.3, "nearest", Dims(dim)); x.Quantile(x, "linear") },
				"nan":       func() { x.NanSum(Dims(dim)); x.NanMean(Dims(dim), KeepDim()) },
				"ss":        func() { Searchsorted(x, x, true, nil); Bucketize(x, x, false) },
				"sss":       func() { Searchsorted(x, x, true, x) },
				"cum":       func() { x.Cummax(dim); x.Cummin(dim) },
				"lcse":      func() { x.LogCumSumExp(dim) },
				"histc":     func() { x.Histc(3, 0, 0) },
				"cdist":     func() { Cdist(x, x, 2, ""); Cdist(x, x, 1, "use_mm_for_euclid_dist") },
				"cos":       func() { CosineSimilarity(x, x, dim, 1e-8); PairwiseDistance(x, x, 2, 1e-6, false) },
			}
			for name, f := range ops {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s on %v %v dim %d: untyped panic %v", name, x.DType(), x.Shape(), dim, r)
						}
					}()
					_ = Try(f)
				}()
			}
		}
	}
}

// TestCdistBlocks: a direct (p = 1) cdist large enough to be computed in
// blocks of rows (700×900×30 differences) against PyTorch 1.13's values
// and gradient of the sum, for a = sin(0..20999) [700, 30] and
// b = cos(0.7·(0..26999)) [900, 30].
func TestCdistBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("19M differences")
	}
	a := Arange(0, 700*30, 1, Dtype(Float64)).Sin().Reshape(700, 30).SetRequiresGrad(true)
	b := Arange(0, 900*30, 1, Dtype(Float64)).MulScalar(0.7).Cos().Reshape(900, 30)
	d := Cdist(a, b, 1, "")
	s := d.Sum()
	s.Backward()
	g := a.Grad()
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"sum", s.Item(), 15319632.254726432},
		{"d[123,456]", d.Select(0, 123).Select(0, 456).Item(), 21.960427077851055},
		{"d[699,899]", d.Select(0, 699).Select(0, 899).Item(), 24.299661537134806},
		{"grad[650,3]", g.Select(0, 650).Select(0, 3).Item(), -2},
		{"grad[5,7]", g.Select(0, 5).Select(0, 7).Item(), -48},
	} {
		if math.Abs(c.got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
			t.Fatalf("%s = %v, PyTorch %v", c.what, c.got, c.want)
		}
	}
}
