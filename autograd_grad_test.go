package ember

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// testDevices lists the CPU and every CUDA device present.
func testDevices() []Device {
	ds := []Device{CPU}
	for i := 0; i < DeviceCount(); i++ {
		ds = append(ds, CUDA(i))
	}
	return ds
}

// gin is a gradcheck input: float64 host data (or integer data, not checked).
type gin struct {
	shape Shape
	data  []float64
	ints  []int64 // integer input (indices, targets): passed through, not differentiated
}

// vals returns deterministic values in [lo, hi) spread without ties.
func vals(shape Shape, lo, hi float64, seed int) gin {
	n := shape.NumElements()
	d := make([]float64, n)
	for i := range d {
		f := math.Mod(float64(i+1)*0.6180339887498949+float64(seed)*0.1234567, 1)
		d[i] = lo + (hi-lo)*f
	}
	return gin{shape: shape, data: d}
}

func ints(shape Shape, d ...int64) gin { return gin{shape: shape, ints: d} }

func (g gin) on(dev Device, data []float64) *Tensor {
	if g.ints != nil {
		return FromSlice(g.ints, g.shape, On(dev))
	}
	return FromSlice(data, g.shape, On(dev))
}

// gradcheck compares Backward's gradients of sum(f(xs)·w), for fixed
// weights w, with central differences (step 1e-6) in float64 on every device.
func gradcheck(t *testing.T, name string, f func(xs []*Tensor) *Tensor, ins ...gin) {
	t.Helper()
	for _, dev := range testDevices() {
		xs := make([]*Tensor, len(ins))
		for i, in := range ins {
			xs[i] = in.on(dev, in.data)
			if in.ints == nil {
				xs[i].SetRequiresGrad(true)
			}
		}
		out := f(xs)
		if !out.RequiresGrad() {
			t.Fatalf("%s on %v: output does not require grad", name, dev)
		}
		wv := vals(out.shape, -1, 1, 7)
		w := FromSlice(wv.data, out.shape, On(dev), Dtype(out.dtype))
		out.Mul(w).Sum().Backward()
		eval := func(k, j int, d float64) float64 {
			ys := make([]*Tensor, len(ins))
			for i, in := range ins {
				data := in.data
				if i == k {
					data = append([]float64(nil), in.data...)
					data[j] += d
				}
				ys[i] = in.on(dev, data)
			}
			var s float64
			NoGrad(func() { s = f(ys).Mul(w).Sum().Item() })
			return s
		}
		for k, in := range ins {
			if in.ints != nil {
				continue
			}
			g := xs[k].Grad()
			if g == nil {
				t.Fatalf("%s on %v: input %d got no gradient", name, dev, k)
			}
			if !g.shape.Equal(in.shape) || g.dtype != Float64 || g.dev != dev {
				t.Fatalf("%s on %v: input %d gradient is %v %v on %v, want %v float64", name, dev, k, g.shape, g.dtype, g.dev, in.shape)
			}
			got := g.Float64s()
			const h = 1e-6
			for j := range in.data {
				num := (eval(k, j, h) - eval(k, j, -h)) / (2 * h)
				if math.Abs(got[j]-num) > 1e-7+1e-5*math.Abs(num) {
					t.Errorf("%s on %v: d/dx%d[%d] = %.10g, finite differences %.10g", name, dev, k, j, got[j], num)
				}
			}
		}
	}
}

