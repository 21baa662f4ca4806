package ember

import (
	"math"
	"slices"
	"testing"
)

// TestViewBoundsOverflow: bounds near math.MaxInt are checked without
// overflowing (start+length once wrapped past MaxInt and gave a view of the
// wrong memory), slices with huge ends and steps have torch's sizes, and
// the ops that take a dim of a 0-dim tensor do as torch does.
func TestViewBoundsOverflow(t *testing.T) {
	for _, dev := range testDevices() {
		a := Arange(0, 6, 1, Dtype(Float32), On(dev)).Reshape(2, 3)
		// a[:, 0:3:2**62] is column 0; a[:, 1:2**62] columns 1 and 2
		if v := a.Slice(1, 0, 3, math.MaxInt); !v.Shape().Equal(Shape{2, 1}) || !slices.Equal(v.Contiguous().Float32s(), []float32{0, 3}) {
			t.Errorf("%v: slice with a huge step: %v %v", dev, v.Shape(), v)
		}
		if v := a.Slice(1, 1, math.MaxInt, 1); !v.Shape().Equal(Shape{2, 2}) || !slices.Equal(v.Contiguous().Float32s(), []float32{1, 2, 4, 5}) {
			t.Errorf("%v: slice to a huge end: %v %v", dev, v.Shape(), v)
		}
		if c := a.Chunk(math.MaxInt, 1); len(c) != 3 { // torch: three chunks of 1
			t.Errorf("%v: Chunk(MaxInt) gave %d chunks, want 3", dev, len(c))
		}
		err := Try(func() { a.Narrow(0, 1, 1).Narrow(0, math.MaxInt, 1) })
		if err == nil || err.Error() != "narrow: start out of range (expected to be in range of [-1, 1], but got 9223372036854775807) (shapes [1, 3])" {
			t.Errorf("%v: narrow past MaxInt: %v", dev, err)
		}
		if f := Scalar(2, On(dev)).Flip(0); f.Dim() != 0 || f.Item() != 2 { // torch: tensor(2.)
			t.Errorf("%v: Flip of a scalar: %v", dev, f)
		}
		if r := Ones(Shape{0, 3}, On(dev)).Roll([]int{-1}, []int{-1}); !r.Shape().Equal(Shape{0, 3}) {
			t.Errorf("%v: Roll of an empty tensor: %v", dev, r.Shape())
		}
	}
}
