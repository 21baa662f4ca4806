package ember

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

// wantIndices compares idx with PyTorch's indices (a fixture param).
func wantIndices(t *testing.T, what string, c gradFixture, idx, out *Tensor) {
	t.Helper()
	var want []int64
	c.param(t, "indices", &want)
	if idx.DType() != Int64 || !idx.Shape().Equal(out.Shape()) {
		t.Fatalf("%s: indices %v %v, output %v", what, idx.DType(), idx.Shape(), out.Shape())
	}
	if got := idx.Int64s(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: indices %v, PyTorch %v", what, got, want)
	}
}

// TestGradFixturesMaxPoolDilation: dilated max pooling (2-D and 1-D,
// padding, ceil_mode, unbatched) and return_indices, with the native and
// the generic kernels, against PyTorch's values, gradients and indices
// (testdata/gen_pad_fixtures.py).
func TestGradFixturesMaxPoolDilation(t *testing.T) {
	for _, kn := range []Kernels{NativeKernels, GenericKernels} {
		runGradFixtures(t, "max_pool_dil", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
			var dim int
			var ceil bool
			c.param(t, "dim", &dim)
			c.param(t, "ceil_mode", &ceil)
			var opts []PoolOption
			if ceil {
				opts = append(opts, CeilMode())
			}
			if dim == 1 {
				var k, s, p, d int
				c.param(t, "kernel", &k)
				c.param(t, "stride", &s)
				c.param(t, "padding", &p)
				c.param(t, "dilation", &d)
				opts = append(opts, PoolDilation(d))
				out, idx := MaxPool1dWithIndices(in["x"].Detach(), k, s, p, opts...)
				wantIndices(t, "max_pool1d", c, idx, out)
				return MaxPool1d(in["x"], k, s, p, opts...)
			}
			var k, s, p, d [2]int
			c.param(t, "kernel", &k)
			c.param(t, "stride", &s)
			c.param(t, "padding", &p)
			c.param(t, "dilation", &d)
			opts = append(opts, PoolDilationHW(d[0], d[1]))
			out, idx := kn.MaxPool2dWithIndices(in["x"], k, s, p, opts...)
			wantIndices(t, "max_pool2d", c, idx, out)
			if out.Dim() == 4 && out.GradFn() != "MaxPool2DWithIndicesBackward0" {
				t.Fatalf("grad_fn %q", out.GradFn())
			}
			return out
		}, nil)
	}
}

// TestGradFixturesMaxUnpool: max_unpool2d and max_unpool1d of PyTorch's
// pooled values and indices (output_size too) against its outputs and
// gradients.
func TestGradFixturesMaxUnpool(t *testing.T) {
	runGradFixtures(t, "max_unpool", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var dim int
		var osize []int
		c.param(t, "dim", &dim)
		c.param(t, "output_size", &osize)
		if dim == 1 {
			var k, s, p int
			c.param(t, "kernel", &k)
			c.param(t, "stride", &s)
			c.param(t, "padding", &p)
			return MaxUnpool1d(in["x"], in["indices"], k, s, p, osize...)
		}
		var k, s, p [2]int
		c.param(t, "kernel", &k)
		c.param(t, "stride", &s)
		c.param(t, "padding", &p)
		y := MaxUnpool2d(in["x"], in["indices"], k, s, p, osize...)
		if y.GradFn() != "MaxUnpool2DBackward0" {
			t.Fatalf("grad_fn %q", y.GradFn())
		}
		return y
	}, nil)
}

// TestGradFixturesAdaptiveMaxIndices: adaptive_max_pool2d's
// return_indices (dividing sizes, uneven windows, larger outputs) against
// PyTorch's.
func TestGradFixturesAdaptiveMaxIndices(t *testing.T) {
	runGradFixtures(t, "adaptive_max_indices", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var o [2]int
		c.param(t, "output_size", &o)
		out, idx := AdaptiveMaxPool2dWithIndices(in["x"], o[0], o[1])
		wantIndices(t, "adaptive_max_pool2d", c, idx, out)
		return out
	}, nil)
}

