package ember

import (
	"errors"
	"strings"
	"testing"
)

// TestUnbind: torch.unbind's slices, gradient (each slice's into its row)
// and grad_fn, an empty dim giving no slices, PyTorch's errors for a 0-dim
// tensor and a dim out of range, and in-place on a slice refused in a
// graph as for torch's multi-output views.
func TestUnbind(t *testing.T) {
	for _, dev := range testDevices() {
		x := FromSlice([]float32{1, 2, 3, 4, 5, 6}, Shape{2, 3}, On(dev), WithGrad())
		cols := x.MulScalar(1).Unbind(-1)
		if len(cols) != 3 || !cols[1].Shape().Equal(Shape{2}) || cols[1].GradFn() != "UnbindBackward0" {
			t.Fatalf("%v: %d slices, shape %v, grad_fn %q", dev, len(cols), cols[1].Shape(), cols[1].GradFn())
		}
		// loss = 1·col0 + 2·col1 + 3·col2 summed: d/dx[i][j] = j+1
		cols[0].Add(cols[1].MulScalar(2)).Add(cols[2].MulScalar(3)).Sum().Backward()
		if dev.Type == MetaType {
			continue
		}
		if got := cols[1].Float32s(); got[0] != 2 || got[1] != 5 {
			t.Errorf("%v: column 1 is %v, want [2 5]", dev, got)
		}
		if g := x.Grad().Float32s(); g[0] != 1 || g[1] != 2 || g[2] != 3 || g[3] != 1 || g[5] != 3 {
			t.Errorf("%v: grad %v, want [1 2 3 1 2 3]", dev, g)
		}
		if n := len(Zeros(Shape{0, 3}, On(dev)).Unbind(0)); n != 0 {
			t.Errorf("%v: unbind of an empty dim gave %d slices", dev, n)
		}
		var ae *AutogradError
		y := x.MulScalar(2).Unbind(0)
		if err := Try(func() { y[0].AddScalarInPlace(1) }); !errors.As(err, &ae) {
			t.Errorf("%v: in-place on an unbind output in a graph: %v, want an *AutogradError", dev, err)
		}
	}
	for name, f := range map[string]func(){
		"0-dim":        func() { Scalar(1).Unbind(0) },
		"out of range": func() { Ones(Shape{2, 3}).Unbind(2) },
	} {
		var se *ShapeError
		var ie *IndexError
		if err := Try(f); !errors.As(err, &se) && !errors.As(err, &ie) {
			t.Errorf("%s: %v, want a typed error", name, err)
		}
	}
	if err := Try(func() { Scalar(1).Unbind(0) }); err == nil || !strings.Contains(err.Error(), "Dimension specified as 0 but tensor has no dimensions") {
		t.Errorf("0-dim: %v, want PyTorch's message", err)
	}
}

// TestPiecesBounded: Split, Chunk and Unbind into more than maxPieces
// views are a *ShapeError; an expanded dim of 2⁴⁰ unbound, or an empty
// dim chunked 2⁴⁰ ways, had been a fatal out-of-memory in Go's runtime.
func TestPiecesBounded(t *testing.T) {
	huge := Zeros(Shape{1}).Expand(1 << 40)
	for name, f := range map[string]func(){
		"unbind": func() { huge.Unbind(0) },
		"split":  func() { huge.Split(1, 0) },
		"chunk":  func() { Zeros(Shape{0}).Chunk(1<<40, 0) },
	} {
		var se *ShapeError
		if err := Try(f); !errors.As(err, &se) || !strings.Contains(err.Error(), "more than ember makes at once") {
			t.Errorf("%s: %v, want a *ShapeError", name, err)
		}
	}
	if n := len(Zeros(Shape{1}).Expand(1000).Unbind(0)); n != 1000 {
		t.Errorf("1000 slices: got %d", n)
	}
}
