package ember

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/emberml/ember/backend"
)

// Shape is a tensor's size along each dimension.
type Shape []int

// NumElements is the product of the sizes (1 for a scalar shape).
func (s Shape) NumElements() int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// String prints the shape as [2, 3].
func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Equal reports whether two shapes are the same.
func (s Shape) Equal(o Shape) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

func (s Shape) clone() Shape { return append(Shape(nil), s...) }

// storage is shared by a tensor and its views.
type storage struct {
	s        backend.Storage
	b        backend.Backend
	released atomic.Bool
	id       uint64        // in the live-tensor registry (memory.go)
	version  atomic.Uint64 // bumped by in-place ops; autograd checks saved tensors and views' histories against it
}

// Tensor is an n-dimensional array on a device: a strided view of a storage.
// Views (Reshape, Transpose, Narrow, ...) share their base's storage.
type Tensor struct {
	st      *storage
	shape   Shape
	strides []int
	offset  int
	dtype   DType
	dev     Device
	ag      *autograd // nil unless the tensor takes part in autograd
	vw      *viewMeta // the base of a view made by a view op (inplace_views.go); nil otherwise
}

// Shape returns the tensor's shape (a copy).
func (t *Tensor) Shape() Shape { return t.nonNil("shape").shape.clone() }

// Size returns the size of dimension d (negative d counts from the end).
func (t *Tensor) Size(d int) int { return t.nonNil("size").shape[t.indexDim("size", d, noDims(d))] }

// Dim returns the number of dimensions.
func (t *Tensor) Dim() int { return len(t.nonNil("dim").shape) }

// NumElements returns the number of elements.
func (t *Tensor) NumElements() int { return t.nonNil("numel").shape.NumElements() }

// Strides returns the strides in elements (a copy).
func (t *Tensor) Strides() []int { return append([]int(nil), t.nonNil("stride").strides...) }

// DType returns the element type.
func (t *Tensor) DType() DType { return t.nonNil("dtype").dtype }

// Device returns the device the tensor lives on.
func (t *Tensor) Device() Device { return t.nonNil("device").dev }

// IsContiguous reports whether the tensor is row-major without gaps.
func (t *Tensor) IsContiguous() bool { return t.nonNil("is_contiguous").view().IsContiguous() }

func (t *Tensor) view() backend.View {
	return backend.View{S: t.st.s, Shape: t.shape, Strides: t.strides, Offset: t.offset}
}

// nonNil panics with a *ShapeError naming op when t is nil, as an op given
// a nil operand does: every method of a nil *Tensor panics so, except
// String ("<nil tensor>") and Release (nothing to release).
func (t *Tensor) nonNil(op string) *Tensor {
	if t == nil {
		panic(&ShapeError{Op: op, Msg: "nil tensor"})
	}
	if t.st == nil {
		panic(&ShapeError{Op: op, Msg: "the zero Tensor value holds no tensor (make one with Zeros, FromSlice, ...)"})
	}
	return t
}

func (t *Tensor) live(op string) *Tensor {
	if t.nonNil(op).st.released.Load() {
		panic(&ReleasedError{Op: op})
	}
	return t
}

// Release frees the tensor's storage now, without waiting for the garbage
// collector; views sharing it become unusable (using them panics). Releasing
// a nil tensor does nothing.
func (t *Tensor) Release() {
	if t != nil && t.st != nil && t.st.released.CompareAndSwap(false, true) {
		t.st.s.Release()
		untrack(t.st.id)
	}
}

// --- options ---

// Option configures tensor creation.
type Option func(*options)

type options struct {
	dev          Device
	dtype        DType
	dtypeSet     bool
	requiresGrad bool
}

// On places the new tensor on dev.
func On(dev Device) Option { return func(o *options) { o.dev = dev } }

// Dtype sets the new tensor's element type.
func Dtype(dt DType) Option { return func(o *options) { o.dtype, o.dtypeSet = dt, true } }

// WithGrad makes the new tensor a leaf that requires gradients.
func WithGrad() Option { return func(o *options) { o.requiresGrad = true } }