// TestMaxPoolIndicesErrors: PyTorch's conditions on dilation, on
// max_unpool's inputs and output_size (worked with torch 1.13 by hand),
// and the shapes on meta.
func TestMaxPoolIndicesErrors(t *testing.T) {
	for _, dev := range append(testDevices(), Meta) {
		x := Ones(Shape{1, 1, 5, 5}, On(dev))
		testenv.Raises[*ShapeError](t, "dilation 0", func() { MaxPool2d(x, [2]int{2, 2}, [2]int{1, 1}, [2]int{}, PoolDilation(0)) })
		testenv.Raises[*ShapeError](t, "dilation -1 1d", func() { MaxPool1d(x.Reshape(1, 1, 25), 2, 1, 0, PoolDilation(-1)) })
		testenv.Raises[*ShapeError](t, "dilated window past the input", func() { MaxPool2d(x, [2]int{3, 3}, [2]int{1, 1}, [2]int{}, PoolDilation(3)) })
		testenv.Raises[*ShapeError](t, "pad over half the kernel", func() { MaxPool2d(x, [2]int{3, 3}, [2]int{1, 1}, [2]int{2, 2}, PoolDilation(2)) })
		testenv.Raises[*ValueError](t, "avg dilation", func() { AvgPool2d(x, [2]int{2, 2}, [2]int{}, [2]int{}, true, PoolDilation(2)) })
		if out, idx := MaxPool2dWithIndices(x, [2]int{3, 3}, [2]int{1, 1}, [2]int{1, 1}, PoolDilation(2)); !out.Shape().Equal(Shape{1, 1, 3, 3}) || !idx.Shape().Equal(Shape{1, 1, 3, 3}) {
			t.Fatalf("dilated shapes %v %v", out.Shape(), idx.Shape())
		}
		y, idx := MaxPool2dWithIndices(x, [2]int{2, 2}, [2]int{2, 2}, [2]int{})
		if got := MaxUnpool2d(y, idx, [2]int{2, 2}, [2]int{}, [2]int{}, 5, 5).Shape(); !got.Equal(Shape{1, 1, 5, 5}) {
			t.Fatalf("unpool shape %v", got)
		}
		if got := MaxUnpool2d(y, idx, [2]int{2, 2}, [2]int{}, [2]int{}, 1, 1, 5, 5).Shape(); !got.Equal(Shape{1, 1, 5, 5}) {
			t.Fatalf("unpool full output_size %v", got)
		}
		if dev != Meta {
			// torch: "Found an invalid max index: 6 (output volumes are of size 4x4"
			testenv.Raises[*IndexError](t, "index past the default size", func() {
				MaxUnpool2d(y, idx.AddScalar(6), [2]int{2, 2}, [2]int{}, [2]int{}).Float64s()
			})
			testenv.Raises[*IndexError](t, "negative index", func() { MaxUnpool2d(y, idx.AddScalar(-100), [2]int{2, 2}, [2]int{}, [2]int{}).Float64s() })
		}
		e := testenv.Raises[*ValueError](t, "output_size too big", func() { MaxUnpool2d(y, idx, [2]int{2, 2}, [2]int{}, [2]int{}, 6, 6) })
		if e.Msg != `invalid output_size "(6, 6)" (dim 0 must be between 2 and 6)` {
			t.Fatalf("message %q", e.Msg)
		}
		testenv.Raises[*ValueError](t, "output_size too small", func() { MaxUnpool2d(y, idx, [2]int{2, 2}, [2]int{}, [2]int{}, 2, 2) })
		testenv.Raises[*ValueError](t, "output_size of 3", func() { MaxUnpool2d(y, idx, [2]int{2, 2}, [2]int{}, [2]int{}, 1, 5, 5) })
		testenv.Raises[*ShapeError](t, "indices shape", func() { MaxUnpool2d(y, idx.Narrow(3, 0, 1), [2]int{2, 2}, [2]int{}, [2]int{}) })
		testenv.Raises[*DTypeError](t, "float indices", func() { MaxUnpool2d(y, idx.Cast(Float32), [2]int{2, 2}, [2]int{}, [2]int{}) })
		testenv.Raises[*DTypeError](t, "int input", func() { MaxUnpool2d(y.Cast(Int64), idx, [2]int{2, 2}, [2]int{}, [2]int{}) })
		testenv.Raises[*ShapeError](t, "2-D input", func() { MaxUnpool2d(y.Reshape(2, 2), idx.Reshape(2, 2), [2]int{2, 2}, [2]int{}, [2]int{}) })
		testenv.Raises[*ShapeError](t, "1d of 4-D", func() { MaxUnpool1d(y, idx, 2, 0, 0) })
		testenv.Raises[*ShapeError](t, "zero kernel", func() { MaxUnpool1d(y.Reshape(1, 4), idx.Reshape(1, 4), 0, 0, 0) })
		testenv.Raises[*ValueError](t, "nil option", func() { MaxPool2dWithIndices(x, [2]int{2, 2}, [2]int{}, [2]int{}, nil) })
	}
	// NaN: a window's last NaN is its maximum (torch 1.13: indices
	// [4 4 4 4] here), on both kernel paths and dilated
	nan := math.NaN()
	for _, dev := range testDevices() {
		xn := FromSlice([]float64{1, nan, 2, 3, nan, 4, 0, 5, 6}, Shape{1, 1, 3, 3}, On(dev))
		for _, kn := range []Kernels{NativeKernels, GenericKernels} {
			if _, idx := kn.MaxPool2dWithIndices(xn, [2]int{2, 2}, [2]int{1, 1}, [2]int{}); fmt.Sprint(idx.Int64s()) != "[4 4 4 4]" {
				t.Fatalf("%v %v NaN indices %v", dev, kn, idx.Int64s())
			}
		}
		// dilation 2 over a 5×5 zeros with NaN at (0, 2) and (2, 4): the
		// window {(0,0), (0,2), (2,0), (2,2)} of output (0, 0) and {(0,2),
		// (0,4), (2,2), (2,4)} of (0, 2) (torch: [2 1 14 5 6 7 10 11 14])
		v := make([]float64, 25)
		v[2], v[14] = nan, nan
		_, idx := MaxPool2dWithIndices(FromSlice(v, Shape{1, 1, 5, 5}, On(dev)), [2]int{2, 2}, [2]int{1, 1}, [2]int{}, PoolDilation(2))
		if got := idx.Int64s(); fmt.Sprint(got) != "[2 1 14 5 6 7 10 11 14]" {
			t.Fatalf("%v dilated NaN indices %v", dev, got)
		}
	}
	// adaptive windows (uneven, overlapping) holding several NaNs: torch
	// 1.13's indices and gradient, its last NaN of each window
	for _, dev := range testDevices() {
		v := make([]float64, 30)
		for i := range v {
			v[i] = float64(i % 7)
		}
		v[3], v[8], v[13] = nan, nan, nan
		x := FromSlice(v, Shape{1, 1, 5, 6}, On(dev)).SetRequiresGrad(true)
		y, idx := AdaptiveMaxPool2dWithIndices(x, 2, 4)
		y.Sum().Backward()
		if fmt.Sprint(idx.Int64s()) != "[13 13 3 5 13 13 27 17]" || fmt.Sprint(x.Grad().Float64s()) != "[0 0 0 1 0 1 0 0 0 0 0 0 0 4 0 0 0 1 0 0 0 0 0 0 0 0 0 1 0 0]" {
			t.Fatalf("%v adaptive NaN: %v %v", dev, idx.Int64s(), x.Grad().Float64s())
		}
	}
	// the half path: float32 pooling, indices as float32's
	xh := FromSlice([]float32{1, 5, 2, 4, 3, 9, 0, 1, 7}, Shape{1, 1, 3, 3}).Cast(BFloat16)
	out, idx := MaxPool2dWithIndices(xh, [2]int{2, 2}, [2]int{1, 1}, [2]int{})
	if out.DType() != BFloat16 || fmt.Sprint(out.Float64s()) != "[5 9 4 9]" || fmt.Sprint(idx.Int64s()) != "[1 5 3 5]" {
		t.Fatalf("bfloat16: %v %v %v", out.DType(), out.Float64s(), idx.Int64s())
	}
}