func TestGradcheckElementwise(t *testing.T) {
	s23 := Shape{2, 3}
	unary := map[string]func(x *Tensor) *Tensor{
		"neg": (*Tensor).Neg, "abs": (*Tensor).Abs, "exp": (*Tensor).Exp, "sin": (*Tensor).Sin,
		"cos": (*Tensor).Cos, "tanh": (*Tensor).Tanh, "sigmoid": (*Tensor).Sigmoid, "relu": (*Tensor).ReLU,
		"square": (*Tensor).Square, "expm1": (*Tensor).Expm1, "erf": (*Tensor).Erf,
		"leaky_relu": func(x *Tensor) *Tensor { return x.LeakyReLU(0.1) },
		"clamp":      func(x *Tensor) *Tensor { return x.Clamp(-0.5, 0.6) },
		"pow_scalar": func(x *Tensor) *Tensor { return x.PowScalar(3) },
		"gelu":       GELU,
		"floor":      (*Tensor).Floor, // zero gradient
		"add_scalar": func(x *Tensor) *Tensor { return x.AddScalar(2) },
		"mul_scalar": func(x *Tensor) *Tensor { return x.MulScalar(-3) },
		"rsub":       func(x *Tensor) *Tensor { return x.RSubScalar(1) },
	}
	for name, f := range unary {
		gradcheck(t, name, func(xs []*Tensor) *Tensor { return f(xs[0]) }, vals(s23, -1.9, 1.9, 1))
	}
	positive := map[string]func(x *Tensor) *Tensor{
		"log": (*Tensor).Log, "sqrt": (*Tensor).Sqrt, "rsqrt": (*Tensor).Rsqrt, "log1p": (*Tensor).Log1p,
		"reciprocal": (*Tensor).Reciprocal, "pow_half": func(x *Tensor) *Tensor { return x.PowScalar(0.5) },
	}
	for name, f := range positive {
		gradcheck(t, name, func(xs []*Tensor) *Tensor { return f(xs[0]) }, vals(s23, 0.3, 2.5, 2))
	}
	binary := map[string]func(a, b *Tensor) *Tensor{
		"add": (*Tensor).Add, "sub": (*Tensor).Sub, "mul": (*Tensor).Mul, "div": (*Tensor).Div,
		"maximum": (*Tensor).Maximum, "minimum": (*Tensor).Minimum, "atan2": (*Tensor).Atan2,
		"where": func(a, b *Tensor) *Tensor { return Where(a.GtScalar(0.9), a, b) },
	}
	for name, f := range binary {
		// same shape, and broadcasting [2,3] with [3] and [2,1]
		gradcheck(t, name, func(xs []*Tensor) *Tensor { return f(xs[0], xs[1]) }, vals(s23, 0.2, 2, 3), vals(s23, 0.3, 1.7, 4))
		gradcheck(t, name+"/bcast", func(xs []*Tensor) *Tensor { return f(xs[0], xs[1]) }, vals(s23, 0.2, 2, 3), vals(Shape{3}, 0.3, 1.7, 5))
		gradcheck(t, name+"/bcast2", func(xs []*Tensor) *Tensor { return f(xs[0], xs[1]) }, vals(Shape{2, 1}, 0.2, 2, 3), vals(s23, 0.3, 1.7, 5))
	}
	gradcheck(t, "pow", func(xs []*Tensor) *Tensor { return xs[0].Pow(xs[1]) }, vals(s23, 0.3, 2, 3), vals(Shape{3}, -1, 2, 6))
	gradcheck(t, "remainder", func(xs []*Tensor) *Tensor { return xs[0].Remainder(xs[1]) }, vals(s23, 0.3, 2, 3), vals(s23, 0.71, 0.9, 6))
	gradcheck(t, "zero-dim", func(xs []*Tensor) *Tensor { return xs[0].Mul(xs[1]) }, vals(s23, -1, 1, 3), vals(Shape{}, 0.5, 1, 6))
	gradcheck(t, "chain", func(xs []*Tensor) *Tensor {
		y := xs[0].Mul(xs[0]).Add(xs[0].Exp()) // x used twice
		return y.Div(xs[0].Sigmoid())
	}, vals(s23, -1, 1, 8))
}

