// Package backend defines what a device backend provides to ember: storage
// on a device, copies to and from the host, and the kernels the tensor ops
// are built from. The ember package checks devices, shapes and dtypes, then
// calls these methods; a backend trusts its arguments.
//
// Every kernel works on Views: a storage plus shape, strides and offset, in
// elements. Operands of an elementwise kernel have the shape of the output
// already (broadcast dimensions carry stride 0), so one indexing scheme
// serves contiguous, transposed, sliced and broadcast operands alike.
//
// A backend may be asynchronous: kernels may only queue work. Reading data to
// the host (ToHost) waits for the work queued before it; Synchronize waits
// for everything.
package backend

import (
	"fmt"
	"sort"
	"sync"
)

//go:generate go run ./internal/opgen

// Storage is a block of elements of one dtype on one device.
type Storage interface {
	Device() Device
	DType() DType
	Len() int // number of elements
	// Release frees the memory now. The storage must not be used afterwards.
	Release()
}

// View is a strided window on a storage. Strides and Offset count elements.
type View struct {
	S       Storage
	Shape   []int
	Strides []int
	Offset  int
}

// NumElements is the product of the view's shape.
func (v View) NumElements() int { return numel(v.Shape) }

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// IsContiguous reports whether the view is row-major without gaps.
func (v View) IsContiguous() bool {
	want := 1
	for i := len(v.Shape) - 1; i >= 0; i-- {
		if v.Shape[i] != 1 && v.Strides[i] != want {
			return false
		}
		want *= v.Shape[i]
	}
	return true
}

// ContiguousStrides returns the row-major strides of shape.
func ContiguousStrides(shape []int) []int {
	st := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= shape[i]
	}
	return st
}

// Backend is one kind of device.
type Backend interface {
	// Type is the device type served.
	Type() DeviceType
	// Check returns nil when dev can be used, or an error that says why not
	// (no driver, no such index, ...).
	Check(dev Device) error
	// Count returns the number of devices of this type, with the reason when 0.
	Count() (int, error)

	// Alloc returns uninitialised storage for n elements.
	Alloc(dev Device, dt DType, n int) (Storage, error)
	// FromHost returns new storage holding a copy of data, a []float32,
	// []float64, []int64, []int32, []bool, []BF16 or []F16.
	FromHost(dev Device, data any) (Storage, error)
	// ToHost copies the whole storage into dst, a slice of the storage's
	// Go type and length. It waits for the work queued before it.
	ToHost(src Storage, dst any) error
	// Synchronize waits for all work queued on dev.
	Synchronize(dev Device) error

	// Fill sets every element of dst to v (converted to dst's dtype).
	Fill(dst View, v float64)
	// Copy copies src into dst elementwise, converting dtypes. Shapes are equal.
	Copy(dst, src View)
	// Unary applies op with parameters p (the op table's Params, in
	// order). src has a dtype the op supports (op.Supports); dst has src's
	// dtype, or Bool for predicates and logical ops (op.Class().BoolOut()).
	Unary(op UnaryOp, dst, src View, p Params)
	// Binary applies op to a and b, which share a dtype that op supports
	// (ember promotes first) and the shape of dst; dst is Bool for
	// comparisons and logical ops, else of a's dtype.
	Binary(op BinaryOp, dst, a, b View)
	// Where writes a where cond (Bool) is true, else b. All have dst's shape.
	Where(dst, cond, a, b View)
	// Reduce reduces src over the dims where dst has size 1 and src does
	// not (dst has src's rank). ArgMax/ArgMin take exactly one such dim and
	// write Int64; Any/All write Bool; the others write src's dtype.
	Reduce(op ReduceOp, dst, src View)
	// MatMul computes dst[i] = a[i] @ b[i] over a batch: a is [B, M, K],
	// b is [B, K, N] (any strides, batch strides may be 0), dst is a
	// contiguous [B, M, N]. Floating dtypes.
	MatMul(dst, a, b View)
	// Softmax over the last dim of a contiguous src into a contiguous dst
	// (log-softmax when log is set).
	Softmax(dst, src View, log bool)
	// Arange writes start + i*step at element i of a contiguous dst.
	Arange(dst View, start, step float64)
	// Random fills a contiguous floating dst from Philox4x32-10 keyed by
	// seed, starting at counter offset: uniform [0,1) or standard normal.
	// Element i uses counter offset + i/4, lane i%4 (ember/internal/philox
	// defines the stream) so every backend draws the same numbers.
	Random(dst View, seed, offset uint64, normal bool)
	// Indexer: gather, scatter, scan and sort (index.go).
	Indexer
}

var (
	regMu    sync.RWMutex
	registry = map[DeviceType]Backend{}
)

// Register makes b the backend of its device type. Backends register in init.
func Register(b Backend) {
	regMu.Lock()
	defer regMu.Unlock()
	registry[b.Type()] = b
}

// Get returns the backend of a device type, if one is registered.
func Get(t DeviceType) (Backend, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	b, ok := registry[t]
	return b, ok
}

// Types lists the registered device types in order.
func Types() []DeviceType {
	regMu.RLock()
	defer regMu.RUnlock()
	var ts []DeviceType
	for t := range registry {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts
}

// NotImplementedError is what a backend panics with for an op it lacks,
// so that a missing op says so instead of crashing.
type NotImplementedError struct {
	Op     string
	Device DeviceType
	DType  DType
}

func (e *NotImplementedError) Error() string {
	return fmt.Sprintf("%s is not implemented on %s for %s", e.Op, e.Device, e.DType)
}

// Coalesce simplifies an iteration space shared by several operands: it
// drops size-1 dims and merges neighbours that are contiguous with each
// other in every operand, so most real cases become one or two dims. A
// single element becomes shape [1] with stride 0. Every backend's
// elementwise and reduction kernels iterate over its result.
func Coalesce(shape []int, strides ...[]int) ([]int, [][]int) {
	var cs []int
	cst := make([][]int, len(strides))
	for i, d := range shape {
		if d == 1 {
			continue
		}
		if n := len(cs); n > 0 {
			merge := true
			for k, st := range strides {
				if cst[k][n-1] != st[i]*d {
					merge = false
					break
				}
			}
			if merge {
				cs[n-1] *= d
				for k, st := range strides {
					cst[k][n-1] = st[i]
				}
				continue
			}
		}
		cs = append(cs, d)
		for k, st := range strides {
			cst[k] = append(cst[k], st[i])
		}
	}
	if len(cs) == 0 {
		cs = []int{1}
		for k := range strides {
			cst[k] = []int{0}
		}
	}
	return cs, cst
}
