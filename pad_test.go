package ember

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

// TestPad: torch.nn.functional.pad's constant mode on [[1 2 3] [4 5 6]],
// worked by hand: pads and crops of the last two dims, the gradient of
// sum(y · (1, 2, ...)) (each kept element's weight at its new place, 0
// for cropped ones).
func TestPad(t *testing.T) {
	for _, c := range []struct {
		pad         []int
		shape       Shape
		value, grad []float64
	}{
		{[]int{1, 2}, Shape{2, 6}, []float64{-0.5, 1, 2, 3, -0.5, -0.5, -0.5, 4, 5, 6, -0.5, -0.5}, []float64{2, 3, 4, 8, 9, 10}},
		{[]int{1, 0, 0, 1}, Shape{3, 4}, []float64{-0.5, 1, 2, 3, -0.5, 4, 5, 6, -0.5, -0.5, -0.5, -0.5}, []float64{2, 3, 4, 6, 7, 8}},
		{[]int{-1, 1}, Shape{2, 3}, []float64{2, 3, -0.5, 5, 6, -0.5}, []float64{0, 1, 2, 0, 4, 5}},
		{[]int{0, 0, 2, -1}, Shape{3, 3}, []float64{-0.5, -0.5, -0.5, -0.5, -0.5, -0.5, 1, 2, 3}, []float64{7, 8, 9, 0, 0, 0}},
		{nil, Shape{2, 3}, []float64{1, 2, 3, 4, 5, 6}, []float64{1, 2, 3, 4, 5, 6}},
	} {
		for _, dev := range testDevices() {
			x := Arange(1, 7, 1, On(dev), Dtype(Float64)).Reshape(2, 3).SetRequiresGrad(true)
			y := Pad(x, c.pad, -0.5)
			if !y.Shape().Equal(c.shape) || y.GradFn() != "ConstantPadNdBackward0" {
				t.Fatalf("pad %v: shape %v grad_fn %q, want %v", c.pad, y.Shape(), y.GradFn(), c.shape)
			}
			wantGrad(t, "pad value", y, c.value)
			y.Mul(Arange(1, float64(y.NumElements())+1, 1, On(dev), Dtype(Float64)).Reshape(y.Shape()...)).Sum().Backward()
			wantGrad(t, "pad gradient", x.Grad(), c.grad)
		}
	}
	if got := Pad(FromSlice([]int64{1, 2}, Shape{2}), []int{1, 1}, 7); got.DType() != Int64 || got.Float64s()[0] != 7 {
		t.Fatalf("int64 pad: %v %v", got.DType(), got.Float64s())
	}
	x := Ones(Shape{2, 3})
	testenv.Raises[*ValueError](t, "odd pad", func() { Pad(x, []int{1}, 0) })
	testenv.Raises[*ShapeError](t, "too many pads", func() { Pad(x, []int{1, 1, 1, 1, 1, 1}, 0) })
	testenv.Raises[*ShapeError](t, "crop past the size", func() { Pad(x, []int{-2, -2}, 0) })
	testenv.Raises[*ShapeError](t, "crop far past", func() { Pad(x, []int{math.MinInt, 0}, 0) })
	testenv.Raises[*ShapeError](t, "huge pad", func() { Pad(x, []int{math.MaxInt, math.MaxInt}, 0) })
	testenv.Raises[*ValueError](t, "value past int64", func() { Pad(x.Cast(Int64), []int{1, 1}, 1e30) })
}

// TestGradFixturesPadModes: PadMode's reflect, replicate and circular modes
// over 1-3 padded dims, batched and not, crops included, against PyTorch's
// values and gradients (testdata/gen_pad_fixtures.py), with PyTorch's
// grad_fn names.
func TestGradFixturesPadModes(t *testing.T) {
	runGradFixtures(t, "pad", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var mode string
		var pad []int
		c.param(t, "mode", &mode)
		c.param(t, "pad", &pad)
		y := PadMode(in["x"], pad, mode)
		want := map[string]string{"reflect": "ReflectionPad%dDBackward0", "replicate": "ReplicationPad%dDBackward0", "circular": "CopySlices"}[mode]
		if mode != "circular" {
			want = fmt.Sprintf(want, len(pad)/2)
		}
		if y.GradFn() != want {
			t.Fatalf("%s %v: grad_fn %q, want %q", mode, pad, y.GradFn(), want)
		}
		return y
	}, nil)
}