func TestGradcheckReductions(t *testing.T) {
	x := vals(Shape{2, 3, 4}, -1, 2, 1)
	cases := map[string]func(x *Tensor) *Tensor{
		"sum":          func(x *Tensor) *Tensor { return x.Sum() },
		"sum_dims":     func(x *Tensor) *Tensor { return x.Sum(Dims(0, 2)) },
		"sum_keep":     func(x *Tensor) *Tensor { return x.Sum(Dims(1), KeepDim()) },
		"mean":         func(x *Tensor) *Tensor { return x.Mean() },
		"mean_dim":     func(x *Tensor) *Tensor { return x.Mean(Dims(-1)) },
		"prod_dim":     func(x *Tensor) *Tensor { return x.Prod(Dims(1)) },
		"max":          func(x *Tensor) *Tensor { return x.Max() },
		"amax":         func(x *Tensor) *Tensor { return x.Max(Dims(2)) },
		"amin_keep":    func(x *Tensor) *Tensor { return x.Min(Dims(0), KeepDim()) },
		"max_dim":      func(x *Tensor) *Tensor { v, _ := x.MaxDim(1, false); return v },
		"min_dim":      func(x *Tensor) *Tensor { v, _ := x.MinDim(2, true); return v },
		"var":          func(x *Tensor) *Tensor { return x.Var() },
		"var_dim":      func(x *Tensor) *Tensor { return x.Var(Dims(1), Correction(0)) },
		"std_dim":      func(x *Tensor) *Tensor { return x.Std(Dims(2), KeepDim()) },
		"softmax":      func(x *Tensor) *Tensor { return x.Softmax(1) },
		"softmax_last": func(x *Tensor) *Tensor { return x.Softmax(-1) },
		"log_softmax":  func(x *Tensor) *Tensor { return x.LogSoftmax(0) },
	}
	for name, f := range cases {
		gradcheck(t, name, func(xs []*Tensor) *Tensor { return f(xs[0]) }, x)
	}
	gradcheck(t, "prod", func(xs []*Tensor) *Tensor { return xs[0].Prod() }, vals(Shape{2, 3}, 0.5, 1.5, 2))
}

func TestGradcheckMatMul(t *testing.T) {
	shapes := [][2]Shape{
		{{3}, {3}}, {{2, 3}, {3}}, {{3}, {3, 4}}, {{2, 3}, {3, 4}},
		{{2, 2, 3}, {2, 3, 4}}, {{2, 2, 3}, {3, 4}}, {{3}, {2, 3, 4}}, {{2, 1, 2, 3}, {3, 3, 2}},
	}
	for _, s := range shapes {
		gradcheck(t, fmt.Sprintf("matmul %v@%v", s[0], s[1]), func(xs []*Tensor) *Tensor { return xs[0].MatMul(xs[1]) },
			vals(s[0], -1, 1, 1), vals(s[1], -1, 1, 2))
	}
	// a transposed (strided) operand
	gradcheck(t, "matmul transposed", func(xs []*Tensor) *Tensor { return xs[0].T().MatMul(xs[1]) },
		vals(Shape{3, 2}, -1, 1, 1), vals(Shape{3, 4}, -1, 1, 2))
	gradcheck(t, "linear", func(xs []*Tensor) *Tensor { return Linear(xs[0], xs[1], xs[2]) },
		vals(Shape{4, 3}, -1, 1, 1), vals(Shape{2, 3}, -1, 1, 2), vals(Shape{2}, -1, 1, 3))
	gradcheck(t, "linear 3-D no bias", func(xs []*Tensor) *Tensor { return Linear(xs[0], xs[1], nil) },
		vals(Shape{2, 4, 3}, -1, 1, 1), vals(Shape{2, 3}, -1, 1, 2))
	gradcheck(t, "linear 3-D", func(xs []*Tensor) *Tensor { return Linear(xs[0], xs[1], xs[2]) },
		vals(Shape{2, 4, 3}, -1, 1, 1), vals(Shape{2, 3}, -1, 1, 2), vals(Shape{2}, -1, 1, 3))
}

