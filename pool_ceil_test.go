package ember

import (
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

// ceilPoolCase is one ceil_mode=True case of grad_pool.json.
type ceilPoolCase struct {
	max                bool
	kernel, stride, pd [2]int
	cip                bool
	c                  gradFixture
}

func ceilPoolCases(t *testing.T) []ceilPoolCase {
	t.Helper()
	var cs []ceilPoolCase
	for _, c := range loadGradFixtures(t, "pool") {
		if _, ok := c.Params["ceil_mode"]; !ok {
			continue
		}
		var pc ceilPoolCase
		var kind string
		c.param(t, "kind", &kind)
		c.param(t, "kernel", &pc.kernel)
		c.param(t, "stride", &pc.stride)
		c.param(t, "padding", &pc.pd)
		c.param(t, "count_include_pad", &pc.cip)
		pc.max, pc.c = kind == "max", c
		cs = append(cs, pc)
	}
	if len(cs) == 0 {
		t.Fatal("no ceil_mode cases in grad_pool.json")
	}
	return cs
}

func (pc ceilPoolCase) run(k Kernels, x *Tensor) *Tensor {
	if pc.max {
		return k.MaxPool2d(x, pc.kernel, pc.stride, pc.pd, CeilMode())
	}
	return k.AvgPool2d(x, pc.kernel, pc.stride, pc.pd, pc.cip, CeilMode())
}

// TestPoolCeilModeFloat32 runs PyTorch's ceil_mode cases in float32, with
// and without a gradient (the CPU's max pooling takes other paths for
// each: indices or none, 2×2 stride-2 planes), on both kernels.
func TestPoolCeilModeFloat32(t *testing.T) {
	for _, dev := range testDevices() {
		for _, k := range []Kernels{NativeKernels, GenericKernels} {
			for i, pc := range ceilPoolCases(t) {
				x := pc.c.Inputs["x"].on(dev).Cast(Float32)
				closeTo(t, "no-grad output", pc.run(k, x), pc.c.Output)
				x.SetRequiresGrad(true)
				out := pc.run(k, x)
				closeTo(t, "output", out, pc.c.Output)
				out.Mul(pc.c.W.on(dev).Cast(Float32)).Sum().Backward()
				closeTo(t, "grad", x.Grad(), pc.c.Grads["x"])
				_ = i
			}
		}
	}
}

// TestMaxPoolCeilModeBFloat16: the maximum of bfloat16-rounded values is
// PyTorch's maximum rounded, exactly (rounding is monotonic), on the
// CPU's bfloat16 paths with indices (a gradient wanted) and without.
func TestMaxPoolCeilModeBFloat16(t *testing.T) {
	for _, pc := range ceilPoolCases(t) {
		if !pc.max {
			continue
		}
		want := pc.c.Output.on(CPU).Cast(BFloat16).Float64s()
		for _, grad := range []bool{false, true} {
			x := pc.c.Inputs["x"].on(CPU).Cast(BFloat16)
			x.SetRequiresGrad(grad)
			got := MaxPool2d(x, pc.kernel, pc.stride, pc.pd, CeilMode())
			if !got.Shape().Equal(Shape(pc.c.Output.Shape)) {
				t.Fatalf("shape %v, PyTorch %v", got.Shape(), pc.c.Output.Shape)
			}
			for i, v := range got.Float64s() {
				if v != want[i] {
					t.Fatalf("grad=%v: [%d] = %v, PyTorch %v", grad, i, v, want[i])
				}
			}
		}
	}
}

// TestPoolCeilModeMeta: the meta device gives PyTorch's output shapes.
func TestPoolCeilModeMeta(t *testing.T) {
	for _, pc := range ceilPoolCases(t) {
		x := Zeros(Shape(pc.c.Inputs["x"].Shape), On(Meta))
		if got := pc.run(NativeKernels, x); !got.Shape().Equal(Shape(pc.c.Output.Shape)) {
			t.Fatalf("meta: shape %v, PyTorch %v", got.Shape(), pc.c.Output.Shape)
		}
	}
}

// TestPoolCeilModeShapes: PyTorch's output sizes (pooling_output_shape)
// worked by hand, and its refusal when even ceil_mode leaves no window.
func TestPoolCeilModeShapes(t *testing.T) {
	for _, c := range []struct {
		in, k, s, p, want int
	}{
		{5, 2, 2, 0, 3}, // floor 2: the last window holds one element
		{6, 2, 2, 0, 3}, // exact: no change
		{5, 3, 2, 1, 3}, // (5+2-3+1)/2+1 = 3, floor also 3
		{6, 3, 2, 1, 4}, // floor 3; the 4th window starts at 5 < 6+1
		{4, 2, 3, 1, 2}, // ceil would give 3, but that window starts at 5 ≥ 4+1
		{1, 3, 3, 0, 1}, // a window wider than the input, clipped
	} {
		x := Zeros(Shape{1, 1, c.in, c.in})
		got := MaxPool2d(x, [2]int{c.k, c.k}, [2]int{c.s, c.s}, [2]int{c.p, c.p}, CeilMode())
		if got.Shape()[2] != c.want || got.Shape()[3] != c.want {
			t.Errorf("in %d k %d s %d p %d: %v, want %d", c.in, c.k, c.s, c.p, got.Shape(), c.want)
		}
		got = AvgPool2d(x, [2]int{c.k, c.k}, [2]int{c.s, c.s}, [2]int{c.p, c.p}, true, CeilMode())
		if got.Shape()[2] != c.want {
			t.Errorf("avg in %d k %d s %d p %d: %v, want %d", c.in, c.k, c.s, c.p, got.Shape(), c.want)
		}
	}
	// torch: "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small"
	testenv.Raises[*ShapeError](t, "ceil_mode too small", func() {
		MaxPool2d(Zeros(Shape{1, 1, 2, 2}), [2]int{3, 3}, [2]int{1, 1}, [2]int{0, 0}, CeilMode())
	})
	testenv.Raises[*ValueError](t, "nil option", func() {
		AvgPool2d(Zeros(Shape{1, 1, 2, 2}), [2]int{2, 2}, [2]int{1, 1}, [2]int{0, 0}, true, nil)
	})
}

// TestPool1dErrors: the 1-D pools' misuse names the 1-D op and the shapes
// given, in PyTorch's words where it has them.
func TestPool1dErrors(t *testing.T) {
	x := Zeros(Shape{2, 3, 4})
	e := testenv.Raises[*ShapeError](t, "padding", func() { MaxPool1d(x, 3, 1, 2) })
	if e.Op != "max_pool1d" || e.Msg != "padding should be at most half of kernel size, but got padding=2 and kernel_size=3" {
		t.Errorf("%v", e)
	}
	e = testenv.Raises[*ShapeError](t, "4-D", func() { AvgPool1d(Zeros(Shape{3, 4, 5, 6}), 2, 0, 0, true) })
	if e.Op != "avg_pool1d" || !e.Shapes[0].Equal(Shape{3, 4, 5, 6}) {
		t.Errorf("%v", e)
	}
	e = testenv.Raises[*ShapeError](t, "too small", func() { MaxPool1d(x, 5, 0, 0) })
	if e.Op != "max_pool1d" {
		t.Errorf("%v", e)
	}
	testenv.Raises[*ShapeError](t, "kernel 0", func() { MaxPool1d(x, 0, 0, 0) })
	testenv.Raises[*ShapeError](t, "negative stride", func() { AvgPool1d(x, 2, -1, 0, true) })
	testenv.Raises[*ShapeError](t, "empty", func() { MaxPool1d(Zeros(Shape{2, 3, 0}), 1, 0, 0) })
	testenv.Raises[*ShapeError](t, "adaptive 0", func() { AdaptiveAvgPool1d(x, 0) })
	testenv.Raises[*ShapeError](t, "nil", func() { AdaptiveAvgPool1d(nil, 2) })
	testenv.Raises[*DTypeError](t, "int avg", func() { AvgPool1d(Zeros(Shape{1, 4}, Dtype(Int64)), 2, 0, 0, true) })
	// meta: shapes
	if got := MaxPool1d(Zeros(Shape{2, 3, 8}, On(Meta)), 3, 2, 0, CeilMode()).Shape(); !got.Equal(Shape{2, 3, 4}) {
		t.Errorf("meta %v", got)
	}
}

// TestAdaptiveMaxPool2dErrors: misuse is a typed error naming the op;
// the meta device gives the shapes.
func TestAdaptiveMaxPool2dErrors(t *testing.T) {
	testenv.Raises[*ShapeError](t, "zero size", func() { AdaptiveMaxPool2d(Zeros(Shape{1, 2, 3, 3}), 0, 2) })
	testenv.Raises[*ShapeError](t, "empty plane", func() { AdaptiveMaxPool2d(Zeros(Shape{1, 2, 0, 3}), 1, 1) })
	testenv.Raises[*ShapeError](t, "2-D", func() { AdaptiveMaxPool2d(Zeros(Shape{3, 3}), 1, 1) })
	testenv.Raises[*DTypeError](t, "int", func() { AdaptiveMaxPool2d(Zeros(Shape{1, 3, 3}, Dtype(Int64)), 1, 1) })
	testenv.Raises[*ShapeError](t, "nil", func() { AdaptiveMaxPool2d(nil, 1, 1) })
	testenv.Raises[*ShapeError](t, "huge", func() { AdaptiveMaxPool2d(Zeros(Shape{1, 1, 2, 2}), 1<<20, 1) })
	for _, s := range [][2]int{{3, 2}, {4, 4}, {1, 1}} {
		if got := AdaptiveMaxPool2d(Zeros(Shape{2, 3, 8, 7}, On(Meta)), s[0], s[1]).Shape(); !got.Equal(Shape{2, 3, s[0], s[1]}) {
			t.Errorf("meta %v: %v", s, got)
		}
	}
}
