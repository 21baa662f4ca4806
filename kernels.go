package ember

import "github.com/emberml/ember/backend"

// Kernels says how the ops a backend may implement with kernels of its
// own run: Conv2d, MaxPool2d, AvgPool2d and BatchNorm. Each of them checks
// its arguments, then asks the input's backend for its kernel
// (backend.Convolver, backend.Pooler, backend.BatchNormer) and, where the
// backend has none or the dtype is not floating, runs the generic lowering
// (strided views, copies, MatMul and reductions, which every backend has)
// behind the same signature. Both paths check the same things, record the
// same grad_fn and agree up to rounding.
//
// The package functions (Conv2d, ...) are NativeKernels' methods.
// GenericKernels runs the lowering even where a backend has kernels: the
// conformance suite (package embertest) runs both on every device and
// compares them with each other and with PyTorch, and it can tell a kernel
// bug from a lowering one, as turning cuDNN off does in PyTorch, without a
// process-wide switch.
type Kernels uint8

const (
	// NativeKernels runs the backend's own kernels where it has them and
	// the generic lowering elsewhere (what the package functions do).
	NativeKernels Kernels = iota
	// GenericKernels always runs the generic lowering.
	GenericKernels
)

// String returns "native" or "generic".
func (k Kernels) String() string {
	if k == GenericKernels {
		return "generic"
	}
	return "native"
}

// The kernel providers: one unexported signature per op, taking arguments
// the frontend has checked. The backends' kernels are in
// native_kernels.go, the generic lowering in generic_kernels.go.
type (
	// convKernel runs Conv2d on a 4-D x4; oshape is the output's shape.
	convKernel interface {
		conv2d(x4, w, b *Tensor, p backend.Conv2dParams, oshape Shape) *Tensor
	}
	// poolKernel runs MaxPool2d and AvgPool2d on a 4-D x4 (the stride
	// resolved); oshape is the output's shape.
	poolKernel interface {
		maxPool2d(x4 *Tensor, p backend.Pool2dParams, oshape Shape) *Tensor
		avgPool2d(x4 *Tensor, p backend.Pool2dParams, countIncludePad bool, oshape Shape) *Tensor
	}
	// batchNormKernel runs BatchNorm on a floating x of at least 2 dims,
	// with per-channel operands of C elements (nil where not given) and,
	// outside training, both running statistics.
	batchNormKernel interface {
		batchNorm(x, runningMean, runningVar, weight, bias *Tensor, training bool, momentum, eps float64) *Tensor
	}
)

// conv returns the convolution kernel for x under k.
func (k Kernels) conv(x *Tensor) convKernel {
	if cvr, ok := x.be().(backend.Convolver); ok && k != GenericKernels && x.dtype.IsFloat() {
		return nativeConv{cvr}
	}
	return generic{}
}

// pool returns the pooling kernels for x under k.
func (k Kernels) pool(x *Tensor) poolKernel {
	if pl, ok := x.be().(backend.Pooler); ok && k != GenericKernels && x.dtype.IsFloat() {
		return nativePool{pl}
	}
	return generic{}
}

// convsHalf reports whether k's convolution takes x's two-byte dtype as it
// is, with w and b of that dtype (no float32 copies).
func (k Kernels) convsHalf(x, w, b *Tensor) bool {
	if w == nil || w.dtype != x.dtype || (b != nil && b.dtype != x.dtype) {
		return false
	}
	if _, ok := k.conv(x).(nativeConv); !ok {
		return false
	}
	hc, ok := x.be().(backend.HalfConvolver)
	return ok && hc.ConvsHalf(x.dtype)
}

// poolsHalf reports whether k's max pooling takes x's two-byte dtype as it
// is (no float32 copy).
func (k Kernels) poolsHalf(x *Tensor) bool {
	if _, ok := k.pool(x).(nativePool); !ok {
		return false
	}
	hp, ok := x.be().(backend.HalfPooler)
	return ok && hp.PoolsHalf(x.dtype)
}

// batchNormsHalf reports whether k's batch norm takes x's two-byte dtype
// as it is (float32 per-channel operands, no float32 copy of x).
func (k Kernels) batchNormsHalf(x *Tensor) bool {
	if _, ok := k.batchNorm(x).(nativeBatchNorm); !ok {
		return false
	}
	hb, ok := x.be().(backend.HalfBatchNormer)
	return ok && hb.BatchNormsHalf(x.dtype)
}

// batchNorm returns the batch norm kernel for x under k.
func (k Kernels) batchNorm(x *Tensor) batchNormKernel {
	if bn, ok := x.be().(backend.BatchNormer); ok && k != GenericKernels && x.dtype.IsFloat() {
		return nativeBatchNorm{bn}
	}
	return generic{}
}