func TestGradcheckViews(t *testing.T) {
	x := vals(Shape{2, 3, 4}, -1, 1, 1)
	w := func(f func(x *Tensor) *Tensor) func(xs []*Tensor) *Tensor {
		// multiply by the input's own square so the view's gradient is not constant
		return func(xs []*Tensor) *Tensor { y := f(xs[0]); return y.Mul(y) }
	}
	cases := map[string]func(x *Tensor) *Tensor{
		"reshape":         func(x *Tensor) *Tensor { return x.Reshape(4, -1) },
		"view":            func(x *Tensor) *Tensor { return x.View(6, 4) },
		"transpose":       func(x *Tensor) *Tensor { return x.Transpose(0, 2) },
		"permute":         func(x *Tensor) *Tensor { return x.Permute(2, 0, 1) },
		"permute-reshape": func(x *Tensor) *Tensor { return x.Permute(2, 0, 1).Reshape(-1) },
		"unsqueeze":       func(x *Tensor) *Tensor { return x.Unsqueeze(1) },
		"squeeze":         func(x *Tensor) *Tensor { return x.Unsqueeze(0).Squeeze() },
		"squeeze_dim":     func(x *Tensor) *Tensor { return x.Unsqueeze(3).Squeeze(3) },
		"expand":          func(x *Tensor) *Tensor { return x.Unsqueeze(1).Expand(2, 5, 3, 4) },
		"narrow":          func(x *Tensor) *Tensor { return x.Narrow(2, 1, 2) },
		"slice":           func(x *Tensor) *Tensor { return x.Slice(2, 0, 4, 3) },
		"select":          func(x *Tensor) *Tensor { return x.Select(1, -1) },
		"index":           func(x *Tensor) *Tensor { return x.Index(1, 2) },
		"flatten":         func(x *Tensor) *Tensor { return x.Flatten(1, 2) },
		"contiguous":      func(x *Tensor) *Tensor { return x.Transpose(0, 1).Contiguous() },
		"clone":           func(x *Tensor) *Tensor { return x.Clone() },
		"split":           func(x *Tensor) *Tensor { p := x.Split(3, 2); return p[0].Sum(Dims(2)).Add(p[1].Squeeze(2)) },
		"chunk":           func(x *Tensor) *Tensor { p := x.Chunk(2, 1); return p[0].Sub(p[1].Narrow(1, 0, 1)) },
		"cat":             func(x *Tensor) *Tensor { return Cat([]*Tensor{x, x.Narrow(1, 0, 1), x.Exp()}, 1) },
		"stack":           func(x *Tensor) *Tensor { return Stack([]*Tensor{x, x.Sin()}, 1) },
		"to-cpu":          func(x *Tensor) *Tensor { return x.To(CPU).To(x.Device()) },
	}
	for name, f := range cases {
		gradcheck(t, name, w(f), x)
	}
	gradcheck(t, "cat2", func(xs []*Tensor) *Tensor { return Cat([]*Tensor{xs[0], xs[1]}, 0) },
		vals(Shape{2, 3}, -1, 1, 1), vals(Shape{1, 3}, -1, 1, 2))
}

