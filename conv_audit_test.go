package ember

import (
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
