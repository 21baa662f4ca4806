package embertest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/emberml/ember"
)

// The ops a backend may run on kernels of its own (Conv2d, MaxPool2d,
// AvgPool2d, BatchNorm; see ember.Kernels) run on both paths, the
// backend's kernels (ember.NativeKernels, the generic lowering where the
// backend has none) and the lowering (ember.GenericKernels), on
// PyTorch's cases from testdata/fixtures/grad (testdata/gen_grad_fixtures.py):
// float64 and float32, each input contiguous, permuted (channels-last, or
// column-major for 2-D) and an offset slice of a bigger tensor whose other
// elements are NaN. Each path's output, input gradients (of sum(out·w))
// and running statistics are compared with PyTorch's, and the two paths'
// with each other, more tightly.

// gradTensor is a fixture tensor: float64 data in row-major order.
type gradTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// gradCase is one case of testdata/fixtures/grad/grad_<op>.json.
type gradCase struct {
	Params  map[string]json.RawMessage `json:"params"`
	Inputs  map[string]gradTensor      `json:"inputs"`
	W       gradTensor                 `json:"w"`
	Output  gradTensor                 `json:"output"`
	Grads   map[string]gradTensor      `json:"grads"`
	RMAfter *gradTensor                `json:"running_mean_after"`
	RVAfter *gradTensor                `json:"running_var_after"`
}

func (c gradCase) param(t *testing.T, name string, v any) {
	t.Helper()
	if err := json.Unmarshal(c.Params[name], v); err != nil {
		t.Fatalf("param %s: %v", name, err)
	}
}

func loadGradCases(t *testing.T, op string) []gradCase {
	t.Helper()
	path := filepath.Join(FixtureDir(), "grad", "grad_"+op+".json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run /usr/bin/python3 testdata/gen_grad_fixtures.py)", err)
	}
	var cs []gradCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cs
}

// nativeRun is what one path made: the output, the named inputs'
// gradients and the running statistics after the call (batch norm).
type nativeRun struct {
	out    *ember.Tensor
	grads  map[string]*ember.Tensor
	rm, rv *ember.Tensor
	gradFn string
}

// layouts are the input layouts each case runs with.
var layouts = []string{"contiguous", "permuted", "offset"}

// laidOut returns a leaf holding data (shape, dt, dev) that requires grad,
// and an argument with its values in the given layout whose gradient
// flows to the leaf's part returned by part.
func laidOut(data gradTensor, dt ember.DType, dev ember.Device, layout string) (leaf, arg *ember.Tensor, part func(g *ember.Tensor) *ember.Tensor) {
	shape := ember.Shape(data.Shape)
	same := func(g *ember.Tensor) *ember.Tensor { return g }
	switch layout {
	case "permuted":
		leaf = ember.FromSlice(data.Data, shape, ember.On(dev), ember.Dtype(dt)).SetRequiresGrad(true)
		if len(shape) == 4 { // channels-last
			return leaf, leaf.Permute(0, 2, 3, 1).Contiguous().Permute(0, 3, 1, 2), same
		}
		return leaf, leaf.T().Contiguous().T(), same
	case "offset":
		// a bigger tensor, NaN outside the slice: one more row in dim 0,
		// two more columns in the last dim; the slice starts at [1, ..., 1]
		big := append(ember.Shape{}, shape...)
		big[0]++
		big[len(big)-1] += 2
		host := ember.Full(big, math.NaN(), ember.Dtype(ember.Float64))
		cut := func(t *ember.Tensor) *ember.Tensor {
			return t.Narrow(0, 1, shape[0]).Narrow(len(shape)-1, 1, shape[len(shape)-1])
		}
		cut(host).CopyFrom(ember.FromSlice(data.Data, shape))
		leaf = ember.FromSlice(host.Float64s(), big, ember.On(dev), ember.Dtype(dt)).SetRequiresGrad(true)
		return leaf, cut(leaf), cut
	}
	leaf = ember.FromSlice(data.Data, shape, ember.On(dev), ember.Dtype(dt)).SetRequiresGrad(true)
	return leaf, leaf, same
}