// TestPadModeErrors: PyTorch 1.13's conditions on F.pad's non-constant
// modes (the ranks each takes, the pad limits, empty dims, dtypes), and the
// shapes it gives on the edge (checked with torch by hand) on every device
// and on meta.
func TestPadModeErrors(t *testing.T) {
	for _, dev := range append(testDevices(), Meta) {
		x := Ones(Shape{1, 2, 4}, On(dev))
		for _, c := range []struct {
			shape Shape
			pad   []int
			mode  string
			want  Shape
		}{
			{Shape{2, 3}, []int{1, 1}, "reflect", Shape{2, 5}},
			{Shape{0, 3}, []int{1, 1}, "reflect", Shape{0, 5}},
			{Shape{0, 3, 3}, []int{1, 1, 1, 1}, "reflect", Shape{0, 5, 5}},
			{Shape{0, 2, 3}, []int{1, 1}, "replicate", Shape{0, 2, 5}},
			{Shape{1, 2, 4}, []int{10, 10}, "replicate", Shape{1, 2, 24}},
			{Shape{1, 1, 3, 4}, []int{-2, -2, 1, 1}, "reflect", Shape{1, 1, 5, 0}},
			{Shape{1, 1, 3, 4}, []int{1, 1, -2, -1}, "replicate", Shape{1, 1, 0, 6}},
			{Shape{1, 1, 1}, []int{0, 0}, "reflect", Shape{1, 1, 1}},
			{Shape{2, 0, 3}, []int{1, 1}, "circular", Shape{2, 0, 5}},
			{Shape{1, 2, 4}, []int{-2, -2}, "circular", Shape{1, 2, 0}},
			{Shape{1, 2, 4}, []int{4, 4}, "circular", Shape{1, 2, 12}},
			{Shape{1, 1, 0}, []int{0, 0}, "circular", Shape{1, 1, 0}},
			{Shape{1, 2, 4}, []int{1, 2}, "constant", Shape{1, 2, 7}},
		} {
			if got := PadMode(Ones(c.shape, On(dev)), c.pad, c.mode); !got.Shape().Equal(c.want) {
				t.Fatalf("%v %s %v: shape %v, want %v", c.shape, c.mode, c.pad, got.Shape(), c.want)
			}
		}
		if got := PadMode(FromSlice([]int64{1, 2, 3}, Shape{1, 1, 3}, On(dev)), []int{1, 1}, "circular"); got.DType() != Int64 || (dev != Meta && fmt.Sprint(got.Int64s()) != "[3 1 2 3 1]") {
			t.Fatalf("int64 circular pad: %v", got)
		}
		for _, c := range []struct {
			what  string
			shape Shape
			pad   []int
			mode  string
			check func(*testing.T, string, func())
		}{
			{"odd", Shape{1, 2, 4}, []int{1}, "reflect", raises[*ValueError]},
			{"too long", Shape{2, 3}, []int{1, 1, 1, 1, 1, 1}, "reflect", raises[*ShapeError]},
			{"bad mode", Shape{1, 2, 4}, []int{1, 1}, "foo", raises[*ValueError]},
			{"1-D input", Shape{3}, []int{1, 1}, "reflect", raises[*ValueError]},
			{"2 pads of a 4-D input", Shape{1, 1, 3, 3}, []int{1, 1}, "replicate", raises[*ValueError]},
			{"no pads", Shape{1, 2, 4}, nil, "reflect", raises[*ValueError]},
			{"reflect pad = size", Shape{1, 2, 4}, []int{4, 0}, "reflect", raises[*ShapeError]},
			{"reflect height pad = size", Shape{1, 3, 3}, []int{2, 2, 3, 0}, "reflect", raises[*ShapeError]},
			{"reflect output 0", Shape{1, 2, 4}, []int{-2, -2}, "reflect", raises[*ShapeError]},
			{"replicate output -1", Shape{1, 2, 4}, []int{-3, -2}, "replicate", raises[*ShapeError]},
			{"replicate all outputs 0", Shape{1, 1, 3, 4}, []int{-2, -2, -1, -2}, "replicate", raises[*ShapeError]},
			{"reflect an output negative", Shape{1, 1, 3, 4}, []int{-3, -3, 1, 1}, "reflect", raises[*ShapeError]},
			{"replicate empty width", Shape{1, 2, 0}, []int{1, 1}, "replicate", raises[*ShapeError]},
			{"replicate empty unbatched channels", Shape{0, 3}, []int{1, 1}, "replicate", raises[*ShapeError]},
			{"reflect empty channels", Shape{2, 0, 3}, []int{1, 1}, "reflect", raises[*ShapeError]},
			{"reflect 3d empty unbatched channels", Shape{0, 2, 2, 2}, []int{1, 1, 1, 1, 1, 1}, "reflect", raises[*ShapeError]},
			{"circular unbatched", Shape{2, 3}, []int{1, 1}, "circular", raises[*ShapeError]},
			{"circular 2 pads of a 3-D input... as 2-d", Shape{1, 2, 3}, []int{1, 1, 1, 1}, "circular", raises[*ShapeError]},
			{"circular wraps twice", Shape{1, 2, 4}, []int{5, 0}, "circular", raises[*ShapeError]},
			{"circular crop past", Shape{1, 1, 4}, []int{-5, 0}, "circular", raises[*ShapeError]},
			{"circular wrap past the cropped", Shape{1, 1, 4}, []int{3, -2}, "circular", raises[*ShapeError]},
			{"circular empty with a pad", Shape{1, 1, 0}, []int{1, 0}, "circular", raises[*ShapeError]},
			{"huge replicate", Shape{1, 2, 4}, []int{math.MaxInt, math.MaxInt}, "replicate", raises[*ShapeError]},
			{"huge crop", Shape{1, 2, 4}, []int{math.MinInt, 0}, "circular", raises[*ShapeError]},
		} {
			c.check(t, c.what, func() { PadMode(Ones(c.shape, On(dev)), c.pad, c.mode) })
		}
		testenv.Raises[*DTypeError](t, "reflect int", func() { PadMode(x.Cast(Int64), []int{1, 1}, "reflect") })
		testenv.Raises[*DTypeError](t, "replicate bool", func() { PadMode(x.Cast(Bool), []int{1, 1}, "replicate") })
	}
}

