package ember

import "github.com/emberml/ember/backend"

// UnsafeView returns t's storage with t's shape, strides and offset (in
// elements), for packages that hand a tensor's memory to code of their own
// without a copy (dist's collectives): the storage may implement
// backend.HostStorage (CPU memory) or backend.DeviceStorage (device memory).
//
// It is unsafe: nothing checks what is done through the view. No device,
// dtype, shape or bounds check guards it, queued work on t is not waited
// for (on an asynchronous device, order accesses with t's stream), and
// autograd does not see writes through it. After writing t's elements
// through the view, call written: it bumps t's version, as an in-place op
// does, so that backward refuses a saved tensor that changed (written does
// nothing for meta tensors). The view must not be used after t's storage is
// released. UnsafeView panics, as any op does, on a released tensor.
func UnsafeView(t *Tensor) (v backend.View, written func()) {
	t.live("unsafe_view")
	return t.view(), func() {
		if t.dev.Type != MetaType {
			t.st.version.Add(1)
		}
	}
}