func TestGradcheckNN(t *testing.T) {
	x := vals(Shape{2, 4, 5, 5}, -1, 1, 1)
	type conv struct {
		w                Shape
		stride, pad, dil [2]int
		groups           int
	}
	for _, c := range []conv{
		{Shape{3, 4, 3, 3}, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}, 1},
		{Shape{3, 4, 3, 2}, [2]int{2, 1}, [2]int{1, 2}, [2]int{1, 2}, 1},
		{Shape{4, 2, 2, 3}, [2]int{1, 2}, [2]int{1, 0}, [2]int{2, 1}, 2},
		{Shape{4, 1, 3, 3}, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 4},
	} {
		gradcheck(t, fmt.Sprintf("conv2d %+v", c), func(xs []*Tensor) *Tensor {
			return Conv2d(xs[0], xs[1], xs[2], c.stride, c.pad, c.dil, c.groups)
		}, x, vals(c.w, -1, 1, 2), vals(Shape{c.w[0]}, -1, 1, 3))
	}
	gradcheck(t, "conv2d unbatched no bias", func(xs []*Tensor) *Tensor {
		return Conv2d(xs[0], xs[1], nil, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 1)
	}, vals(Shape{2, 4, 4}, -1, 1, 1), vals(Shape{3, 2, 3, 3}, -1, 1, 2))
	gradcheck(t, "max_pool2d", func(xs []*Tensor) *Tensor { return MaxPool2d(xs[0], [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}) }, x)
	gradcheck(t, "max_pool2d default stride", func(xs []*Tensor) *Tensor { return MaxPool2d(xs[0], [2]int{2, 2}, [2]int{}, [2]int{}) }, x)
	gradcheck(t, "avg_pool2d", func(xs []*Tensor) *Tensor { return AvgPool2d(xs[0], [2]int{3, 2}, [2]int{2, 1}, [2]int{1, 1}, true) }, x)
	gradcheck(t, "avg_pool2d exclude pad", func(xs []*Tensor) *Tensor { return AvgPool2d(xs[0], [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, false) }, x)
	gradcheck(t, "adaptive_avg_pool2d", func(xs []*Tensor) *Tensor { return AdaptiveAvgPool2d(xs[0], 3, 2) }, x)
	gradcheck(t, "adaptive_avg_pool2d global", func(xs []*Tensor) *Tensor { return AdaptiveAvgPool2d(xs[0], 1, 1) }, x)
	gradcheck(t, "batch_norm train", func(xs []*Tensor) *Tensor {
		return BatchNorm(xs[0], nil, nil, xs[1], xs[2], true, 0.1, 1e-5)
	}, x, vals(Shape{4}, 0.5, 1.5, 2), vals(Shape{4}, -1, 1, 3))
	gradcheck(t, "batch_norm eval", func(xs []*Tensor) *Tensor {
		rm := FromSlice([]float64{0.1, -0.2, 0.3, 0}, nil, On(xs[0].Device()))
		rv := FromSlice([]float64{1, 2, 0.5, 1.5}, nil, On(xs[0].Device()))
		return BatchNorm(xs[0], rm, rv, xs[1], xs[2], false, 0.1, 1e-5)
	}, x, vals(Shape{4}, 0.5, 1.5, 2), vals(Shape{4}, -1, 1, 3))
	gradcheck(t, "batch_norm 2-D", func(xs []*Tensor) *Tensor {
		return BatchNorm(xs[0], nil, nil, xs[1], nil, true, 0.1, 1e-5)
	}, vals(Shape{5, 3}, -1, 1, 4), vals(Shape{3}, 0.5, 1.5, 2))
	gradcheck(t, "layer_norm", func(xs []*Tensor) *Tensor {
		return LayerNorm(xs[0], []int{5, 5}, xs[1], xs[2], 1e-5)
	}, vals(Shape{2, 3, 5, 5}, -1, 1, 1), vals(Shape{5, 5}, 0.5, 1.5, 2), vals(Shape{5, 5}, -1, 1, 3))
	logits := vals(Shape{4, 5}, -2, 2, 1)
	target := ints(Shape{4}, 1, 0, 4, 2)
	for _, red := range []string{"mean", "sum", "none"} {
		gradcheck(t, "cross_entropy "+red, func(xs []*Tensor) *Tensor { return CrossEntropy(xs[0], xs[1], 0, red) }, logits, target)
		gradcheck(t, "cross_entropy smoothing "+red, func(xs []*Tensor) *Tensor { return CrossEntropy(xs[0], xs[1], 0.2, red) }, logits, ints(Shape{4}, 1, -100, 4, 2))
		gradcheck(t, "nll_loss "+red, func(xs []*Tensor) *Tensor { return NLLLoss(xs[0], xs[1], red) }, logits, ints(Shape{4}, 1, -100, 4, 2))
		gradcheck(t, "mse "+red, func(xs []*Tensor) *Tensor { return MSELoss(xs[0], xs[1], red) }, logits, vals(Shape{4, 5}, -1, 1, 2))
		gradcheck(t, "bce_logits "+red, func(xs []*Tensor) *Tensor { return BCEWithLogits(xs[0], xs[1], red) }, logits, vals(Shape{4, 5}, 0, 1, 2))
	}
	gradcheck(t, "cross_entropy probs", func(xs []*Tensor) *Tensor { return CrossEntropy(xs[0], xs[1].Softmax(1), 0.1, "mean") }, logits, vals(Shape{4, 5}, -1, 1, 2))
	gradcheck(t, "cross_entropy [N,C,d]", func(xs []*Tensor) *Tensor { return CrossEntropy(xs[0], xs[1], 0.1, "mean") },
		vals(Shape{2, 3, 2}, -1, 1, 1), ints(Shape{2, 2}, 0, 2, 1, 1))
	gradcheck(t, "embedding", func(xs []*Tensor) *Tensor { return Embedding(xs[1], xs[0]) }, vals(Shape{5, 3}, -1, 1, 1), ints(Shape{2, 2}, 4, 0, 4, 2))
	gradcheck(t, "dropout", func(xs []*Tensor) *Tensor { ManualSeed(3); return Dropout(xs[0], 0.4, true) }, logits)
}

