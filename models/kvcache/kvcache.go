// Package kvcache is the key/value cache of incremental decoding for the
// transformer models (models/gpt2, models/llama): per layer, the keys and
// values of every position seen so far, so a decoding step computes only
// its new token's projections and attends to the stored ones.
//
// A layer's buffers are [B, H, capacity, D] tensors on the model's device
// that grow by doubling along the sequence dim: memory follows the
// sequence's length (amortised, at most twice it), and earlier positions
// are never recomputed. Append writes the step's keys and values into the
// free part and returns views of the filled part.
package kvcache

import (
	"fmt"

	"github.com/emberml/ember"
)

// Cache holds the keys and values of each layer for one batch of
// sequences. The zero value is not usable: make one with New.
type Cache struct {
	layers  []layer // those appended to so far (the first step adds them in order)
	nLayers int
	n       int // positions stored (the same in every layer once a step is done)
	next    int // the layer that appends next
}

type layer struct {
	k, v *ember.Tensor // [B, H, capacity, D]
	n    int
}

// New returns an empty cache for a model of nLayers layers (at least 1).
// It holds nothing per layer until the layer appends.
func New(nLayers int) *Cache {
	if nLayers < 1 {
		panic(&ember.ValueError{Op: "kvcache.New", Msg: fmt.Sprintf("%d layers: want at least 1", nLayers)})
	}
	return &Cache{nLayers: nLayers}
}

// Len is the number of positions stored: the position of the next token.
func (c *Cache) Len() int { return c.n }

// Layers is the number of layers the cache was made for.
func (c *Cache) Layers() int { return c.nLayers }

// Append adds the keys k and values v ([B, H, T, D]) of T new positions to
// layer i and returns the keys and values of every position so far
// ([B, H, Len+T, D] views of the cache's buffers). The cache's Len advances
// once the last layer has appended.
func (c *Cache) Append(i int, k, v *ember.Tensor) (keys, values *ember.Tensor) {
	if i != c.next {
		panic(&ember.ValueError{Op: "kvcache.Append", Msg: fmt.Sprintf("layer %d appended when layer %d was next (each step appends to every layer in order)", i, c.next)})
	}
	c.next = (i + 1) % c.nLayers
	if i == len(c.layers) {
		c.layers = append(c.layers, layer{})
	}
	l := &c.layers[i]
	s := k.Shape()
	t := s[2]
	if l.k == nil || l.n+t > l.k.Shape()[2] {
		capacity := max(16, 2*(l.n+t))
		grow := func(old, add *ember.Tensor) *ember.Tensor {
			sh := add.Shape()
			b := ember.Empty(ember.Shape{sh[0], sh[1], capacity, sh[3]}, ember.On(add.Device()), ember.Dtype(add.DType()))
			if old != nil && l.n > 0 {
				b.Narrow(2, 0, l.n).CopyFrom(old.Narrow(2, 0, l.n))
				old.Release()
			}
			return b
		}
		l.k, l.v = grow(l.k, k), grow(l.v, v)
	}
	ember.NoGrad(func() {
		l.k.Narrow(2, l.n, t).CopyFrom(k)
		l.v.Narrow(2, l.n, t).CopyFrom(v)
	})
	l.n += t
	if i == c.nLayers-1 {
		c.n = l.n
	}
	return l.k.Narrow(2, 0, l.n), l.v.Narrow(2, 0, l.n)
}

// Release frees the cache's buffers at once (on CUDA; on the CPU they go
// back to the buffer cache) and empties it.
func (c *Cache) Release() {
	for i := range c.layers {
		if c.layers[i].k != nil {
			c.layers[i].k.Release()
			c.layers[i].v.Release()
		}
		c.layers[i] = layer{}
	}
	c.n, c.next = 0, 0
}

// Truncate drops every position from n on (n ≤ Len): decoding continues
// from position n, reusing the buffers (to try several continuations of
// one prompt, or to time decoding from a fixed prompt).
func (c *Cache) Truncate(n int) {
	if n < 0 || n > c.n {
		panic(&ember.ValueError{Op: "kvcache.Truncate", Msg: fmt.Sprintf("Truncate(%d) of a cache of %d positions", n, c.n)})
	}
	for i := range c.layers {
		c.layers[i].n = n
	}
	c.n, c.next = n, 0
}
