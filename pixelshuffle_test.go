package ember

import "testing"

// TestPixelShuffleNoChannels: 0 channels are divisible by any r², so
// PyTorch 1.13 shuffles them (shapes from PyTorch: [1, 0, 2, 2] by 1 and
// [1, 0, 4, 4] by 2), also with an r whose square overflows.
func TestPixelShuffleNoChannels(t *testing.T) {
	x := Zeros(Shape{1, 0, 2, 2})
	for _, c := range []struct {
		r    int
		want Shape
	}{{1, Shape{1, 0, 2, 2}}, {2, Shape{1, 0, 4, 4}}, {1 << 32, Shape{1, 0, 1 << 33, 1 << 33}}} {
		var got Shape
		if err := Try(func() { got = PixelShuffle(x, c.r).Shape() }); err != nil || !got.Equal(c.want) {
			t.Errorf("r %d: %v, %v; want %v", c.r, got, err, c.want)
		}
	}
}