func TestBackwardAccumulates(t *testing.T) {
	x := FromSlice([]float64{1, 2, 3}, nil).SetRequiresGrad(true)
	x.Mul(x).Sum().Backward()
	x.Mul(x).Sum().Backward()
	if got := x.Grad().Float64s(); got[0] != 4 || got[1] != 8 || got[2] != 12 {
		t.Fatalf("accumulated grad %v, want [4 8 12]", got)
	}
	x.ZeroGrad()
	if x.Grad() != nil {
		t.Fatal("ZeroGrad left a gradient")
	}
	y := x.Mul(x).Sum()
	y.BackwardRetain()
	y.Backward()
	if got := x.Grad().Float64s(); got[2] != 12 {
		t.Fatalf("retained graph: grad %v, want [4 8 12]", got)
	}
	err := Try(func() { y.Backward() })
	if err == nil || !strings.HasPrefix(err.(*AutogradError).Msg, "Trying to backward through the graph a second time") {
		t.Fatalf("second backward: %v", err)
	}
	// a graph without saved tensors can be run again, as in PyTorch
	z := x.AddScalar(1).Sum()
	z.Backward()
	z.Backward()
	// BackwardWith a non-scalar
	x.ZeroGrad()
	x.MulScalar(2).BackwardWith(FromSlice([]float64{1, 0, -1}, nil))
	if got := x.Grad().Float64s(); got[0] != 2 || got[1] != 0 || got[2] != -2 {
		t.Fatalf("BackwardWith grad %v", got)
	}
	if err := Try(func() { x.MulScalar(2).Backward() }); err == nil || !strings.Contains(err.Error(), "grad can be implicitly created only for scalar outputs") {
		t.Fatalf("non-scalar Backward: %v", err)
	}
}

func TestNoGradDetachLeaf(t *testing.T) {
	x := Ones(Shape{2}, WithGrad())
	if !x.IsLeaf() || x.GradFn() != "" || !x.RequiresGrad() {
		t.Fatal("x should be a leaf that requires grad")
	}
	var y *Tensor
	NoGrad(func() {
		if IsGradEnabled() {
			t.Fatal("grad enabled inside NoGrad")
		}
		y = x.MulScalar(2)
	})
	if !IsGradEnabled() || y.RequiresGrad() || y.GradFn() != "" {
		t.Fatal("NoGrad recorded a graph")
	}
	d := x.MulScalar(3).Detach()
	if d.RequiresGrad() || !d.IsLeaf() {
		t.Fatal("Detach kept the graph")
	}
	z := x.MulScalar(3)
	if z.IsLeaf() || z.GradFn() != "MulBackward0" {
		t.Fatalf("z: leaf %v grad_fn %q", z.IsLeaf(), z.GradFn())
	}
	if Ones(Shape{2}).MulScalar(2).RequiresGrad() {
		t.Fatal("an op on tensors without grad requires grad")
	}
	if err := Try(func() { FromSlice([]int64{1}, nil).SetRequiresGrad(true) }); err == nil {
		t.Fatal("an integer tensor accepted requires_grad")
	}
	// integer results never require grad
	if x.ArgMax().RequiresGrad() || x.GtScalar(0).RequiresGrad() {
		t.Fatal("integer/bool result requires grad")
	}
	// in-place on a leaf that requires grad
	err := Try(func() { x.AddScalarInPlace(1) })
	if err == nil || !strings.Contains(err.Error(), "a leaf Variable that requires grad is being used in an in-place operation.") {
		t.Fatalf("in-place on leaf: %v", err)
	}
	NoGrad(func() { x.AddScalarInPlace(1) })
	if got := x.Float64s(); got[0] != 2 {
		t.Fatalf("in-place under NoGrad: %v", got)
	}
	// modifying a saved tensor in place is caught at backward
	a := Ones(Shape{2}, WithGrad())
	b := Ones(Shape{2})
	c := a.Mul(b).Sum()
	b.MulScalarInPlace(2)
	if err := Try(func() { c.Backward() }); err == nil || !strings.Contains(err.Error(), "modified by an inplace operation") {
		t.Fatalf("saved tensor modified: %v", err)
	}
}

