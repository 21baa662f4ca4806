package data

import (
	"fmt"
	"math/rand/v2"

	"github.com/emberml/ember"
)

// Transform maps an input sample to another. r is the sample's own random
// source (see Transformed), so augmentation repeats exactly for a seed.
type Transform func(x *ember.Tensor, r *rand.Rand) *ember.Tensor

// Compose applies ts in order.
func Compose(ts ...Transform) Transform {
	return func(x *ember.Tensor, r *rand.Rand) *ember.Tensor {
		for _, t := range ts {
			x = t(x, r)
		}
		return x
	}
}

// chw returns a [C, H, W] (or [H, W]) float32 image's dimensions and data.
func chw(op string, x *ember.Tensor) (c, h, w int, px []float32) {
	s := x.Shape()
	switch len(s) {
	case 2:
		c, h, w = 1, s[0], s[1]
	case 3:
		c, h, w = s[0], s[1], s[2]
	default:
		panic(&ember.ShapeError{Op: "data." + op, Msg: "image is not [C, H, W] or [H, W]", Shapes: []ember.Shape{s}})
	}
	return c, h, w, x.Cast(ember.Float32).Float32s()
}

// Normalize subtracts mean and divides by std per channel, as
// torchvision.transforms.Normalize: in float32, mean and std rounded to
// float32 first. One value applies to every channel. A std that is zero
// in float32 panics with an *ember.ValueError, as torchvision's
// "std evaluated to zero".
func Normalize(mean, std []float64) Transform {
	return func(x *ember.Tensor, _ *rand.Rand) *ember.Tensor {
		c, h, w, px := chw("Normalize", x)
		if (len(mean) != 1 && len(mean) != c) || len(std) != len(mean) {
			panic(&ember.ValueError{Op: "data.Normalize", Msg: fmt.Sprintf("%d means and %d stds for %d channels", len(mean), len(std), c)})
		}
		for _, s := range std {
			if float32(s) == 0 {
				panic(&ember.ValueError{Op: "data.Normalize", Msg: fmt.Sprintf("std %v evaluated to zero after conversion to float32, leading to division by zero", std)})
			}
		}
		for ch := 0; ch < c; ch++ {
			m, s := float32(mean[0]), float32(std[0])
			if len(mean) > 1 {
				m, s = float32(mean[ch]), float32(std[ch])
			}
			seg := px[ch*h*w : (ch+1)*h*w]
			for i, v := range seg {
				seg[i] = (v - m) / s
			}
		}
		return ember.FromSlice(px, x.Shape())
	}
}

// RandomCrop pads the image by padding zeros on every side and takes a
// size×size crop at a random position, as
// torchvision.transforms.RandomCrop(size, padding).
func RandomCrop(size, padding int) Transform {
	return func(x *ember.Tensor, r *rand.Rand) *ember.Tensor {
		c, h, w, px := chw("RandomCrop", x)
		needRand("data.RandomCrop", r)
		ph, pw := h+2*padding, w+2*padding
		if size > ph || size > pw {
			panic(&ember.ValueError{Op: "data.RandomCrop", Msg: fmt.Sprintf("crop %d larger than padded image %dx%d", size, ph, pw)})
		}
		top, left := r.IntN(ph-size+1), r.IntN(pw-size+1)
		out := make([]float32, c*size*size)
		for ch := 0; ch < c; ch++ {
			for i := 0; i < size; i++ {
				sy := top + i - padding
				if sy < 0 || sy >= h {
					continue
				}
				for j := 0; j < size; j++ {
					sx := left + j - padding
					if sx >= 0 && sx < w {
						out[(ch*size+i)*size+j] = px[(ch*h+sy)*w+sx]
					}
				}
			}
		}
		shape := ember.Shape{c, size, size}
		if x.Dim() == 2 {
			shape = ember.Shape{size, size}
		}
		return ember.FromSlice(out, shape)
	}
}

// RandomHorizontalFlip mirrors the image left to right with probability p.
func RandomHorizontalFlip(p float64) Transform {
	return func(x *ember.Tensor, r *rand.Rand) *ember.Tensor {
		needRand("data.RandomHorizontalFlip", r)
		if r.Float64() >= p {
			return x
		}
		c, h, w, px := chw("RandomHorizontalFlip", x)
		for row := 0; row < c*h; row++ {
			seg := px[row*w : (row+1)*w]
			for i, j := 0, w-1; i < j; i, j = i+1, j-1 {
				seg[i], seg[j] = seg[j], seg[i]
			}
		}
		return ember.FromSlice(px, x.Shape())
	}
}

// needRand panics with an *ember.ValueError naming op when a random
// transform is called without a random source (Transformed gives each
// sample one).
func needRand(op string, r *rand.Rand) {
	if r == nil {
		panic(&ember.ValueError{Op: op, Msg: "a random transform needs a *rand.Rand (got nil)"})
	}
}

// Transformed applies a transform to a dataset's inputs. Sample i of epoch
// e draws from a random source seeded by (seed, e, i), so the result does not
// depend on the order or the goroutine in which samples are fetched. A nil
// Transform leaves the inputs as they are (transform=None).
type Transformed struct {
	DS        Dataset
	Transform Transform
	Seed      uint64
	epoch     int
}

// WithTransform returns ds with t applied to every input.
func WithTransform(ds Dataset, seed uint64, t Transform) *Transformed {
	return &Transformed{DS: ds, Transform: t, Seed: seed}
}

// Len is the underlying dataset's length.
func (d *Transformed) Len() int { return d.DS.Len() }

// SetEpoch selects the epoch the random draws belong to.
func (d *Transformed) SetEpoch(e int) {
	d.epoch = e
	if es, ok := d.DS.(EpochSetter); ok {
		es.SetEpoch(e)
	}
}

// Get returns the transformed sample i.
func (d *Transformed) Get(i int) (*ember.Tensor, *ember.Tensor) {
	i = sampleIndex("data.Transformed.Get", i, d.Len()) // -1 draws as Len()-1 does
	x, y := d.DS.Get(i)
	if d.Transform == nil { // none, as transform=None
		return x, y
	}
	r := rand.New(rand.NewPCG(d.Seed^uint64(d.epoch)*0x9e3779b97f4a7c15, uint64(i)))
	return d.Transform(x, r), y
}