func makeOptions(def DType, opts []Option) options {
	o := options{dev: CPU, dtype: def}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// --- allocation ---

// OutOfMemoryError is the panic of an allocation a device could not serve.
// Err is the allocator's own report (for CUDA: requested, allocated,
// reserved, free and total, as PyTorch prints them); Largest lists the
// device's largest live tensors, with creation sites when EMBER_TRACE_ALLOC=1.
type OutOfMemoryError struct {
	Device  Device
	Bytes   int64
	Err     error
	Largest []TensorInfo
}

func (e *OutOfMemoryError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "out of memory on %v allocating %s: %v", e.Device, FormatBytes(e.Bytes), e.Err)
	if len(e.Largest) > 0 {
		b.WriteString("; largest live tensors:")
		for _, ti := range e.Largest {
			fmt.Fprintf(&b, " %s %v %v", FormatBytes(ti.Bytes), ti.DType, ti.Shape)
			if ti.Site != "" {
				fmt.Fprintf(&b, " at %s", ti.Site)
			}
			b.WriteString(";")
		}
	}
	return strings.TrimSuffix(b.String(), ";")
}

func oomError(dev Device, bytes int64, err error) *OutOfMemoryError {
	e := &OutOfMemoryError{Device: dev, Bytes: bytes, Err: err}
	snap := MemorySnapshot(dev)
	e.Largest = snap.Tensors[:min(3, len(snap.Tensors))]
	return e
}

func (e *OutOfMemoryError) Unwrap() error { return e.Err }

func init() {
	backend.AllocFailed = func(dev Device, bytes int64, err error) error { return allocError(dev, bytes, err) }
}

// allocError is the panic of an allocation (or the copy that fills it) that
// failed: an *OutOfMemoryError, unless the device's error says it is not
// one (a driver error whose OutOfMemory method reports false, such as a
// sticky CUDA_ERROR_ILLEGAL_ADDRESS after a faulting kernel), which is a
// *DeviceError naming it rather than a misleading "out of memory".
func allocError(dev Device, bytes int64, err error) error {
	var o interface{ OutOfMemory() bool }
	if errors.As(err, &o) && !o.OutOfMemory() {
		return &DeviceError{Device: dev, Reason: err}
	}
	return oomError(dev, bytes, err)
}

func empty(shape Shape, dt DType, dev Device) *Tensor {
	b := backendOf(dev)
	n := checkShape("empty", shape)
	checkDType("empty", dt)
	s, err := b.Alloc(dev, dt, n)
	if err != nil {
		panic(allocError(dev, int64(n*dt.Size()), err))
	}
	return &Tensor{
		st:      newStorage(s, b, shape),
		shape:   shape.clone(),
		strides: backend.ContiguousStrides(shape),
		dtype:   dt,
		dev:     dev,
	}
}

func (t *Tensor) be() backend.Backend { return t.st.b }

// Empty returns an uninitialised tensor (zeroed on the CPU, whose
// allocator may hand out a buffer released earlier).
func Empty(shape Shape, opts ...Option) *Tensor {
	o := makeOptions(Float32, opts)
	t := empty(shape, o.dtype, o.dev)
	if o.dev.Type == backend.CPUType {
		t.be().Fill(t.view(), 0)
	}
	return finish(t, o)
}

func finish(t *Tensor, o options) *Tensor {
	if o.requiresGrad {
		t.SetRequiresGrad(true)
	}
	return t
}

// Full returns a tensor filled with v.
func Full(shape Shape, v float64, opts ...Option) *Tensor {
	o := makeOptions(Float32, opts)
	checkFits("full", v, o.dtype)
	t := empty(shape, o.dtype, o.dev)
	t.be().Fill(t.view(), v)
	return finish(t, o)
}

// checkFits panics with a *ValueError when v cannot be stored in dt, as
// PyTorch's checked scalar conversion raises: NaN, an infinity or a value
// outside the range of an integer dtype, a finite value past the largest
// finite value of a floating one (a fractional value is truncated into an
// integer dtype, an infinity kept in a floating one, as PyTorch).
func checkFits(op string, v float64, dt DType) {
	if !fits(v, dt) {
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("value cannot be converted to type %s without overflow", cTypeName(dt))})
	}
}

// cTypeName is the C++ type PyTorch names in its overflow messages.
func cTypeName(dt DType) string {
	return map[DType]string{Int64: "int64_t", Int32: "int", Float32: "float", BFloat16: "at::BFloat16", Float16: "at::Half"}[dt]
}