func TestGradFnNames(t *testing.T) {
	x := Randn(Shape{4, 3}, WithGrad())
	w := Randn(Shape{2, 3}, WithGrad())
	b := Randn(Shape{2}, WithGrad())
	v := Randn(Shape{3}, WithGrad())
	ce := CrossEntropy(Linear(x, w, b), FromSlice([]int64{0, 1, 1, 0}, nil), 0, "mean")
	cases := map[string]*Tensor{
		"AddmmBackward0":                Linear(x, w, b),
		"MmBackward0":                   Linear(x, w, nil),
		"MvBackward0":                   x.MatMul(v),
		"DotBackward0":                  v.MatMul(v),
		"BmmBackward0":                  x.Unsqueeze(0).MatMul(w.T().Unsqueeze(0)),
		"TBackward0":                    x.T(),
		"TransposeBackward0":            x.Transpose(0, 1),
		"PermuteBackward0":              x.Permute(1, 0),
		"ViewBackward0":                 x.View(12),
		"ExpandBackward0":               v.Expand(2, 3),
		"SumBackward0":                  x.Sum(),
		"SumBackward1":                  x.Sum(Dims(0)),
		"MeanBackward0":                 x.Mean(),
		"MeanBackward1":                 x.Mean(Dims(1)),
		"AddBackward0":                  x.Add(v),
		"SubBackward0":                  x.Sub(v),
		"MulBackward0":                  x.Mul(v),
		"DivBackward0":                  x.Div(v),
		"NegBackward0":                  x.Neg(),
		"ReluBackward0":                 x.ReLU(),
		"SigmoidBackward0":              x.Sigmoid(),
		"TanhBackward0":                 x.Tanh(),
		"ExpBackward0":                  x.Exp(),
		"LogBackward0":                  x.Abs().Log(),
		"PowBackward0":                  x.PowScalar(2),
		"PowBackward1":                  x.Abs().Pow(v),
		"SoftmaxBackward0":              x.Softmax(1),
		"LogSoftmaxBackward0":           x.LogSoftmax(1),
		"NllLossBackward0":              ce,
		"SliceBackward0":                x.Narrow(0, 1, 2),
		"SelectBackward0":               x.Select(0, 1),
		"CatBackward0":                  Cat([]*Tensor{x, x}, 0),
		"StackBackward0":                Stack([]*Tensor{x, x}, 0),
		"SplitBackward0":                x.Split(2, 0)[1],
		"UnsqueezeBackward0":            x.Unsqueeze(0),
		"SqueezeBackward1":              x.Unsqueeze(0).Squeeze(0),
		"CloneBackward0":                x.Clone(),
		"ToCopyBackward0":               x.Cast(Float64),
		"MaxBackward1":                  x.Max(),
		"MaxBackward0":                  func() *Tensor { m, _ := x.MaxDim(0, false); return m }(),
		"AmaxBackward0":                 x.Max(Dims(0)),
		"VarBackward0":                  x.Var(),
		"StdBackward0":                  x.Std(Dims(0)),
		"WhereBackward0":                Where(x.GtScalar(0), x, v),
		"ClampBackward1":                x.Clamp(-1, 1),
		"GeluBackward0":                 GELU(x),
		"EmbeddingBackward0":            Embedding(FromSlice([]int64{1}, nil), x),
		"MseLossBackward0":              MSELoss(x, x.Detach(), "mean"),
		"NativeLayerNormBackward0":      LayerNorm(x, []int{3}, nil, nil, 1e-5),
		"NativeBatchNormBackward0":      BatchNorm(x, nil, nil, nil, nil, true, 0.1, 1e-5),
		"ConvolutionBackward0":          Conv2d(x.Reshape(1, 1, 4, 3), Ones(Shape{1, 1, 2, 2}), nil, [2]int{1, 1}, [2]int{}, [2]int{1, 1}, 1),
		"MaxPool2DWithIndicesBackward0": MaxPool2d(x.Reshape(1, 1, 4, 3), [2]int{2, 2}, [2]int{}, [2]int{}),
		"AvgPool2DBackward0":            AvgPool2d(x.Reshape(1, 1, 4, 3), [2]int{2, 2}, [2]int{}, [2]int{}, true),
	}
	for want, y := range cases {
		if got := y.GradFn(); got != want {
			t.Errorf("grad_fn %q, want %q", got, want)
		}
	}
}

