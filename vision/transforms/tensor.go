package transforms

import (
	"github.com/emberml/ember"
)

func chw(op string, t *ember.Tensor) (c, h, w int, px []float32) {
	s := t.Shape()
	if len(s) != 3 {
		panic(&ember.ShapeError{Op: "transforms." + op, Msg: "tensor is not [C, H, W]", Shapes: []ember.Shape{s}})
	}
	return s[0], s[1], s[2], t.Cast(ember.Float32).Contiguous().Float32s()
}

// ResizeTensor is F.resize(t, size, antialias=True) on a [C, H, W] float
// tensor: the shorter side to size, antialiased bilinear in float32.
func ResizeTensor(t *ember.Tensor, size int) *ember.Tensor {
	c, h, w, px := chw("ResizeTensor", t)
	ow, oh := ResizedSize(w, h, size)
	return ember.FromSlice(resampleFloat(px, c, h, w, oh, ow), ember.Shape{c, oh, ow})
}

// CenterCropTensor is F.center_crop on a [C, H, W] tensor (zero padding
// where the tensor is smaller than the crop).
func CenterCropTensor(t *ember.Tensor, size int) *ember.Tensor {
	c, h, w, px := chw("CenterCropTensor", t)
	checkOut("transforms.CenterCropTensor", size, size)
	top, left := centerOffsets(w, h, size, size)
	out := make([]float32, c*size*size)
	for ch := 0; ch < c; ch++ {
		for y := 0; y < size; y++ {
			sy := top + y
			if sy < 0 || sy >= h {
				continue
			}
			for x := 0; x < size; x++ {
				if sx := left + x; sx >= 0 && sx < w {
					out[(ch*size+y)*size+x] = px[(ch*h+sy)*w+sx]
				}
			}
		}
	}
	return ember.FromSlice(out, ember.Shape{c, size, size})
}

// HFlipTensor mirrors a [C, H, W] tensor left to right.
func HFlipTensor(t *ember.Tensor) *ember.Tensor {
	c, h, w, px := chw("HFlipTensor", t)
	out := make([]float32, len(px))
	for row := 0; row < c*h; row++ {
		for x := 0; x < w; x++ {
			out[row*w+x] = px[row*w+w-1-x]
		}
	}
	return ember.FromSlice(out, ember.Shape{c, h, w})
}
