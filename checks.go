package ember

import (
	"sync"

	"github.com/emberml/ember/backend"
)

// Deferred checks are ember's device-side asserts. An op whose inputs are
// invalid only for some element values (an integer division by zero, a
// class target out of range) checks them at once on the CPU; on a device
// that queues work (CUDA) that check would cost a synchronisation in every
// call, so the op queues a 0-d Bool "bad" tensor instead, computed on the
// device, and the next read to the host from that device (Item, Float32s,
// Data, To(CPU), ...) reads every pending check and panics with the first
// failed one's error (Synchronize returns it), as PyTorch reports a
// device-side assert at the next synchronisation. A failed check is
// reported once.

type deferredCheck struct {
	bad *Tensor      // 0-d Bool on the device: true when the inputs were invalid
	err func() error // the error to panic with
}

var deferred struct {
	mu sync.Mutex
	m  map[Device][]deferredCheck
}

// checkValues panics with err() at once on the CPU when bad() is true, and
// defers the check on devices that queue work; meta tensors are not checked.
func checkValues(dev Device, bad func() *Tensor, err func() error) {
	switch dev.Type {
	case backend.MetaType:
		return
	case backend.CPUType:
		if bad().Item() != 0 {
			panic(err())
		}
		return
	}
	b := bad()
	unscoped(b)
	deferred.mu.Lock()
	if deferred.m == nil {
		deferred.m = map[Device][]deferredCheck{}
	}
	deferred.m[dev] = append(deferred.m[dev], deferredCheck{bad: b, err: err})
	deferred.mu.Unlock()
}

// flushChecks reads the checks pending on dev (after a synchronisation, so
// cheaply) and returns the first failed one's error.
func flushChecks(dev Device) error {
	deferred.mu.Lock()
	cs := deferred.m[dev]
	if len(cs) == 0 {
		deferred.mu.Unlock()
		return nil
	}
	delete(deferred.m, dev)
	deferred.mu.Unlock()
	var failed error
	for _, c := range cs {
		host := make([]bool, 1)
		if err := c.bad.be().ToHost(c.bad.st.s, host); err == nil && host[0] && failed == nil {
			failed = c.err()
		}
		c.bad.Release()
	}
	return failed
}