// fits reports whether checkFits accepts v for dt.
func fits(v float64, dt DType) bool {
	var lo, hi float64
	switch dt {
	case Int64:
		lo, hi = -(1 << 63), 1<<63 // v < 2^63 after truncation
	case Int32:
		lo, hi = math.MinInt32, math.MaxInt32+1
	case Float32:
		lo, hi = -math.MaxFloat32, math.MaxFloat32
	case BFloat16:
		lo, hi = -3.3895313892515355e38, 3.3895313892515355e38
	case Float16:
		lo, hi = -65504, 65504
	default: // Float64 holds every float64; Bool takes any value (v != 0)
		return true
	}
	if dt.IsInt() {
		tv := math.Trunc(v)
		return !(math.IsNaN(v) || tv < lo || tv >= hi)
	}
	return math.IsInf(v, 0) || math.IsNaN(v) || (v >= lo && v <= hi)
}

// Zeros returns a tensor of zeros.
func Zeros(shape Shape, opts ...Option) *Tensor { return Full(shape, 0, opts...) }

// Ones returns a tensor of ones.
func Ones(shape Shape, opts ...Option) *Tensor { return Full(shape, 1, opts...) }

// Scalar returns a zero-dimensional tensor holding v.
func Scalar(v float64, opts ...Option) *Tensor { return Full(Shape{}, v, opts...) }

// ZerosLike returns zeros with t's shape, dtype and device.
func ZerosLike(t *Tensor) *Tensor {
	t.nonNil("zeros_like")
	return Zeros(t.shape, On(t.dev), Dtype(t.dtype))
}

// OnesLike returns ones with t's shape, dtype and device.
func OnesLike(t *Tensor) *Tensor {
	t.nonNil("ones_like")
	return Ones(t.shape, On(t.dev), Dtype(t.dtype))
}

// Arange returns start, start+step, ... up to but excluding end, as
// torch.arange: Int64 when all three are whole numbers, else Float32.
func Arange(start, end, step float64, opts ...Option) *Tensor {
	def := Float32
	if start == math.Trunc(start) && end == math.Trunc(end) && step == math.Trunc(step) {
		def = Int64
	}
	if step == 0 || math.IsNaN(start+end+step) || math.IsInf(start+end+step, 0) {
		panic(&ShapeError{Op: "arange", Msg: fmt.Sprintf("invalid range start=%v end=%v step=%v", start, end, step)})
	}
	nf := math.Ceil((end - start) / step)
	if nf < 0 {
		panic(&ShapeError{Op: "arange", Msg: "upper bound and larger bound inconsistent with step sign"})
	}
	if nf > maxElems {
		panic(&ShapeError{Op: "arange", Msg: fmt.Sprintf("%g elements (start=%v end=%v step=%v) are too many", nf, start, end, step)})
	}
	n := int(nf)
	o := makeOptions(def, opts)
	if o.dtype.IsHalf() { // computed in float32 and rounded, as torch.arange(..., dtype=torch.bfloat16)
		f := empty(Shape{n}, Float32, o.dev)
		f.be().Arange(f.view(), start, step)
		return finish(f.Cast(o.dtype), o)
	}
	t := empty(Shape{n}, o.dtype, o.dev)
	t.be().Arange(t.view(), start, step)
	return finish(t, o)
}

// Linspace returns steps values evenly spaced from start to end inclusive.
func Linspace(start, end float64, steps int, opts ...Option) *Tensor {
	if steps < 0 {
		panic(&ShapeError{Op: "linspace", Msg: "number of steps must be non-negative"})
	}
	o := makeOptions(Float32, opts)
	if o.dtype.IsHalf() {
		v := linspaceHalf(start, end, steps, o.dtype)
		return finish(FromSlice(v, Shape{steps}, On(o.dev), Dtype(o.dtype)), o)
	}
	t := empty(Shape{steps}, o.dtype, o.dev)
	step := 0.0
	if steps > 1 {
		step = (end - start) / float64(steps-1)
	}
	t.be().Arange(t.view(), start, step)
	return finish(t, o)
}

// linspaceHalfWidth is the number of two-byte lanes in the vectors of
// PyTorch 1.13's linspace kernel on an AVX2 CPU (Vectorized<BFloat16> and
// Vectorized<Half> are 256 bits), which linspaceHalf follows.
const linspaceHalfWidth = 16