func raises[E error](t *testing.T, what string, f func()) { t.Helper(); testenv.Raises[E](t, what, f) }

// TestPadModesOnEmulatedCUDA reruns the PyTorch fixtures of the padding
// modes on the emulated cuda:0 (gather and its index-add backward run
// through the CUDA kernels).
func TestPadModesOnEmulatedCUDA(t *testing.T) {
	onEmulatedCUDA(t)
	TestGradFixturesPadModes(t)
	TestPadModeErrors(t)
}

// TestPadModeHugeDimOnMeta: the reflect and circular modes' index is made
// on the tensor's device, as replicate's: a meta tensor with a dim of 2^36
// pads to its shape (a host index of that size was a fatal out-of-memory
// error, not a recoverable panic).
func TestPadModeHugeDimOnMeta(t *testing.T) {
	x := Ones(Shape{1, 1, 1 << 36}, On(Meta))
	for _, c := range []struct {
		mode string
		pad  []int
		want int
	}{{"reflect", []int{2, 3}, 1<<36 + 5}, {"circular", []int{-1, 4}, 1<<36 + 3}, {"replicate", []int{1, 1}, 1<<36 + 2}} {
		if got := PadMode(x, c.pad, c.mode).Shape(); !got.Equal(Shape{1, 1, c.want}) {
			t.Fatalf("%s %v: shape %v", c.mode, c.pad, got)
		}
	}
}
