// Package cuda is ember's CUDA backend. Storage lives in device memory
// served by a caching allocator; elementwise ops, reductions, softmax and
// random numbers are CUDA C kernels compiled by NVRTC at run time (package
// kernels); matrix products go to cuBLAS. No cgo: every NVIDIA library is
// opened at run time, so the package builds and registers on any machine and
// reports why CUDA is unusable where it is.
//
// Everything talks to a device through the GPU interface, so tests run the
// whole backend against an emulated device (the same kernel sources built
// with g++) and the ember conformance suite passes on "cuda" without a GPU.
package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/alloc"
	"github.com/emberml/ember/backend/cuda/kernels"
)

// Backend serves cuda:N devices through an Opener.
type Backend struct {
	opener Opener
	mu     sync.Mutex
	devs   map[int]*device
	errs   map[int]error
}

// New returns a backend over opener.
func New(opener Opener) *Backend {
	return &Backend{opener: opener, devs: map[int]*device{}, errs: map[int]error{}}
}

func init() { backend.Register(New(realOpener{})) }

type device struct {
	index  int
	gpu    GPU
	pool   *alloc.Allocator
	stream atomic.Uintptr // the current stream: work and allocations go there
}

// Type is cuda.
func (b *Backend) Type() backend.DeviceType { return backend.CUDAType }

// Count returns the number of devices, with the reason when there are none.
func (b *Backend) Count() (int, error) { return b.opener.Count() }

// Check opens the device (once) and reports why it cannot be used.
func (b *Backend) Check(dev backend.Device) error {
	_, err := b.device(dev.Index)
	return err
}

func (b *Backend) device(i int) (*device, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d, ok := b.devs[i]; ok {
		return d, nil
	}
	if err, ok := b.errs[i]; ok {
		return nil, err
	}
	n, err := b.opener.Count()
	if err == nil && (i < 0 || i >= n) {
		err = fmt.Errorf("invalid device ordinal %d: %d CUDA device(s) present", i, n)
	}
	var g GPU
	if err == nil {
		g, err = b.opener.Open(i)
	}
	if err != nil {
		b.errs[i] = err
		return nil, err
	}
	d := &device{index: i, gpu: g}
	// On a failed device allocation the allocator frees its cache, then
	// runs the GC so cleanups release unreachable tensors, then retries once.
	d.pool = alloc.New(allocDevice{g}, alloc.Options{Device: i})
	d.pool.SetBeforeRetry(func() { collectDropped(d.pool) })
	b.devs[i] = d
	return d, nil
}

// collectDropped runs the garbage collector so that the cleanups of
// unreachable storages return their blocks, and gives those cleanups, which
// run on their own goroutine after the collection, time to do so: it waits
// until two collections in a row free nothing (at most about 0.1 s, on an
// allocation that failed anyway; a loaded host may run the cleanups late).
func collectDropped(p *alloc.Allocator) {
	allocated := func() int64 { return p.Stats().AllocatedBytes[alloc.StatAll].Current }
	idle := 0
	for i := 0; i < 16 && idle < 2; i++ {
		before := allocated()
		runtime.GC()
		time.Sleep(time.Duration(i+1) * 500 * time.Microsecond)
		if allocated() == before {
			idle++
		} else {
			idle = 0
		}
	}
}

func (b *Backend) mustDevice(i int) *device {
	d, err := b.device(i)
	if err != nil {
		panic(err)
	}
	return d
}

// allocDevice adapts a GPU to the allocator's Device interface.
type allocDevice struct{ g GPU }

func (a allocDevice) Malloc(size uint64) (uint64, error)          { return a.g.Malloc(size) }
func (a allocDevice) Free(ptr uint64) error                       { return a.g.Free(ptr) }
func (a allocDevice) MemInfo() (uint64, uint64, error)            { return a.g.MemInfo() }
func (a allocDevice) RecordEvent(stream uintptr) (uintptr, error) { return a.g.RecordEvent(stream) }
func (a allocDevice) EventDone(ev uintptr) (bool, error)          { return a.g.EventDone(ev) }
func (a allocDevice) DestroyEvent(ev uintptr) error               { return a.g.DestroyEvent(ev) }
func (a allocDevice) SynchronizeDevice() error                    { return a.g.Synchronize() }

// Storage is a block of device memory.
type Storage struct {
	dev *device
	blk *alloc.Block
	ptr uint64
	dt  backend.DType
	n   int
	// released is shared with the GC cleanup; it is allocated apart from
	// the Storage, since a cleanup argument pointing into the Storage would
	// keep it reachable and the cleanup would never run.
	released *atomic.Bool
}

// Device returns cuda:N.
func (s *Storage) Device() backend.Device {
	return backend.Device{Type: backend.CUDAType, Index: s.dev.index}
}

// DType is the element type.
func (s *Storage) DType() backend.DType { return s.dt }

// Len is the number of elements.
func (s *Storage) Len() int { return s.n }

// Ptr is the device address.
func (s *Storage) Ptr() uint64 { return s.ptr }

