package ember

import (
	"errors"
	"testing"
)

// wantVals fails unless got has shape and values want (hand-worked from
// torch.diagonal / torch.diag_embed / torch.diag semantics).
func wantVals(t *testing.T, what string, got *Tensor, shape Shape, want []float64) {
	t.Helper()
	if !got.Shape().Equal(shape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), shape)
	}
	if got.Device() == Meta {
		return
	}
	g := got.Float64s()
	for i := range want {
		if g[i] != want[i] {
			t.Fatalf("%s: %v, want %v", what, g, want)
		}
	}
}

func testDiagOps(t *testing.T, dev Device) {
	x := Arange(0, 24, 1, Dtype(Float64), On(dev)).Reshape(2, 3, 4)
	wantVals(t, "diagonal(0,1,2)", x.Diagonal(0, 1, 2), Shape{2, 3}, []float64{0, 5, 10, 12, 17, 22})
	wantVals(t, "diagonal(1,1,2)", x.Diagonal(1, 1, 2), Shape{2, 3}, []float64{1, 6, 11, 13, 18, 23})
	wantVals(t, "diagonal(-1,2,1)", x.Diagonal(-1, 2, 1), Shape{2, 3}, []float64{1, 6, 11, 13, 18, 23})
	wantVals(t, "diagonal(1,0,2)", x.Diagonal(1, 0, 2), Shape{3, 2}, []float64{1, 14, 5, 18, 9, 22})
	wantVals(t, "diagonal(-2,-2,-1)", x.Diagonal(-2, -2, -1), Shape{2, 1}, []float64{8, 20})
	wantVals(t, "diagonal(4,1,2) (empty)", x.Diagonal(4, 1, 2), Shape{2, 0}, nil)
	wantVals(t, "diagonal(-3,1,2) (empty)", x.Diagonal(-3, 1, 2), Shape{2, 0}, nil)

	v := FromSlice([]float64{1, 2, 3, 4}, Shape{2, 2}, On(dev))
	wantVals(t, "diag_embed", v.DiagEmbed(0, -2, -1), Shape{2, 2, 2}, []float64{1, 0, 0, 2, 3, 0, 0, 4})
	// out[i, b, i+1] = v[b, i]
	wantVals(t, "diag_embed(1,0,2)", v.DiagEmbed(1, 0, 2), Shape{3, 2, 3},
		[]float64{0, 1, 0, 0, 3, 0, 0, 0, 2, 0, 0, 4, 0, 0, 0, 0, 0, 0})
	wantVals(t, "diag 1-D", FromSlice([]float64{1, 2}, nil, On(dev)).Diag(-1), Shape{3, 3}, []float64{0, 0, 0, 1, 0, 0, 0, 2, 0})
	wantVals(t, "diag 2-D", Arange(0, 9, 1, Dtype(Float64), On(dev)).Reshape(3, 3).Diag(1), Shape{2}, []float64{1, 5})
	if dev == Meta {
		return
	}

	// a view: writing through it writes x
	y := Zeros(Shape{3, 3}, On(dev), Dtype(Float64))
	y.Diagonal(0, 0, 1).FillInPlace(7)
	wantVals(t, "diagonal view write", y, Shape{3, 3}, []float64{7, 0, 0, 0, 7, 0, 0, 0, 7})

	// gradients: g on the diagonal, 0 elsewhere; diag_embed's is the diagonal
	xg := Arange(0, 12, 1, Dtype(Float64), On(dev)).Reshape(3, 4).Detach()
	xg.SetRequiresGrad(true)
	xg.Diagonal(1, 0, 1).Mul(FromSlice([]float64{10, 20, 30}, nil, On(dev))).Sum().Backward()
	wantVals(t, "diagonal grad", xg.Grad(), Shape{3, 4}, []float64{0, 10, 0, 0, 0, 0, 20, 0, 0, 0, 0, 30})
	vg := FromSlice([]float64{1, 2}, nil, On(dev), WithGrad())
	vg.DiagEmbed(0, 0, 1).Mul(Arange(0, 4, 1, Dtype(Float64), On(dev)).Reshape(2, 2)).Sum().Backward()
	wantVals(t, "diag_embed grad", vg.Grad(), Shape{2}, []float64{0, 3})
	mg := FromSlice([]float64{1, 2, 3, 4}, Shape{2, 2}, On(dev), WithGrad())
	mg.Diag(0).Mul(FromSlice([]float64{5, 6}, nil, On(dev))).Sum().Backward()
	wantVals(t, "diag grad", mg.Grad(), Shape{2, 2}, []float64{5, 0, 0, 6})
	// grad_fn names as PyTorch's
	for what, got := range map[string]string{
		"diagonal": mg.Diagonal(0, 0, 1).GradFn(), "diag_embed": vg.DiagEmbed(0, -2, -1).GradFn(),
		"diag 1-D": vg.Diag(0).GradFn(), "diag 2-D": mg.Diag(0).GradFn(),
	} {
		want := map[string]string{"diagonal": "DiagonalBackward0", "diag_embed": "DiagEmbedBackward0"}[what]
		if want == "" {
			want = "DiagBackward0"
		}
		if got != want {
			t.Errorf("%s: grad_fn %q, want %q", what, got, want)
		}
	}
}

// TestDiagonalOps checks Diagonal, DiagEmbed and Diag against values
// worked out by hand from PyTorch's definitions, on every device and for
// shapes on meta.
func TestDiagonalOps(t *testing.T) {
	for _, dev := range append(testDevices(), Meta) {
		t.Run(dev.String(), func(t *testing.T) { testDiagOps(t, dev) })
	}
}

func TestDiagonalOpsOnEmulatedCUDA(t *testing.T) {
	onEmulatedCUDA(t)
	testDiagOps(t, CUDA(0))
}

func TestDiagonalErrors(t *testing.T) {
	x := Zeros(Shape{2, 3})
	for _, c := range []struct {
		what string
		f    func()
	}{
		{"same dims", func() { x.Diagonal(0, 1, 1) }},
		{"same dims negative", func() { x.Diagonal(0, 1, -1) }},
		{"dim out of range", func() { x.Diagonal(0, 0, 2) }},
		{"diag_embed same dims", func() { x.DiagEmbed(0, 0, -3) }},
		{"diag_embed dim out of range", func() { x.DiagEmbed(0, 0, 3) }},
		{"diag_embed 0-dim", func() { Scalar(1).DiagEmbed(0, -2, -1) }},
		{"diag 3-D", func() { Zeros(Shape{1, 1, 1}).Diag(0) }},
		{"diag 0-D", func() { Scalar(1).Diag(0) }},
	} {
		var se *ShapeError
		if err := Try(c.f); !errors.As(err, &se) {
			t.Errorf("%s: got %v, want a *ShapeError", c.what, err)
		}
	}
}
