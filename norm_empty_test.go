package ember

import "testing"

// TestBatchNormEmpty: an empty input (no channels, or an empty batch)
// comes back empty, as PyTorch's batch_norm; no channels divided an
// integer by zero (a Go runtime panic).
func TestBatchNormEmpty(t *testing.T) {
	rm, rv := Zeros(Shape{2}), Ones(Shape{2})
	for _, c := range []struct {
		x      *Tensor
		rm, rv *Tensor
	}{{Zeros(Shape{3, 0}), nil, nil}, {Zeros(Shape{0, 0}), nil, nil}, {Zeros(Shape{0, 2, 4}), rm, rv}} {
		for _, training := range []bool{true, false} {
			if !training && c.rm == nil {
				continue
			}
			got := BatchNorm(c.x, c.rm, c.rv, nil, nil, training, 0.1, 1e-5)
			if !got.Shape().Equal(c.x.Shape()) {
				t.Fatalf("batch_norm of %v: shape %v", c.x.Shape(), got.Shape())
			}
		}
	}
	if m, v := rm.Float64s(), rv.Float64s(); m[0] != 0 || v[0] != 1 {
		t.Fatalf("running stats after an empty batch: %v %v", m, v)
	}
}
