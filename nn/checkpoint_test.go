package nn_test

import (
	"errors"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// TestCheckpointSequential: checkpointed in segments (dropout in
// training mode inside), a Sequential's output and every gradient equal
// those of the plain forward with the same seed, bit for bit.
func TestCheckpointSequential(t *testing.T) {
	ember.ManualSeed(4)
	s := nn.NewSequential(nn.NewLinear(6, 12, true), nn.NewReLU(), nn.NewDropout(0.4),
		nn.NewLinear(12, 12, true), nn.NewTanh(), nn.NewDropout(0.2), nn.NewLinear(12, 3, true))
	s.Train(true)
	x0 := ember.Randn(ember.Shape{5, 6})
	run := func(segments int) []*ember.Tensor {
		for _, p := range s.Parameters() {
			p.SetGrad(nil)
		}
		x := x0.Clone().SetRequiresGrad(true)
		ember.ManualSeed(9)
		var y *ember.Tensor
		if segments == 0 {
			y = s.Forward(x)
		} else {
			y = nn.CheckpointSequential(s.Layers, segments, x)
		}
		y.Mul(y).Sum().Backward()
		out := []*ember.Tensor{y, x.Grad()}
		for _, p := range s.Parameters() {
			out = append(out, p.Grad())
		}
		return out
	}
	want := run(0)
	for _, seg := range []int{1, 2, 3, 7} {
		for i, g := range run(seg) {
			if g == nil || !ember.Equal(g, want[i]) {
				t.Fatalf("segments %d: tensor %d differs from the plain forward", seg, i)
			}
		}
	}
	var ve *ember.ValueError
	for _, seg := range []int{0, 8} {
		if err := ember.Try(func() { nn.CheckpointSequential(s.Layers, seg, x0) }); !errors.As(err, &ve) {
			t.Fatalf("segments %d: %v", seg, err)
		}
	}
	var me *nn.ModuleError
	if err := ember.Try(func() { nn.CheckpointSequential([]nn.Module{nil}, 1, x0) }); !errors.As(err, &me) {
		t.Fatalf("nil layer: %v", err)
	}
}
