package kvcache_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/models/kvcache"
)

// TestAppendGrowsAndTruncates: appends past the first capacity keep every
// position in order, Truncate rewinds, and a wrong step order panics.
func TestAppendGrowsAndTruncates(t *testing.T) {
	c := kvcache.New(2)
	var want []float32
	for step, n := range []int{5, 1, 20, 3} {
		vals := make([]float32, 2*n)
		for i := range vals {
			vals[i] = float32(100*step + i)
		}
		x := ember.FromSlice(vals, ember.Shape{1, 1, n, 2})
		var k *ember.Tensor
		for l := range 2 {
			k, _ = c.Append(l, x, x.MulScalar(-1))
		}
		want = append(want, vals...)
		if got := k.Contiguous().Float32s(); !slices.Equal(got, want) {
			t.Fatalf("step %d: keys %v, want %v", step, got, want)
		}
	}
	if c.Len() != 29 {
		t.Fatalf("Len %d, want 29", c.Len())
	}
	c.Truncate(6)
	x := ember.FromSlice([]float32{7, 8}, ember.Shape{1, 1, 1, 2})
	c.Append(0, x, x)
	_, v := c.Append(1, x, x)
	if got := v.Contiguous().Float32s(); c.Len() != 7 || got[12] != 7 || got[13] != 8 || got[11] != -101 {
		t.Fatalf("after Truncate(6) and one step: Len %d, values %v", c.Len(), got)
	}
	defer func() {
		if recover() == nil {
			t.Error("appending to layer 1 twice did not panic")
		}
	}()
	c.Append(1, x, x)
}

// TestNewLayers: a layer count below 1 is a *ember.ValueError (0 divided
// by zero at the first Append, a negative one was a makeslice runtime
// error), and a cache holds nothing for layers that have not appended (a
// count of 2⁶² was a makeslice runtime error too).
func TestNewLayers(t *testing.T) {
	for _, n := range []int{0, -1} {
		var ve *ember.ValueError
		if err := ember.Try(func() { kvcache.New(n) }); !errors.As(err, &ve) {
			t.Errorf("New(%d): %v", n, err)
		}
	}
	c := kvcache.New(1 << 62)
	if c.Layers() != 1<<62 {
		t.Errorf("Layers %d", c.Layers())
	}
	k := ember.Ones(ember.Shape{1, 1, 2, 4})
	keys, _ := c.Append(0, k, k)
	if keys.Shape()[2] != 2 || c.Len() != 0 {
		t.Errorf("after one layer's append: keys %v, Len %d", keys.Shape(), c.Len())
	}
}
