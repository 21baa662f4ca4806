package optim

import (
	"errors"
	"runtime"
	"testing"

	"github.com/emberml/ember"
)

// raises runs f and returns the typed error it panics with; a Go runtime
// error fails the test.
func raises[E error](t *testing.T, what string, f func()) E {
	t.Helper()
	var zero E
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				e, ok := r.(error)
				if !ok {
					t.Fatalf("%s: panicked with %T %v, want an error", what, r, r)
				}
				err = e
			}
		}()
		f()
	}()
	if err == nil {
		t.Fatalf("%s: did not panic", what)
		return zero
	}
	var re runtime.Error
	if errors.As(err, &re) {
		t.Fatalf("%s: Go runtime error %v", what, err)
	}
	var e E
	if !errors.As(err, &e) {
		t.Fatalf("%s: panicked with %T %v, want %T", what, err, err, zero)
	}
	return e
}

// torch.optim refuses what it cannot update: "optimizer got an empty
// parameter list", "can't optimize a non-leaf Tensor"; and ember, as newer
// PyTorch, integer parameters (Adam's update cannot be held by int64).
func TestOptimizerRefusesParams(t *testing.T) {
	leaf := ember.Zeros(ember.Shape{2}).SetRequiresGrad(true)
	ints := ember.Zeros(ember.Shape{2}, ember.Dtype(ember.Int64))
	mks := map[string]func([]Param) Optimizer{
		"optim.SGD":   func(p []Param) Optimizer { return SGDWith(p, 0.1) },
		"optim.Adam":  func(p []Param) Optimizer { return AdamWith(p) },
		"optim.AdamW": func(p []Param) Optimizer { return AdamWWith(p) },
	}
	for op, mk := range mks {
		de := raises[*ember.DTypeError](t, op+" int64", func() { mk([]Param{{"w", leaf}, {"step", ints}}) })
		if de.Op != op || len(de.DTypes) != 1 || de.DTypes[0] != ember.Int64 || de.Msg != `optimizer can only optimize Tensors of floating point dtype, parameter "step" is int64` {
			t.Errorf("%s: %v", op, de)
		}
		ve := raises[*ember.ValueError](t, op+" non-leaf", func() { mk(Tensors(leaf, leaf.MulScalar(2))) })
		if ve.Op != op || ve.Msg != `can't optimize a non-leaf Tensor (parameter "1" is the output of MulBackward0)` {
			t.Errorf("%s: %v", op, ve)
		}
		ve = raises[*ember.ValueError](t, op+" empty", func() { mk(nil) })
		if ve.Msg != "optimizer got an empty parameter list" {
			t.Errorf("%s: %v", op, ve)
		}
		// a float leaf that does not require grad (a frozen one) and a
		// float16 one are taken, as by torch
		mk(Tensors(ember.Zeros(ember.Shape{2}), ember.Zeros(ember.Shape{2}, ember.Dtype(ember.Float16))))
	}
}
