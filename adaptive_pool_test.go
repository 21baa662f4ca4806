package ember

import (
	"errors"
	"testing"
)

// Global average pooling (1×1 output) takes a mean over each plane; its
// gradient spreads g/(H·W) over the plane. Values worked by hand.
func TestAdaptiveAvgPool2dGlobal(t *testing.T) {
	// [1, 2, 2, 3]: plane 0 is 1..6 (mean 3.5), plane 1 is -6..-1 (mean -3.5)
	x := FromSlice([]float32{1, 2, 3, 4, 5, 6, -6, -5, -4, -3, -2, -1}, Shape{1, 2, 2, 3}, WithGrad())
	y := AdaptiveAvgPool2d(x, 1, 1)
	if got := y.Shape(); len(got) != 4 || got[0] != 1 || got[1] != 2 || got[2] != 1 || got[3] != 1 {
		t.Fatalf("shape %v, want [1 2 1 1]", got)
	}
	if got := y.Float32s(); got[0] != 3.5 || got[1] != -3.5 {
		t.Fatalf("forward %v, want [3.5 -3.5]", got)
	}
	if name := y.GradFn(); name != "AdaptiveAvgPool2DBackward0" {
		t.Fatalf("grad_fn %q", name)
	}
	// loss = 6·y0 + 12·y1: dx = 1 on plane 0, 2 on plane 1
	y.Mul(FromSlice([]float32{6, 12}, Shape{1, 2, 1, 1})).Sum().Backward()
	g := x.Grad().Float32s()
	for i, v := range g {
		want := float32(1)
		if i >= 6 {
			want = 2
		}
		if v != want {
			t.Fatalf("grad %v, want six 1s then six 2s", g)
		}
	}
	// unbatched [C, H, W]
	u := AdaptiveAvgPool2d(FromSlice([]float64{1, 3, 5, 7}, Shape{1, 2, 2}), 1, 1)
	if s := u.Shape(); len(s) != 3 || u.Float64s()[0] != 4 {
		t.Fatalf("unbatched: %v %v, want [1 1 1] [4]", s, u.Float64s())
	}
}

// TestAdaptiveAvgPoolHugeOutput: an output whose element count overflows,
// or whose pooling matrix would pass maxPoolMatrix, is a *ShapeError (both
// were fatal out-of-memory errors building the matrix on the host).
func TestAdaptiveAvgPoolHugeOutput(t *testing.T) {
	x := Ones(Shape{1, 3, 8, 8})
	for _, o := range [][2]int{{1 << 31, 1 << 31}, {1 << 28, 1}} {
		var se *ShapeError
		if err := Try(func() { AdaptiveAvgPool2d(x, o[0], o[1]) }); !errors.As(err, &se) || se.Op != "adaptive_avg_pool2d" {
			t.Errorf("%v: %v", o, err)
		}
	}
}
