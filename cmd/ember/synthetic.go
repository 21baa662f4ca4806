package main

import (
	"math/rand/v2"

	"github.com/emberml/ember"
)

// synthetic is `--dataset synthetic`: Fashion-MNIST-shaped samples ([1, 28,
// 28] float32 images in [0, 1], int64 labels 0..9) made from their index,
// for checking a setup (a GPU machine, a cluster) without downloading data.
// Sample i has label i%10, drawn as a bright 6×4 bar whose place the label
// decides (two rows of five places, jittered by a pixel) on uniform noise in
// [0, 0.4); a small CNN learns it within one epoch of a few thousand samples.
type synthetic struct {
	n    int
	seed uint64 // train and test draw different noise
}

var syntheticClasses = []string{"bar 0", "bar 1", "bar 2", "bar 3", "bar 4", "bar 5", "bar 6", "bar 7", "bar 8", "bar 9"}

func newSynthetic(train bool) synthetic {
	if train {
		return synthetic{n: 10000, seed: 1}
	}
	return synthetic{n: 2000, seed: 2}
}

func (s synthetic) Len() int { return s.n }

func (s synthetic) Get(i int) (*ember.Tensor, *ember.Tensor) {
	const side = 28
	r := rand.New(rand.NewPCG(s.seed, uint64(i)))
	img := make([]float32, side*side)
	for j := range img {
		img[j] = 0.4 * r.Float32()
	}
	label := i % 10
	y0 := 4 + (label/5)*12 + r.IntN(3) - 1
	x0 := 2 + (label%5)*5 + r.IntN(3) - 1
	for y := y0; y < y0+6; y++ {
		for x := x0; x < x0+4; x++ {
			img[y*side+x] = 0.8 + 0.2*r.Float32()
		}
	}
	return ember.FromSlice(img, ember.Shape{1, side, side}), ember.FromSlice([]int64{int64(label)}, ember.Shape{})
}
