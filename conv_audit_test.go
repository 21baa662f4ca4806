package ember

import (
	"math"
	"strings"
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

// TestConv1dErrorsNameConv1d: a Conv1d misuse reports conv1d and the 3-D
// shapes given, in PyTorch's words ("Given groups=1, weight of size
// [4, 5, 3], expected input[2, 3, 10] to have 5 channels, but got 3
// channels instead"), not the 4-D conv2d it runs as.
func TestConv1dErrorsNameConv1d(t *testing.T) {
	x, w := Zeros(Shape{2, 3, 10}), Zeros(Shape{4, 5, 3})
	for _, f := range []func(){
		func() { Conv1d(x, w, nil, 1, 0, 1, 1) },
		func() { Conv1dSame(x, w, nil, 1, 1) },
	} {
		e := testenv.Raises[*ShapeError](t, "conv1d channels", f)
		if e.Op != "conv1d" || len(e.Shapes) != 2 || !e.Shapes[0].Equal(x.Shape()) || !e.Shapes[1].Equal(w.Shape()) {
			t.Fatalf("error %#v: want conv1d with shapes %v, %v", e, x.Shape(), w.Shape())
		}
		if e.Msg != "Given groups=1, weight of size [4, 5, 3], expected input[2, 3, 10] to have 5 channels, but got 3 channels instead" {
			t.Fatalf("message %q", e.Msg)
		}
	}
	// bias of the wrong size, groups not dividing the weight
	testenv.Raises[*ShapeError](t, "conv1d bias", func() { Conv1d(Zeros(Shape{2, 5, 10}), w, Zeros(Shape{3}), 1, 0, 1, 1) })
	e := testenv.Raises[*ShapeError](t, "conv1d groups", func() { Conv1d(Zeros(Shape{2, 15, 10}), w, nil, 1, 0, 1, 3) })
	if e.Op != "conv1d" {
		t.Fatalf("groups error names %q", e.Op)
	}
}

// TestConvSameShapes: padding='same' keeps the input's size for every
// kernel and dilation (checked on the meta device too), and PyTorch's
// conv2d channel message names the shapes given.
func TestConvSameShapes(t *testing.T) {
	for _, dev := range []Device{CPU, Meta} {
		for _, k := range [][2]int{{1, 1}, {2, 3}, {4, 4}, {5, 2}} {
			for _, d := range [][2]int{{1, 1}, {2, 3}} {
				x := Zeros(Shape{2, 3, 9, 8}, On(dev))
				w := Zeros(Shape{4, 3, k[0], k[1]}, On(dev))
				if got := Conv2dSame(x, w, nil, d, 1).Shape(); !got.Equal(Shape{2, 4, 9, 8}) {
					t.Errorf("%v k %v d %v: %v", dev, k, d, got)
				}
				w1 := Zeros(Shape{4, 3, k[1]}, On(dev))
				if got := Conv1dSame(Zeros(Shape{3, 8}, On(dev)), w1, nil, d[1], 1).Shape(); !got.Equal(Shape{4, 8}) {
					t.Errorf("%v conv1d k %d d %d: %v", dev, k[1], d[1], got)
				}
			}
		}
	}
	e := testenv.Raises[*ShapeError](t, "conv2d channels", func() {
		Conv2d(Zeros(Shape{1, 2, 5, 5}), Zeros(Shape{4, 3, 3, 3}), nil, [2]int{1, 1}, [2]int{}, [2]int{1, 1}, 1)
	})
	if e.Op != "conv2d" || !strings.Contains(e.Msg, "to have 3 channels, but got 2 channels instead") {
		t.Fatalf("%v", e)
	}
	e = testenv.Raises[*ShapeError](t, "same huge dilation", func() { Conv2dSame(Zeros(Shape{1, 3, 5, 5}), Zeros(Shape{4, 3, 3, 3}), nil, [2]int{1 << 62, 1}, 1) })
	if !strings.Contains(e.Msg, "invalid kernel 3 or dilation 4611686018427387904") {
		t.Errorf("huge dilation: %v", e)
	}
	testenv.Raises[*ShapeError](t, "same zero dilation", func() { Conv2dSame(Zeros(Shape{1, 3, 5, 5}), Zeros(Shape{4, 3, 3, 3}), nil, [2]int{0, 1}, 1) })
}

// TestConvTranspose2dShapesAndErrors: output sizes worked by hand
// ((H−1)·s − 2p + d·(k−1) + op + 1), on the meta device too, and
// PyTorch's errors.
func TestConvTranspose2dShapesAndErrors(t *testing.T) {
	for _, dev := range []Device{CPU, Meta} {
		x := Zeros(Shape{2, 4, 5, 6}, On(dev))
		w := Zeros(Shape{4, 3, 3, 2}, On(dev))
		// h: 4·2 − 2 + 2 + 1 + 1 = 10; w: 5·3 − 0 + 2·1 + 0 + 1 = 18
		got := ConvTranspose2d(x, w, nil, [2]int{2, 3}, [2]int{1, 0}, [2]int{1, 0}, [2]int{1, 2}, 1).Shape()
		if !got.Equal(Shape{2, 3, 10, 18}) {
			t.Errorf("%v: %v, want [2, 3, 10, 18]", dev, got)
		}
		// groups: Out = 2·3
		if got := ConvTranspose2d(x, Zeros(Shape{4, 3, 1, 1}, On(dev)), nil, [2]int{1, 1}, [2]int{}, [2]int{}, [2]int{1, 1}, 2).Shape(); !got.Equal(Shape{2, 6, 5, 6}) {
			t.Errorf("%v groups: %v", dev, got)
		}
	}
	// one input pixel: out[i, j] = x·w[i, j] whatever the stride (the
	// spread of a single element allocated stride² elements: 2³⁰ here)
	one := ConvTranspose2d(Full(Shape{1, 1, 1, 1}, 3), FromSlice([]float32{1, 2, 3, 4}, Shape{1, 1, 2, 2}), nil, [2]int{1 << 30, 1 << 30}, [2]int{}, [2]int{}, [2]int{1, 1}, 1)
	if got := one.Float32s(); !one.Shape().Equal(Shape{1, 1, 2, 2}) || got[0] != 3 || got[1] != 6 || got[2] != 9 || got[3] != 12 {
		t.Errorf("one pixel, stride 2^30: %v %v, want [1 1 2 2] [3 6 9 12]", one.Shape(), got)
	}
	x, w := Zeros(Shape{1, 4, 4, 4}), Zeros(Shape{3, 2, 3, 3})
	e := testenv.Raises[*ShapeError](t, "channels", func() { ConvTranspose2d(x, w, nil, [2]int{1, 1}, [2]int{}, [2]int{}, [2]int{1, 1}, 1) })
	if e.Msg != "Given transposed=1, weight of size [3, 2, 3, 3], expected input[1, 4, 4, 4] to have 3 channels, but got 4 channels instead" {
		t.Errorf("%v", e)
	}
	x = Zeros(Shape{1, 3, 2, 2})
	e = testenv.Raises[*ShapeError](t, "too small", func() { ConvTranspose2d(x, w, nil, [2]int{1, 1}, [2]int{2, 2}, [2]int{}, [2]int{1, 1}, 1) })
	if e.Msg != "Given input size per channel: (2 x 2). Calculated output size per channel: (0 x 0). Output size is too small" {
		t.Errorf("%v", e)
	}
	e = testenv.Raises[*ShapeError](t, "output padding", func() { ConvTranspose2d(x, w, nil, [2]int{2, 2}, [2]int{}, [2]int{2, 2}, [2]int{1, 1}, 1) })
	if !strings.HasPrefix(e.Msg, "output padding must be smaller than either stride or dilation") {
		t.Errorf("%v", e)
	}
	e = testenv.Raises[*ShapeError](t, "groups", func() { ConvTranspose2d(x, w, nil, [2]int{1, 1}, [2]int{}, [2]int{}, [2]int{1, 1}, 2) })
	if e.Msg != "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size [3, 2, 3, 3] instead" {
		t.Errorf("%v", e)
	}
	e = testenv.Raises[*ShapeError](t, "groups > in", func() { ConvTranspose2d(x, w, nil, [2]int{1, 1}, [2]int{}, [2]int{}, [2]int{1, 1}, 4) })
	if e.Msg != "Given groups=4, expected weight to be at least 4 at dimension 0, but got weight of size [3, 2, 3, 3] instead" {
		t.Errorf("%v", e)
	}
	testenv.Raises[*ShapeError](t, "bias", func() { ConvTranspose2d(x, w, Zeros(Shape{3}), [2]int{1, 1}, [2]int{}, [2]int{}, [2]int{1, 1}, 1) })
	testenv.Raises[*ShapeError](t, "stride 0", func() { ConvTranspose2d(x, w, nil, [2]int{0, 1}, [2]int{}, [2]int{}, [2]int{1, 1}, 1) })
	testenv.Raises[*ShapeError](t, "huge stride", func() { ConvTranspose2d(x, w, nil, [2]int{1 << 40, 1}, [2]int{}, [2]int{}, [2]int{1, 1}, 1) })
	testenv.Raises[*DTypeError](t, "dtype", func() { ConvTranspose2d(x, w.Cast(Float64), nil, [2]int{1, 1}, [2]int{}, [2]int{}, [2]int{1, 1}, 1) })
	testenv.Raises[*ShapeError](t, "nil", func() { ConvTranspose2d(nil, w, nil, [2]int{1, 1}, [2]int{}, [2]int{}, [2]int{1, 1}, 1) })
}

// TestConvSizeOverflow: a dilation whose span d·(k−1) overflows was taken
// as a small one (Conv2d returned values from wrapped-round windows,
// Conv1d an index-out-of-range runtime panic); it is a *ShapeError now,
// as is a padding whose double overflows. A huge stride with ceil_mode
// gives PyTorch's one window.
func TestConvSizeOverflow(t *testing.T) {
	x, w := Zeros(Shape{1, 1, 8, 8}), Zeros(Shape{1, 1, 5, 5})
	testenv.Raises[*ShapeError](t, "conv2d dilation", func() { Conv2d(x, w, nil, [2]int{1, 1}, [2]int{}, [2]int{1 << 62, 1}, 1) })
	testenv.Raises[*ShapeError](t, "generic conv2d dilation", func() {
		GenericKernels.Conv2d(x, w, nil, [2]int{1, 1}, [2]int{}, [2]int{1, 1 << 62}, 1)
	})
	testenv.Raises[*ShapeError](t, "conv1d dilation", func() { Conv1d(Zeros(Shape{1, 1, 8}), Zeros(Shape{1, 1, 5}), nil, 1, 0, 1<<62, 1) })
	testenv.Raises[*ShapeError](t, "conv2d padding", func() { Conv2d(x, w, nil, [2]int{1, 1}, [2]int{1 << 62, 0}, [2]int{1, 1}, 1) })
	// the largest dilation that fits: span 4·1 + 1 = 5 ≤ 8 (k = 5, d = 1);
	// d = 2 gives 9 > 8
	if got := Conv2d(x, w, nil, [2]int{1, 1}, [2]int{}, [2]int{1, 1}, 1).Shape(); !got.Equal(Shape{1, 1, 4, 4}) {
		t.Errorf("%v", got)
	}
	testenv.Raises[*ShapeError](t, "dilation 2", func() { Conv2d(x, w, nil, [2]int{1, 1}, [2]int{}, [2]int{2, 1}, 1) })
	if got := MaxPool2d(x, [2]int{2, 2}, [2]int{math.MaxInt, 1}, [2]int{}, CeilMode()).Shape(); !got.Equal(Shape{1, 1, 1, 7}) {
		t.Errorf("huge stride, ceil_mode: %v, want [1, 1, 1, 7]", got)
	}
}