// TestMaxPoolIndicesOnEmulatedCUDA reruns the dilation, indices and
// unpool fixtures with an emulated cuda:0 (the CUDA pool kernel's indices,
// the generic lowering and scatter/gather through the CUDA kernels).
func TestMaxPoolIndicesOnEmulatedCUDA(t *testing.T) {
	onEmulatedCUDA(t)
	TestGradFixturesMaxPoolDilation(t)
	TestGradFixturesMaxUnpool(t)
	TestGradFixturesAdaptiveMaxIndices(t)
	TestMaxPoolIndicesErrors(t)
	TestMaxPoolAllNegInfWindows(t)
}

// TestMaxPoolAllNegInfWindows: a window whose input elements are all -inf
// takes its first element inside the input, as PyTorch's kernels (whose
// maximum starts at -inf, at that element), not a -inf of the padding: the
// indices stay in the plane and the gradient reaches the input. Values
// from torch 1.13 (x all -inf but x[4, 4] = 1, kernel 3, stride 2,
// padding 1, the gradient of y · 1), with the native and the generic
// kernels, and on the emulated CUDA device.
func TestMaxPoolAllNegInfWindows(t *testing.T) {
	for _, c := range []struct {
		dil        int
		idx        []int64
		grad       []float64
		kernelsAll []Kernels
	}{
		{1, []int64{0, 1, 3, 5, 6, 8, 15, 16, 24}, []float64{1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1}, []Kernels{NativeKernels, GenericKernels}},
		{2, []int64{6, 6, 6, 6}, []float64{0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, []Kernels{NativeKernels, GenericKernels}},
	} {
		for _, dev := range testDevices() {
			for _, kn := range c.kernelsAll {
				v := make([]float64, 25)
				for i := range v {
					v[i] = math.Inf(-1)
				}
				v[24] = 1
				x := FromSlice(v, Shape{1, 1, 5, 5}, On(dev)).SetRequiresGrad(true)
				y, idx := kn.MaxPool2dWithIndices(x, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, PoolDilation(c.dil))
				if got := idx.Int64s(); fmt.Sprint(got) != fmt.Sprint(c.idx) {
					t.Fatalf("%v dilation %d: indices %v, PyTorch %v", dev, c.dil, got, c.idx)
				}
				y.BackwardWith(OnesLike(y))
				if got := x.Grad().Float64s(); fmt.Sprint(got) != fmt.Sprint(c.grad) {
					t.Fatalf("%v dilation %d: gradient %v, PyTorch %v", dev, c.dil, got, c.grad)
				}
				// the indices unpool without an index error
				MaxUnpool2d(y.Detach(), idx, [2]int{2, 2}, [2]int{2, 2}, [2]int{}, 5, 5)
			}
		}
	}
}

// TestMaxUnpoolHugeOnMeta: an unpooled size past int is a *ShapeError, not
// a size wrapped around (a meta input of height 2^40 with kernel and
// stride 2^30 gave a height of 0).
func TestMaxUnpoolHugeOnMeta(t *testing.T) {
	x := Ones(Shape{1, 1, 1 << 40, 1}, On(Meta))
	i := Zeros(x.Shape(), On(Meta), Dtype(Int64))
	testenv.Raises[*ShapeError](t, "2-d", func() { MaxUnpool2d(x, i, [2]int{1 << 30, 1}, [2]int{1 << 30, 1}, [2]int{}) })
	x, i = x.Reshape(1, 1<<40), i.Reshape(1, 1<<40)
	testenv.Raises[*ShapeError](t, "1-d", func() { MaxUnpool1d(x, i, 1<<30, 1<<30, 0) })
	if got := MaxUnpool1d(x, i, 2, 2, 0).Shape(); !got.Equal(Shape{1, 1 << 41}) {
		t.Fatalf("shape %v", got)
	}
}

// TestMaxPoolIndicesHugeOnMeta: the generic lowering's indices are
// computed on the device from the window positions (a host table of
// OH·OW·KH·KW entries was a fatal out-of-memory error for a large meta
// input, not a typed panic); also dilated.
func TestMaxPoolIndicesHugeOnMeta(t *testing.T) {
	x := Ones(Shape{1, 1, 1 << 20, 1 << 20}, On(Meta))
	for d, o := range map[int]int{1: 1<<19 + 1, 3: 1 << 19} {
		out, idx := MaxPool2dWithIndices(x, [2]int{2, 2}, [2]int{}, [2]int{1, 1}, PoolDilation(d))
		want := Shape{1, 1, o, o}
		if !out.Shape().Equal(want) || !idx.Shape().Equal(want) || idx.DType() != Int64 {
			t.Fatalf("dilation %d: %v %v %v, want %v", d, out.Shape(), idx.Shape(), idx.DType(), want)
		}
	}
}

// TestMaxPoolAllNegInfHugeOnMeta: the first-element-inside table of the
// -inf windows' route is made on the device too (a host table of OH
// entries, 2^39 here, was a fatal out-of-memory error).
func TestMaxPoolAllNegInfHugeOnMeta(t *testing.T) {
	x := Ones(Shape{1, 1, 1 << 40, 2}, On(Meta)).SetRequiresGrad(true)
	out, idx := MaxPool2dWithIndices(x, [2]int{2, 2}, [2]int{}, [2]int{1, 1})
	if want := (Shape{1, 1, 1<<39 + 1, 2}); !out.Shape().Equal(want) || !idx.Shape().Equal(want) {
		t.Fatalf("%v %v, want %v", out.Shape(), idx.Shape(), want)
	}
}
