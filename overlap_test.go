package ember

import (
	"slices"
	"strings"
	"testing"
)

// TestInPlaceOverlap checks the in-place ops' memory-overlap rules against
// what PyTorch 1.13 does with the same calls (each raises or gives the
// values below).
func TestInPlaceOverlap(t *testing.T) {
	const internal, partial = "more than one element of the written-to tensor", "some elements of the input tensor and the written-to tensor"
	for _, dev := range testDevices() {
		ar := func(n int) *Tensor { return Arange(0, float64(n), 1, Dtype(Float32), On(dev)) }
		refused := map[string]struct {
			f    func()
			want string
		}{
			"expand add_":     {func() { Ones(Shape{1, 3}, On(dev)).Expand(2, 3).AddScalarInPlace(1) }, internal},
			"expand mul_":     {func() { Zeros(Shape{1}, On(dev)).Expand(3).MulScalarInPlace(2) }, internal},
			"expand copy_":    {func() { Zeros(Shape{3}, On(dev)).Unsqueeze(0).Expand(2, 3).CopyFrom(Ones(Shape{2, 3}, On(dev))) }, internal},
			"expand sqrt_":    {func() { Zeros(Shape{1}, On(dev)).Expand(3).SqrtInPlace() }, internal},
			"x += x.T":        {func() { z := ar(9).Reshape(3, 3); z.AddInPlace(z.T()) }, partial},
			"x[1:] += x[:-1]": {func() { w := ar(5); w.Narrow(0, 1, 4).AddInPlace(w.Narrow(0, 0, 4)) }, partial},
			"x += x[0]":       {func() { z := ar(9).Reshape(3, 3); z.AddInPlace(z.Select(0, 0)) }, partial},
			"copy_ shifted":   {func() { w := ar(6); w.Narrow(0, 1, 3).CopyFrom(w.Narrow(0, 0, 3)) }, partial},
		}
		for name, c := range refused {
			err := Try(c.f)
			if _, ok := err.(*ShapeError); !ok || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: %s: %v, want a ShapeError about %q", dev, name, err, c.want)
			}
		}
		// an empty tensor has no element to overlap ([9, 0] has strides [0, 1])
		if err := Try(func() { Zeros(Shape{9, 0}, On(dev)).CopyFrom(Ones(Shape{9, 0}, On(dev))).AddScalarInPlace(1) }); err != nil {
			t.Errorf("%v: copy_ into [9, 0]: %v", dev, err)
		}
		w := ar(5)
		if got := w.AddInPlace(w).Float32s(); !slices.Equal(got, []float32{0, 2, 4, 6, 8}) { // the same view: allowed
			t.Errorf("%v: x += x: %v", dev, got)
		}
		w6 := ar(6)
		w6.Narrow(0, 0, 3).MulInPlace(w6.Narrow(0, 3, 3)) // disjoint parts of one storage
		if got := w6.Float32s(); !slices.Equal(got, []float32{0, 4, 10, 3, 4, 5}) {
			t.Errorf("%v: x[:3] *= x[3:]: %v", dev, got)
		}
		e := Zeros(Shape{1, 3}, On(dev))
		e.Expand(2, 3).FillInPlace(7) // fill_ may write an expanded view
		if got := e.Float32s(); !slices.Equal(got, []float32{7, 7, 7}) {
			t.Errorf("%v: fill_ of an expanded view: %v", dev, got)
		}
	}
}
