package ember

import "testing"

// TestFlipHugeDim: Flip's reversed index is made on the tensor's device,
// so a meta tensor with a huge dim flips to its shape, and on the CPU a
// dim too long to index is a typed *OutOfMemoryError (the index was a host
// slice as long as the dim: 8 TiB for a meta [2^40], a fatal
// out-of-memory error).
func TestFlipHugeDim(t *testing.T) {
	m := Empty(Shape{3, 1 << 40}, On(Meta))
	for _, got := range []*Tensor{m.Flip(1), m.Fliplr(), m.Flip(0, -1)} {
		if !got.Shape().Equal(Shape{3, 1 << 40}) || got.Device() != Meta {
			t.Fatalf("flip on meta: %v on %v", got.Shape(), got.Device())
		}
	}
	x := Ones(Shape{1}, Dtype(Bool)).Expand(1 << 50)
	raises[*OutOfMemoryError](t, "flip of an expanded 2^50", func() { x.Flip(0) })
	// values still reverse, 0-length dims included
	// (torch.arange(6).reshape(2, 3).flip(1) is [[2, 1, 0], [5, 4, 3]]).
	got := Arange(0, 6, 1).Reshape(2, 3).Flip(1).Int64s()
	want := []int64{2, 1, 0, 5, 4, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("flip: %v, want %v", got, want)
		}
	}
	if e := Empty(Shape{2, 0}).Flip(1, 0); !e.Shape().Equal(Shape{2, 0}) {
		t.Fatalf("flip of [2, 0]: %v", e.Shape())
	}
}
