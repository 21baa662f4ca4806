package ember

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// sdpaTensor is a fixture tensor whose nulls are NaN (for a mask: −∞).
type sdpaTensor struct {
	Shape []int      `json:"shape"`
	Data  []*float64 `json:"data"`
}

func (f sdpaTensor) values(null float64) []float64 {
	d := make([]float64, len(f.Data))
	for i, p := range f.Data {
		d[i] = null
		if p != nil {
			d[i] = *p
		}
	}
	return d
}

type sdpaCase struct {
	Q, K, V sdpaTensor
	Mask    struct {
		Kind  string     `json:"kind"`
		Shape []int      `json:"shape"`
		Data  []*float64 `json:"data"`
	} `json:"mask"`
	Causal bool                  `json:"causal"`
	Scale  *float64              `json:"scale"`
	W      sdpaTensor            `json:"w"`
	Output sdpaTensor            `json:"output"`
	Grads  map[string]sdpaTensor `json:"grads"`
}

func loadSDPACases(t *testing.T) []sdpaCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "grad", "grad_sdpa.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []sdpaCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// sdpaClose compares got with a reference whose nulls are NaN.
func sdpaClose(t *testing.T, what string, got *Tensor, want sdpaTensor, tol float64) {
	t.Helper()
	if !got.Shape().Equal(Shape(want.Shape)) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), want.Shape)
	}
	for i, v := range got.Float64s() {
		w := want.Data[i]
		if w == nil {
			if !math.IsNaN(v) {
				t.Fatalf("%s[%d] = %.8g, reference NaN", what, i, v)
			}
			continue
		}
		if math.IsNaN(v) || math.Abs(v-*w) > tol+tol*math.Abs(*w) {
			t.Fatalf("%s[%d] = %.8g, reference %.8g", what, i, v, *w)
		}
	}
}

// TestSDPAFixtures checks both paths (the fused kernels and the generic
// lowering) on every device against the explicit float64 formula, in
// float64 and float32: outputs and the gradients of sum(out·w).
func TestSDPAFixtures(t *testing.T) {
	cases := loadSDPACases(t)
	for _, dev := range testDevices() {
		for _, k := range []Kernels{NativeKernels, GenericKernels} {
			for _, dt := range []DType{Float64, Float32} {
				tol := 1e-9
				if dt == Float32 {
					tol = 2e-5
				}
				for i, c := range cases {
					in := func(f sdpaTensor) *Tensor {
						return FromSlice(f.values(math.NaN()), Shape(f.Shape), On(dev)).Cast(dt).SetRequiresGrad(true)
					}
					q, kk, v := in(c.Q), in(c.K), in(c.V)
					o := AttentionOptions{Causal: c.Causal}
					if c.Scale != nil {
						o.Scale = *c.Scale
					}
					md := sdpaTensor{Shape: c.Mask.Shape, Data: c.Mask.Data}.values(math.Inf(-1))
					switch c.Mask.Kind {
					case "bool":
						o.Mask = FromSlice(md, Shape(c.Mask.Shape), On(dev)).GtScalar(0.5)
					case "float":
						o.Mask = FromSlice(md, Shape(c.Mask.Shape), On(dev)).Cast(dt)
					}
					out := k.ScaledDotProductAttention(q, kk, v, o)
					if out.GradFn() != attentionGradFn {
						t.Fatalf("grad_fn %q", out.GradFn())
					}
					name := func(s string) string {
						return dev.String() + "/" + k.String() + "/" + dt.String() + "/case " + string(rune('0'+i)) + " " + s
					}
					sdpaClose(t, name("output"), out, c.Output, tol)
					w := FromSlice(c.W.values(0), Shape(c.W.Shape), On(dev)).Cast(dt)
					out.Mul(w).Sum().Backward()
					for nm, x := range map[string]*Tensor{"q": q, "k": kk, "v": v} {
						sdpaClose(t, name("grad "+nm), x.Grad(), c.Grads[nm], tol)
					}
				}
			}
		}
	}
}

// TestSDPAGradcheck: finite differences through the fused kernels (and
// the generic lowering with a float mask that requires grad).
func TestSDPAGradcheck(t *testing.T) {
	mask := vals(Shape{1, 5, 7}, -1, 1, 4)
	for _, causal := range []bool{false, true} {
		gradcheck(t, "sdpa", func(xs []*Tensor) *Tensor {
			return ScaledDotProductAttention(xs[0], xs[1], xs[2], AttentionOptions{Causal: causal})
		}, vals(Shape{2, 5, 3}, -1, 1, 1), vals(Shape{2, 7, 3}, -1, 1, 2), vals(Shape{2, 7, 4}, -1, 1, 3))
	}
	gradcheck(t, "sdpa float mask", func(xs []*Tensor) *Tensor {
		return ScaledDotProductAttention(xs[0], xs[1], xs[2], AttentionOptions{Mask: xs[3], Scale: 0.7})
	}, vals(Shape{2, 5, 3}, -1, 1, 1), vals(Shape{2, 7, 3}, -1, 1, 2), vals(Shape{2, 7, 4}, -1, 1, 3), mask)
}

