package ember

import (
	"errors"
	"testing"
)

// TestDeferredChecks checks the device-side asserts: on the CPU a bad value
// panics in the op; on a device that queues work (the emulated cuda:0 in
// TestOnEmulatedCUDA) the op returns and the next read from the device
// panics, once, with the same typed error.
func TestDeferredChecks(t *testing.T) {
	for _, dev := range testDevices() {
		a := FromSlice([]int64{5, 3}, Shape{2}, On(dev))
		zero := FromSlice([]int64{2, 0}, Shape{2}, On(dev))
		var out *Tensor
		err := Try(func() { out = a.Remainder(zero) })
		if dev == CPU {
			var ve *ValueError
			if !errors.As(err, &ve) {
				t.Fatalf("remainder by 0 on the CPU: %v, want a *ValueError at once", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("remainder by 0 on %v panicked in the op (%v): the check should wait for a read", dev, err)
		}
		err = Try(func() { out.Int64s() })
		var ve *ValueError
		if !errors.As(err, &ve) {
			t.Fatalf("read after remainder by 0 on %v: %v, want a *ValueError", dev, err)
		}
		if got := a.Add(a).Int64s(); got[0] != 10 || got[1] != 6 {
			t.Fatalf("a later read on %v: %v, want [10 6] (a failed check is reported once)", dev, got)
		}
		logits := Zeros(Shape{2, 3}, On(dev))
		Scope(func() { CrossEntropy(logits, FromSlice([]int64{0, 3}, Shape{2}, On(dev)), 0, "mean") })
		if err := Synchronize(dev); !errors.As(err, &ve) {
			t.Fatalf("Synchronize after an out-of-range target on %v: %v, want a *ValueError", dev, err)
		}
		if err := Synchronize(dev); err != nil {
			t.Fatalf("second Synchronize on %v: %v (a failed check is reported once)", dev, err)
		}
	}
}