// linspaceHalf is torch.linspace's values for a bfloat16 or float16
// result, bit for bit those of PyTorch 1.13's CPU kernel (AVX2, one
// thread or up to 32768 steps), whose arithmetic is in the two-byte type:
// start and end are rounded to it, the step is (end - start) / (steps - 1)
// rounded at each operation (steps - 1 too), and element i is start +
// step·i for i < steps/2, else end - step·(steps-1-i), each product and
// sum rounded and the index itself rounded to the type; except that the
// kernel fills whole vectors of linspaceHalfWidth lanes (two at a time,
// while two fit) from their first element's value, base + step·k, the
// rest one at a time. They are not the float32 linspace rounded once:
// with many steps they wander by several units in the last place.
func linspaceHalf(start, end float64, steps int, dt DType) []float32 {
	r := func(x float32) float32 { return float32(backend.ToBF16(x).Float32()) }
	if dt == Float16 {
		r = func(x float32) float32 { return backend.ToF16(x).Float32() }
	}
	checkFits("linspace", start, dt) // PyTorch's Scalar conversion of the bounds
	checkFits("linspace", end, dt)
	out := make([]float32, steps)
	s, e := r(float32(start)), r(float32(end))
	if steps == 1 {
		out[0] = s
	}
	if steps <= 1 {
		return out
	}
	mul := func(a float32, i int) float32 { return r(float32(a * r(float32(i)))) }
	step := r(float32(r(float32(e-s)) / r(float32(steps-1))))
	half := steps / 2
	at := func(i int) float32 { // the kernel's scalar element i
		if i < half {
			return r(float32(s + mul(step, i)))
		}
		return r(float32(e - mul(step, steps-i-1)))
	}
	const w = linspaceHalfWidth
	i := 0
	for ; i <= steps-2*w; i += 2 * w {
		for v := i; v < i+2*w; v += w {
			base := at(v)
			for k := 0; k < w; k++ {
				out[v+k] = r(float32(base + mul(step, k)))
			}
		}
	}
	for ; i < steps; i++ {
		out[i] = at(i)
	}
	return out
}

// Eye returns the n×n identity matrix.
func Eye(n int, opts ...Option) *Tensor {
	o := makeOptions(Float32, opts)
	if n < 0 {
		shapeErr("eye", fmt.Sprintf("n must be greater or equal to 0, got %d", n), Shape{n, n})
	}
	t := empty(Shape{n, n}, o.dtype, o.dev)
	t.be().Fill(t.view(), 0)
	diag := backend.View{S: t.st.s, Shape: []int{n}, Strides: []int{n + 1}}
	t.be().Fill(diag, 1)
	return finish(t, o)
}

// Elem is the set of Go element types a tensor can be built from.
type Elem interface {
	float32 | float64 | int64 | int32 | bool | int
}

// FromSlice returns a tensor holding a copy of data with the given shape
// (nil shape: 1-D). Dtype(...) converts; the default is data's own type
// (Int64 for Go's []int, as torch.tensor([1, 2]) gives).
func FromSlice[T Elem](data []T, shape Shape, opts ...Option) *Tensor {
	if shape == nil {
		shape = Shape{len(data)}
	}
	if checkShape("from_slice", shape) != len(data) {
		shapeErr("from_slice", fmt.Sprintf("%d elements do not fill shape %v", len(data), shape), shape)
	}
	var host any
	var dt DType
	switch d := any(data).(type) {
	case []float32:
		host, dt = d, Float32
	case []float64:
		host, dt = d, Float64
	case []int64:
		host, dt = d, Int64
	case []int32:
		host, dt = d, Int32
	case []bool:
		host, dt = d, Bool
	case []int: // Go's int: stored as Int64, as torch.tensor([1, 2])
		v := make([]int64, len(d))
		for i, x := range d {
			v[i] = int64(x)
		}
		host, dt = v, Int64
	}
	o := makeOptions(dt, opts)
	b := backendOf(o.dev)
	s, err := b.FromHost(o.dev, host)
	if err != nil {
		panic(allocError(o.dev, int64(len(data)*dt.Size()), err))
	}
	t := &Tensor{st: newStorage(s, b, shape), shape: shape.clone(), strides: backend.ContiguousStrides(shape), dtype: dt, dev: o.dev}
	if o.dtype != dt {
		t = t.Cast(o.dtype)
	}
	return finish(t, o)
}