// TestSDPAFullyMaskedRow: a row with no key gives NaN (PyTorch 2's
// math path, softmax of −∞ everywhere) and the other rows are untouched:
// with v = 1 everywhere each other row is exactly 1.
func TestSDPAFullyMaskedRow(t *testing.T) {
	for _, dev := range testDevices() {
		for _, k := range []Kernels{NativeKernels, GenericKernels} {
			q := Randn(Shape{1, 3, 4}, On(dev))
			key := Randn(Shape{1, 5, 4}, On(dev))
			v := Ones(Shape{1, 5, 2}, On(dev))
			m := FromSlice([]bool{true, false, true, true, true, false, false, false, false, false, false, false, false, false, true}, Shape{3, 5}, On(dev))
			got := k.ScaledDotProductAttention(q, key, v, AttentionOptions{Mask: m}).Float64s()
			for i, x := range got {
				if row := i / 2; row == 1 {
					if !math.IsNaN(x) {
						t.Fatalf("%v %v: fully masked row gives %v, want NaN", dev, k, x)
					}
				} else if math.Abs(x-1) > 1e-6 {
					t.Fatalf("%v %v: out[%d] = %v, want 1", dev, k, i, x)
				}
			}
		}
	}
}

// TestSDPAHandWorked: one query, two keys, scale 1: weights
// softmax(q·k) = softmax(0, ln 3) = (1/4, 3/4).
func TestSDPAHandWorked(t *testing.T) {
	for _, dev := range testDevices() {
		q := FromSlice([]float32{1, 0}, Shape{1, 2}, On(dev))
		k := FromSlice([]float32{0, 5, float32(math.Log(3)), 7}, Shape{2, 2}, On(dev))
		v := FromSlice([]float32{4, 8, 0, 4}, Shape{2, 2}, On(dev))
		got := ScaledDotProductAttention(q, k, v, AttentionOptions{Scale: 1}).Float64s()
		if math.Abs(got[0]-1) > 1e-6 || math.Abs(got[1]-5) > 1e-6 {
			t.Fatalf("%v: got %v, want [1 5]", dev, got)
		}
		// causal: query 0 sees key 0 only
		got = ScaledDotProductAttention(q, k, v, AttentionOptions{Scale: 1, Causal: true}).Float64s()
		if got[0] != 4 || got[1] != 8 {
			t.Fatalf("%v causal: got %v, want [4 8]", dev, got)
		}
	}
}

// TestSDPADropout: the seeded path. With v = 1 each output is the sum of
// the kept weights / (1−p): its mean over many rows is 1 and its spread
// that of a Bernoulli sum; ManualSeed repeats it; p = 1 gives 0.
func TestSDPADropout(t *testing.T) {
	for _, dev := range testDevices() {
		const l, s, p = 400, 50, 0.25
		q := Zeros(Shape{l, 8}, On(dev)) // uniform weights 1/s
		k := Randn(Shape{s, 8}, On(dev))
		v := Ones(Shape{s, 1}, On(dev))
		ManualSeed(7)
		a := ScaledDotProductAttention(q, k, v, AttentionOptions{Dropout: p}).Float64s()
		ManualSeed(7)
		b := ScaledDotProductAttention(q, k, v, AttentionOptions{Dropout: p}).Float64s()
		var mean, sq float64
		for i, x := range a {
			if x != b[i] {
				t.Fatalf("%v: ManualSeed does not repeat dropout", dev)
			}
			mean += x
			sq += x * x
		}
		mean /= l
		variance := sq/l - mean*mean
		// each output is Binomial(s, 1−p)/(s(1−p)): mean 1, variance p/(s(1−p))
		wantVar := p / (s * (1 - p))
		if math.Abs(mean-1) > 4*math.Sqrt(wantVar/l) || math.Abs(variance/wantVar-1) > 0.3 {
			t.Fatalf("%v: dropout mean %v variance %v, want 1 and %v", dev, mean, variance, wantVar)
		}
		z := ScaledDotProductAttention(q, k, v, AttentionOptions{Dropout: 1}).Float64s()
		for _, x := range z {
			if x != 0 {
				t.Fatalf("%v: dropout 1 gives %v", dev, x)
			}
		}
	}
}