// runNative runs op with k on the case's inputs ("x" in the layout, the
// others contiguous) and returns the output and the gradients.
func runNative(t *testing.T, c gradCase, k ember.Kernels, dt ember.DType, dev ember.Device, layout string,
	op func(k ember.Kernels, in map[string]*ember.Tensor, r *nativeRun) *ember.Tensor) nativeRun {
	t.Helper()
	var r nativeRun
	in := map[string]*ember.Tensor{}
	leaves := map[string]*ember.Tensor{}
	parts := map[string]func(*ember.Tensor) *ember.Tensor{}
	for name, v := range c.Inputs {
		l := "contiguous"
		if name == "x" {
			l = layout
		}
		leaves[name], in[name], parts[name] = laidOut(v, dt, dev, l)
	}
	out := op(k, in, &r)
	r.gradFn = out.GradFn()
	r.out = out.Detach()
	w := ember.FromSlice(c.W.Data, ember.Shape(c.W.Shape), ember.On(dev), ember.Dtype(dt))
	out.Mul(w).Sum().Backward()
	r.grads = map[string]*ember.Tensor{}
	for name, l := range leaves {
		g := l.Grad()
		if g == nil {
			t.Fatalf("%v: no gradient for %s", k, name)
		}
		if layout == "offset" && name == "x" {
			checkOutsideZero(t, k, g, parts[name])
		}
		r.grads[name] = parts[name](g)
	}
	return r
}

// checkOutsideZero checks that the gradient of the NaN margin of an
// offset input is zero.
func checkOutsideZero(t *testing.T, k ember.Kernels, g *ember.Tensor, cut func(*ember.Tensor) *ember.Tensor) {
	t.Helper()
	m := ember.Ones(g.Shape(), ember.Dtype(ember.Float64))
	cut(m).FillInPlace(0)
	for i, v := range g.CPU().Cast(ember.Float64).Mul(m).Float64s() {
		if v != 0 {
			t.Fatalf("%v: gradient %g at %d, outside the input's slice", k, v, i)
		}
	}
}

// nativeTol is the tolerance against PyTorch's float64 values and between
// the two paths.
func nativeTol(dt ember.DType) (pytorch, paths float64) {
	if dt == ember.Float32 {
		return 1e-4, 2e-5
	}
	return 1e-9, 1e-12
}

// closeAll compares got with want elementwise within tol·(1 + max|want|).
func closeAll(t *testing.T, what string, got *ember.Tensor, wantShape []int, want []float64, tol float64) {
	t.Helper()
	if !got.Shape().Equal(ember.Shape(wantShape)) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), wantShape)
	}
	scale := 0.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i, v := range got.Float64s() {
		if !(math.Abs(v-want[i]) <= tol*(1+scale)) {
			t.Fatalf("%s[%d] = %.10g, want %.10g", what, i, v, want[i])
		}
	}
}

// compareNative runs op on both paths over every case of the fixture file,
// dtype and layout.
func compareNative(t *testing.T, dev ember.Device, file string, label func(c gradCase) string,
	op func(t *testing.T, c gradCase) func(k ember.Kernels, in map[string]*ember.Tensor, r *nativeRun) *ember.Tensor) {
	for i, c := range loadGradCases(t, file) {
		f := op(t, c)
		for _, dt := range []ember.DType{ember.Float64, ember.Float32} {
			for _, layout := range layouts {
				t.Run(fmt.Sprintf("%d_%s/%v/%s", i, label(c), dt, layout), func(t *testing.T) {
					pt, pp := nativeTol(dt)
					var runs [2]nativeRun
					for j, k := range []ember.Kernels{ember.NativeKernels, ember.GenericKernels} {
						r := runNative(t, c, k, dt, dev, layout, f)
						if r.out.DType() != dt || r.out.Device() != dev {
							t.Fatalf("%v: output %v on %v, want %v on %v", k, r.out.DType(), r.out.Device(), dt, dev)
						}
						closeAll(t, k.String()+" output", r.out, c.Output.Shape, c.Output.Data, pt)
						for name, g := range c.Grads {
							closeAll(t, k.String()+" grad "+name, r.grads[name], g.Shape, g.Data, pt)
						}
						if c.RMAfter != nil && r.rm != nil {
							closeAll(t, k.String()+" running_mean", r.rm, c.RMAfter.Shape, c.RMAfter.Data, pt)
							closeAll(t, k.String()+" running_var", r.rv, c.RVAfter.Shape, c.RVAfter.Data, pt)
						}
						runs[j] = r
					}
					nat, gen := runs[0], runs[1]
					if nat.gradFn != gen.gradFn {
						t.Fatalf("grad_fn: native %s, generic %s", nat.gradFn, gen.gradFn)
					}
					same := func(what string, a, b *ember.Tensor) {
						t.Helper()
						closeAll(t, "native vs generic "+what, a, b.Shape(), b.Float64s(), pp)
					}
					same("output", nat.out, gen.out)
					for name := range c.Grads {
						same("grad "+name, nat.grads[name], gen.grads[name])
					}
					if nat.rm != nil {
						same("running_mean", nat.rm, gen.rm)
						same("running_var", nat.rv, gen.rv)
					}
				})
			}
		}
	}
}

