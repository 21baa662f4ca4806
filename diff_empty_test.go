package ember

import "testing"

// TestDiffEmptyDim: the n-th difference along an empty dim is empty on
// every device, and a new tensor (torch.diff(torch.empty(0), n=1) is
// tensor([])); the meta device narrowed by -1 there (a ShapeError where
// the CPU gave [0]).
func TestDiffEmptyDim(t *testing.T) {
	for _, dev := range append(testDevices(), Meta) {
		x := Empty(Shape{2, 0}, On(dev))
		for _, n := range []int{1, 3} {
			var got *Tensor
			if err := Try(func() { got = x.Diff(n, 1, nil, nil) }); err != nil {
				t.Fatalf("diff n=%d of [2, 0] on %v: %v", n, dev, err)
			}
			if !got.Shape().Equal(Shape{2, 0}) || got.Device() != dev {
				t.Fatalf("diff n=%d of [2, 0] on %v: %v on %v", n, dev, got.Shape(), got.Device())
			}
			if got == x {
				t.Fatalf("diff n=%d of [2, 0] on %v: the input itself, not a new tensor", n, dev)
			}
		}
	}
}