func TestPrintGradFn(t *testing.T) {
	x := FromSlice([]float32{1, 2}, Shape{1, 2}, WithGrad())
	w := FromSlice([]float32{1, 1, 0, 1}, Shape{2, 2}, WithGrad())
	b := FromSlice([]float32{0.5, 0}, nil, WithGrad())
	if got, want := Linear(x, w, b).String(), "tensor([[3.5000, 2.0000]], grad_fn=<AddmmBackward0>)"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := b.String(), "tensor([0.5000, 0.0000], requires_grad=True)"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := x.Sum().String(), "tensor(3., grad_fn=<SumBackward0>)"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestInPlaceOps(t *testing.T) {
	p := FromSlice([]float64{1, 2, 3, 4}, Shape{2, 2})
	g := FromSlice([]float64{1, 1, 2, 2}, Shape{2, 2})
	p.MulScalarInPlace(2).AddScaledInPlace(g, 0.5) // [2.5 4.5 7 9]
	p.AddcmulInPlace(g, g, 2)                      // + 2g² = [4.5 6.5 15 17]
	p.AddcdivInPlace(g, FromSlice([]float64{2}, nil), -1)
	p.AddInPlace(FromSlice([]float64{1, 0}, nil)) // broadcast row
	want := []float64{5, 6, 15, 16}
	for i, v := range p.Float64s() {
		if v != want[i] {
			t.Fatalf("p = %v, want %v", p.Float64s(), want)
		}
	}
	p.DivInPlace(FromSlice([]float64{5}, nil)).SubInPlace(Ones(Shape{2}, Dtype(Float64)))
	p.Select(1, 0).FillInPlace(9) // through a strided view
	p.Select(0, 1).CopyFrom(FromSlice([]float32{-1}, nil))
	want = []float64{9, 0.2, -1, -1}
	for i, v := range p.Float64s() {
		if math.Abs(v-want[i]) > 1e-15 {
			t.Fatalf("p = %v, want %v", p.Float64s(), want)
		}
	}
	q := FromSlice([]float32{4, 9}, nil)
	q.SqrtInPlace()
	if got := q.Float32s(); got[0] != 2 || got[1] != 3 {
		t.Fatalf("sqrt_ %v", got)
	}
	q.ZeroInPlace()
	if q.Sum().Item() != 0 {
		t.Fatal("zero_")
	}
	if err := Try(func() { FromSlice([]int64{1}, nil).AddInPlace(FromSlice([]float32{1.5}, nil)) }); err == nil {
		t.Fatal("int += float accepted")
	}
	if err := Try(func() { Ones(Shape{2}).AddInPlace(Ones(Shape{2, 2})) }); err == nil {
		t.Fatal("in-place broadcast of the destination accepted")
	}
}

func TestCastGrad(t *testing.T) {
	x := FromSlice([]float64{1, 2}, nil, WithGrad())
	y := x.Cast(Float32)
	if y.GradFn() != "ToCopyBackward0" {
		t.Fatalf("grad_fn %q", y.GradFn())
	}
	y.MulScalar(3).Sum().Backward()
	if g := x.Grad(); g.DType() != Float64 || g.Float64s()[0] != 3 || g.Float64s()[1] != 3 {
		t.Fatalf("grad %v", g)
	}
}

func TestBatchNormRunningStats(t *testing.T) {
	x := FromSlice([]float64{1, 2, 3, 5, 0, 4}, Shape{3, 2}) // channel 0: 1,3,0; channel 1: 2,5,4
	rm := Zeros(Shape{2}, Dtype(Float64))
	rv := Ones(Shape{2}, Dtype(Float64))
	BatchNorm(x, rm, rv, nil, nil, true, 0.1, 1e-5)
	// means 4/3 and 11/3; unbiased variances 7/3 and 7/3
	wantM := []float64{0.1 * 4 / 3, 0.1 * 11 / 3}
	wantV := []float64{0.9 + 0.1*7/3, 0.9 + 0.1*7/3}
	for i := 0; i < 2; i++ {
		if math.Abs(rm.Float64s()[i]-wantM[i]) > 1e-12 || math.Abs(rv.Float64s()[i]-wantV[i]) > 1e-12 {
			t.Fatalf("running stats %v %v, want %v %v", rm.Float64s(), rv.Float64s(), wantM, wantV)
		}
	}
}