var (
	_ backend.DeviceStorage = (*Storage)(nil)
	_ backend.DeviceQueue   = (*Backend)(nil)
)

// Release returns the block to the caching allocator now.
func (s *Storage) Release() {
	if s.released.CompareAndSwap(false, true) && s.blk != nil {
		_ = s.dev.pool.Free(s.blk) // only a foreign or double-freed block errs, which released prevents
	}
}

func storageOf(s backend.Storage) *Storage {
	cs, ok := s.(*Storage)
	if !ok {
		panic(fmt.Sprintf("cuda: storage from another backend (%T)", s))
	}
	if cs.released.Load() {
		panic("cuda: use of released storage")
	}
	return cs
}

// Alloc returns uninitialised device storage from the caching allocator.
func (b *Backend) Alloc(dev backend.Device, dt backend.DType, n int) (backend.Storage, error) {
	d, err := b.device(dev.Index)
	if err != nil {
		return nil, err
	}
	size := uint64(n * dt.Size()) // 0 gives a nil block, as PyTorch's null pointer
	blk, err := d.pool.Malloc(size, d.current())
	if err != nil {
		return nil, err
	}
	s := &Storage{dev: d, blk: blk, dt: dt, n: n, released: new(atomic.Bool)}
	if blk != nil {
		s.ptr = blk.Ptr()
	}
	// A safety net only: Release frees at once; the GC is not meant to.
	runtime.AddCleanup(s, func(r releaser) { r.release() }, releaser{d.pool, blk, s.released})
	return s, nil
}

type releaser struct {
	pool     *alloc.Allocator
	blk      *alloc.Block
	released *atomic.Bool
}

func (r releaser) release() {
	if r.released.CompareAndSwap(false, true) && r.blk != nil {
		_ = r.pool.Free(r.blk)
	}
}

func hostBytes(data any) (unsafe.Pointer, backend.DType, int) {
	switch d := data.(type) {
	case []float32:
		return unsafe.Pointer(unsafe.SliceData(d)), backend.Float32, len(d)
	case []float64:
		return unsafe.Pointer(unsafe.SliceData(d)), backend.Float64, len(d)
	case []int64:
		return unsafe.Pointer(unsafe.SliceData(d)), backend.Int64, len(d)
	case []int32:
		return unsafe.Pointer(unsafe.SliceData(d)), backend.Int32, len(d)
	case []bool:
		return unsafe.Pointer(unsafe.SliceData(d)), backend.Bool, len(d)
	case []backend.BF16:
		return unsafe.Pointer(unsafe.SliceData(d)), backend.BFloat16, len(d)
	case []backend.F16:
		return unsafe.Pointer(unsafe.SliceData(d)), backend.Float16, len(d)
	}
	return nil, 0, -1
}

// FromHost copies host data to new device storage.
func (b *Backend) FromHost(dev backend.Device, data any) (backend.Storage, error) {
	p, dt, n := hostBytes(data)
	if n < 0 {
		return nil, fmt.Errorf("cuda: unsupported host data %T", data)
	}
	s, err := b.Alloc(dev, dt, n)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		cs := s.(*Storage)
		err = cs.dev.gpu.HtoD(cs.ptr, p, uint64(n*dt.Size()))
		runtime.KeepAlive(data)
		runtime.KeepAlive(cs)
		if err != nil {
			s.Release()
			return nil, err
		}
	}
	return s, nil
}

// ToHost copies device storage into dst, waiting for queued work.
func (b *Backend) ToHost(src backend.Storage, dst any) error {
	cs := storageOf(src)
	p, dt, n := hostBytes(dst)
	if n != cs.n || dt != cs.dt {
		return fmt.Errorf("cuda: ToHost into %T of length %d from %v storage of %d", dst, n, cs.dt, cs.n)
	}
	if n == 0 {
		return nil
	}
	err := cs.dev.gpu.DtoH(p, cs.ptr, uint64(n*dt.Size()))
	runtime.KeepAlive(dst)
	runtime.KeepAlive(cs)
	return err
}

// Synchronize waits for all work queued on dev.
func (b *Backend) Synchronize(dev backend.Device) error {
	d, err := b.device(dev.Index)
	if err != nil {
		return err
	}
	return d.gpu.Synchronize()
}

func operand(v backend.View) kernels.Operand {
	s := storageOf(v.S)
	return kernels.Operand{Ptr: s.ptr, DType: s.dt, Shape: v.Shape, Strides: v.Strides, Offset: v.Offset}
}

func devOf(v backend.View) *device { return storageOf(v.S).dev }

// run queues a plan's launches, panicking with the driver's error (a kernel
// failure is misuse of the device or a bug, like a failed CUDA launch in PyTorch).
// keep are the views whose device addresses the launches use: they stay
// reachable until the launches are queued, since a storage the GC collects
// gives its block back to the allocator, and once the launches are queued
// on the stream, the allocator's stream order protects the block.
func run(d *device, ls []kernels.Launch, keep ...backend.View) {
	st := d.current()
	for _, l := range ls {
		if err := d.gpu.Run(l, st); err != nil {
			panic(fmt.Errorf("cuda:%d: launching %s: %w", d.index, l.Kernel, err))
		}
	}
	runtime.KeepAlive(keep)
}