// testNativeKernels is the conformance test of both kernel paths.
func testNativeKernels(t *testing.T, dev ember.Device) {
	t.Run("Conv2d", func(t *testing.T) {
		compareNative(t, dev, "conv2d", func(c gradCase) string { return "conv2d" },
			func(t *testing.T, c gradCase) func(ember.Kernels, map[string]*ember.Tensor, *nativeRun) *ember.Tensor {
				var stride, pad, dil [2]int
				var groups int
				c.param(t, "stride", &stride)
				c.param(t, "padding", &pad)
				c.param(t, "dilation", &dil)
				c.param(t, "groups", &groups)
				return func(k ember.Kernels, in map[string]*ember.Tensor, _ *nativeRun) *ember.Tensor {
					return k.Conv2d(in["x"], in["weight"], in["bias"], stride, pad, dil, groups)
				}
			})
	})
	t.Run("Pool2d", func(t *testing.T) {
		kind := func(c gradCase) string {
			var s string
			json.Unmarshal(c.Params["kind"], &s)
			return s
		}
		compareNative(t, dev, "pool", kind,
			func(t *testing.T, c gradCase) func(ember.Kernels, map[string]*ember.Tensor, *nativeRun) *ember.Tensor {
				var k2, s, p [2]int
				var cip, ceil bool
				c.param(t, "kernel", &k2)
				if kind(c) != "adaptive" {
					c.param(t, "stride", &s)
					c.param(t, "padding", &p)
					c.param(t, "count_include_pad", &cip)
				}
				var opts []ember.PoolOption
				if _, ok := c.Params["ceil_mode"]; ok {
					if c.param(t, "ceil_mode", &ceil); ceil {
						opts = append(opts, ember.CeilMode())
					}
				}
				return func(k ember.Kernels, in map[string]*ember.Tensor, _ *nativeRun) *ember.Tensor {
					switch kind(c) {
					case "max":
						return k.MaxPool2d(in["x"], k2, s, p, opts...)
					case "avg":
						return k.AvgPool2d(in["x"], k2, s, p, cip, opts...)
					}
					// no kernel of its own: both paths are the same here
					return ember.AdaptiveAvgPool2d(in["x"], k2[0], k2[1])
				}
			})
	})
	t.Run("BatchNorm", func(t *testing.T) {
		compareNative(t, dev, "batch_norm", func(c gradCase) string {
			var training bool
			json.Unmarshal(c.Params["training"], &training)
			return map[bool]string{true: "train", false: "eval"}[training]
		}, func(t *testing.T, c gradCase) func(ember.Kernels, map[string]*ember.Tensor, *nativeRun) *ember.Tensor {
			var training bool
			var momentum, eps float64
			var m, v gradTensor
			c.param(t, "training", &training)
			c.param(t, "momentum", &momentum)
			c.param(t, "eps", &eps)
			c.param(t, "running_mean", &m)
			c.param(t, "running_var", &v)
			return func(k ember.Kernels, in map[string]*ember.Tensor, r *nativeRun) *ember.Tensor {
				x := in["x"]
				on := []ember.Option{ember.On(x.Device()), ember.Dtype(x.DType())}
				r.rm = ember.FromSlice(m.Data, ember.Shape(m.Shape), on...)
				r.rv = ember.FromSlice(v.Data, ember.Shape(v.Shape), on...)
				return k.BatchNorm(x, r.rm, r.rv, in["weight"], in["bias"], training, momentum, eps)
			}
		})
	})
}