// TestSDPALongSequenceMemory: the fused path allocates the output and the
// logsumexp, not the 2048×2048 scores (16 MiB in float32).
func TestSDPALongSequenceMemory(t *testing.T) {
	const n, e = 2048, 8
	q := Randn(Shape{1, n, e}).SetRequiresGrad(true)
	k := Randn(Shape{1, n, e}).SetRequiresGrad(true)
	v := Randn(Shape{1, n, e}).SetRequiresGrad(true)
	ResetPeakMemoryStats(CPU)
	base := MemoryAllocated(CPU)
	out := ScaledDotProductAttention(q, k, v, AttentionOptions{Causal: true})
	out.Sum().Backward()
	if peak := MaxMemoryAllocated(CPU) - base; peak > 4<<20 {
		t.Fatalf("peak %d bytes for n=%d: the scores were stored", peak, n)
	}
	if q.Grad() == nil || k.Grad() == nil || v.Grad() == nil {
		t.Fatal("no gradients")
	}
}

func TestSDPAErrors(t *testing.T) {
	q, k, v := Zeros(Shape{2, 3, 4}), Zeros(Shape{2, 5, 4}), Zeros(Shape{2, 5, 6})
	for name, f := range map[string]func(){
		"head dims":   func() { ScaledDotProductAttention(q, Zeros(Shape{2, 5, 3}), v, AttentionOptions{}) },
		"key lengths": func() { ScaledDotProductAttention(q, k, Zeros(Shape{2, 4, 6}), AttentionOptions{}) },
		"1-D":         func() { ScaledDotProductAttention(Zeros(Shape{4}), k, v, AttentionOptions{}) },
		"batch":       func() { ScaledDotProductAttention(q, Zeros(Shape{3, 5, 4}), v, AttentionOptions{}) },
		"mask shape":  func() { ScaledDotProductAttention(q, k, v, AttentionOptions{Mask: Zeros(Shape{3, 4}, Dtype(Bool))}) },
		"causal+mask": func() {
			ScaledDotProductAttention(q, k, v, AttentionOptions{Mask: Zeros(Shape{3, 5}, Dtype(Bool)), Causal: true})
		},
		"mask dtype":   func() { ScaledDotProductAttention(q, k, v, AttentionOptions{Mask: Zeros(Shape{3, 5}, Dtype(Float64))}) },
		"integer":      func() { ScaledDotProductAttention(q.Cast(Int64), k.Cast(Int64), v.Cast(Int64), AttentionOptions{}) },
		"mixed dtypes": func() { ScaledDotProductAttention(q, k.Cast(Float64), v, AttentionOptions{}) },
	} {
		err := Try(f)
		var se *ShapeError
		var de *DTypeError
		if err == nil || !(errors.As(err, &se) || errors.As(err, &de)) {
			t.Errorf("%s: got %v, want a *ShapeError or *DTypeError", name, err)
		}
	}
	// a probability out of [0, 1] is a bad value, not a bad shape (as
	// nn.NewMultiheadAttention's and README's rule)
	for _, p := range []float64{1.5, -0.1, math.NaN()} {
		var ve *ValueError
		if err := Try(func() { ScaledDotProductAttention(q, k, v, AttentionOptions{Dropout: p}) }); !errors.As(err, &ve) {
			t.Errorf("dropout %v: got %v, want a *ValueError", p, err)
		}
	}
}

// TestSDPAEmptyBatch: a batch of zero sequences (a zero batch dim in q, or
// one that only k broadcasts in) gives an empty output of the right shape
// and empty gradients, as PyTorch does, on the fused path and with a mask;
// it reached the CPU kernel as an index-out-of-range panic.
func TestSDPAEmptyBatch(t *testing.T) {
	for _, dev := range testDevices() {
		for _, c := range []struct {
			q, k Shape
			want Shape
			mask bool
		}{
			{Shape{0, 2, 3, 4}, Shape{0, 2, 5, 4}, Shape{0, 2, 3, 6}, false},
			{Shape{2, 0, 3, 4}, Shape{2, 0, 5, 4}, Shape{2, 0, 3, 6}, true},
			{Shape{1, 3, 4}, Shape{0, 5, 4}, Shape{0, 3, 6}, true},
		} {
			q := Zeros(c.q, On(dev)).SetRequiresGrad(true)
			k := Zeros(c.k, On(dev)).SetRequiresGrad(true)
			vs := c.k.clone()
			vs[len(vs)-1] = 6
			v := Zeros(vs, On(dev)).SetRequiresGrad(true)
			o := AttentionOptions{Causal: !c.mask}
			if c.mask {
				o.Mask = Ones(Shape{3, 5}, On(dev), Dtype(Bool))
			}
			out := ScaledDotProductAttention(q, k, v, o)
			if !out.Shape().Equal(c.want) {
				t.Fatalf("%v %v: shape %v, want %v", dev, c.q, out.Shape(), c.want)
			}
			out.Sum().Backward()
			if !q.Grad().Shape().Equal(c.q) || !k.Grad().Shape().Equal(c.k) || !v.Grad().Shape().Equal(vs) {
				t.Fatalf("%v %v: gradient shapes %v %v %v", dev, c.q, q.Grad().Shape(), k.Grad().Shape(), v.Grad().Shape())
			}
		}
	}
}