// Fill sets every element.
func (b *Backend) Fill(dst backend.View, v float64) {
	d := devOf(dst)
	run(d, kernels.Fill(d.gpu.Props(), operand(dst), v), dst)
}

// Copy copies with conversion.
func (b *Backend) Copy(dst, src backend.View) {
	d := devOf(dst)
	run(d, kernels.Copy(d.gpu.Props(), operand(dst), operand(src)), dst, src)
}

// Unary applies an elementwise function.
func (b *Backend) Unary(op backend.UnaryOp, dst, src backend.View, p backend.Params) {
	d := devOf(dst)
	run(d, kernels.Unary(d.gpu.Props(), op, operand(dst), operand(src), p), dst, src)
}

// Binary applies an elementwise function of two operands.
func (b *Backend) Binary(op backend.BinaryOp, dst, x, y backend.View) {
	d := devOf(dst)
	run(d, kernels.Binary(d.gpu.Props(), op, operand(dst), operand(x), operand(y)), dst, x, y)
}

// Where selects elementwise.
func (b *Backend) Where(dst, cond, x, y backend.View) {
	d := devOf(dst)
	run(d, kernels.Where(d.gpu.Props(), operand(dst), operand(cond), operand(x), operand(y)), dst, cond, x, y)
}

// Reduce reduces over the dims where dst has size 1.
func (b *Backend) Reduce(op backend.ReduceOp, dst, src backend.View) {
	d := devOf(dst)
	run(d, kernels.Reduce(d.gpu.Props(), op, operand(dst), operand(src)), dst, src)
}

// Softmax over the last dim.
func (b *Backend) Softmax(dst, src backend.View, log bool) {
	d := devOf(dst)
	run(d, kernels.Softmax(d.gpu.Props(), operand(dst), operand(src), log), dst, src)
}

// Arange writes start + i*step.
func (b *Backend) Arange(dst backend.View, start, step float64) {
	d := devOf(dst)
	run(d, kernels.Arange(d.gpu.Props(), operand(dst), start, step), dst)
}

// Random fills from the Philox stream.
func (b *Backend) Random(dst backend.View, seed, offset uint64, normal bool) {
	d := devOf(dst)
	run(d, kernels.Random(d.gpu.Props(), operand(dst), seed, offset, normal), dst)
}

// MatMul runs a strided-batched GEMM through cuBLAS; operands whose inner
// strides GEMM cannot take are first made contiguous on the device.
func (b *Backend) MatMul(dst, x, y backend.View) {
	d := devOf(dst)
	dt := storageOf(x.S).dt
	if !dt.IsFloat() {
		panic(&backend.NotImplementedError{Op: "matmul", Device: backend.CUDAType, DType: dt})
	}
	bs, m, k, n := x.Shape[0], x.Shape[1], x.Shape[2], y.Shape[2]
	ta, lda, okA := backend.GemmOperand(m, k, x.Strides[1], x.Strides[2])
	tb, ldb, okB := backend.GemmOperand(k, n, y.Strides[1], y.Strides[2])
	var tmp []backend.Storage
	defer func() {
		for _, s := range tmp {
			s.Release()
		}
	}()
	pack := func(v backend.View) backend.View {
		dev := backend.Device{Type: backend.CUDAType, Index: d.index}
		s, err := b.Alloc(dev, dt, v.NumElements())
		if err != nil {
			backend.AllocPanic(dev, int64(v.NumElements()*dt.Size()), err)
		}
		tmp = append(tmp, s)
		c := backend.View{S: s, Shape: v.Shape, Strides: backend.ContiguousStrides(v.Shape)}
		b.Copy(c, v)
		return c
	}
	if !okA {
		x = pack(x)
		ta, lda = false, k
	}
	if !okB {
		y = pack(y)
		tb, ldb = false, n
	}
	es := int64(dt.Size())
	xs, ys, ds := storageOf(x.S), storageOf(y.S), storageOf(dst.S)
	err := d.gpu.Gemm(d.current(), dt, ta, tb, m, n, k,
		xs.ptr+uint64(int64(x.Offset)*es), lda, int64(x.Strides[0]),
		ys.ptr+uint64(int64(y.Offset)*es), ldb, int64(y.Strides[0]),
		ds.ptr+uint64(int64(dst.Offset)*es), n, int64(m*n), bs)
	runtime.KeepAlive(xs) // reachable until the product is queued (see run)
	runtime.KeepAlive(ys)
	runtime.KeepAlive(ds)
	if err != nil {
		panic(fmt.Errorf("cuda:%d: matmul: %w", d.index, err))
	}
}

// RealOpener opens devices through the NVIDIA driver (the default).
func RealOpener() Opener { return realOpener{} }
