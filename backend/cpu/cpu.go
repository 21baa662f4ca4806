package cpu

import (
	"fmt"
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/internal/philox"
)

// Backend is the CPU backend.
type Backend struct{}

func init() { backend.Register(Backend{}) }

// Type is cpu.
func (Backend) Type() backend.DeviceType { return backend.CPUType }

// Check accepts cpu (index 0).
func (Backend) Check(dev backend.Device) error {
	if dev.Type != backend.CPUType {
		return fmt.Errorf("cpu backend cannot serve %v", dev)
	}
	return nil
}

// Count is 1.
func (Backend) Count() (int, error) { return 1, nil }

// Alloc returns uninitialised storage: a buffer released earlier when the
// cache holds one of its size class (see SetCacheLimit), else zeroed memory.
// A request larger than the memory left is an error (see checkAlloc).
func (Backend) Alloc(dev backend.Device, dt backend.DType, n int) (backend.Storage, error) {
	if n < 0 || n > math.MaxInt/8 {
		return nil, fmt.Errorf("cpu: cannot allocate %d elements", n)
	}
	if err := checkAlloc(int64(n) * int64(dt.Size())); err != nil {
		return nil, err
	}
	return newStorage(dt, n), nil
}

// FromHost copies data into new storage.
func (Backend) FromHost(dev backend.Device, data any) (backend.Storage, error) {
	var s *Storage
	if err := checkAlloc(hostBytes(data)); err != nil {
		return nil, err
	}
	switch d := data.(type) {
	case []float32:
		s = newStorage(backend.Float32, len(d))
		copy(s.data.([]float32), d)
	case []float64:
		s = newStorage(backend.Float64, len(d))
		copy(s.data.([]float64), d)
	case []int64:
		s = newStorage(backend.Int64, len(d))
		copy(s.data.([]int64), d)
	case []int32:
		s = newStorage(backend.Int32, len(d))
		copy(s.data.([]int32), d)
	case []bool:
		s = newStorage(backend.Bool, len(d))
		copy(s.data.([]bool), d)
	case []backend.BF16:
		s = newStorage(backend.BFloat16, len(d))
		copy(s.data.([]backend.BF16), d)
	case []backend.F16:
		s = newStorage(backend.Float16, len(d))
		copy(s.data.([]backend.F16), d)
	default:
		return nil, fmt.Errorf("cpu: unsupported host data %T", data)
	}
	return s, nil
}

// ToHost copies the storage into dst.
func (Backend) ToHost(src backend.Storage, dst any) error {
	cs, ok := src.(*Storage)
	if !ok || cs.data == nil {
		return fmt.Errorf("cpu: ToHost of a released or foreign storage")
	}
	var n int
	switch d := dst.(type) {
	case []float32:
		n = copy(d, cs.data.([]float32))
	case []float64:
		n = copy(d, cs.data.([]float64))
	case []int64:
		n = copy(d, cs.data.([]int64))
	case []int32:
		n = copy(d, cs.data.([]int32))
	case []bool:
		n = copy(d, cs.data.([]bool))
	case []backend.BF16:
		n = copy(d, cs.data.([]backend.BF16))
	case []backend.F16:
		n = copy(d, cs.data.([]backend.F16))
	default:
		return fmt.Errorf("cpu: ToHost into %T", dst)
	}
	if n != cs.n {
		return fmt.Errorf("cpu: ToHost copied %d of %d elements", n, cs.n)
	}
	return nil
}

// Synchronize has nothing to wait for: the CPU backend is synchronous.
func (Backend) Synchronize(backend.Device) error { return nil }

func notImpl(op string, dt backend.DType) {
	panic(&backend.NotImplementedError{Op: op, Device: backend.CPUType, DType: dt})
}

// Arange writes start + i*step.
func (Backend) Arange(dst backend.View, start, step float64) {
	switch dst.S.DType() {
	case backend.Float32:
		arange(slice[float32](dst.S)[dst.Offset:][:dst.NumElements()], start, step)
	case backend.Float64:
		arange(slice[float64](dst.S)[dst.Offset:][:dst.NumElements()], start, step)
	case backend.Int64:
		arange(slice[int64](dst.S)[dst.Offset:][:dst.NumElements()], start, step)
	case backend.Int32:
		arange(slice[int32](dst.S)[dst.Offset:][:dst.NumElements()], start, step)
	default:
		notImpl("arange", dst.S.DType())
	}
}

func arange[T numT](d []T, start, step float64) {
	for i := range d {
		d[i] = T(start + float64(i)*step)
	}
}

// Random fills from the Philox stream.
func (Backend) Random(dst backend.View, seed, offset uint64, normal bool) {
	n := dst.NumElements()
	cost := 16
	switch dst.S.DType() {
	case backend.Float32:
		d := slice[float32](dst.S)[dst.Offset:][:n]
		parallelFor(n, cost, func(lo, hi int) {
			if normal {
				philox.FillNormal32(d[lo:hi], seed, offset, lo)
			} else {
				philox.FillUniform32(d[lo:hi], seed, offset, lo)
			}
		})
	case backend.Float64:
		d := slice[float64](dst.S)[dst.Offset:][:n]
		parallelFor(n, cost, func(lo, hi int) {
			if normal {
				philox.FillNormal64(d[lo:hi], seed, offset, lo)
			} else {
				philox.FillUniform64(d[lo:hi], seed, offset, lo)
			}
		})
	case backend.BFloat16:
		randomHalf(slice[backend.BF16](dst.S)[dst.Offset:][:n], 8, seed, offset, normal, backend.ToBF16)
	case backend.Float16:
		randomHalf(slice[backend.F16](dst.S)[dst.Offset:][:n], 11, seed, offset, normal, backend.ToF16)
	default:
		notImpl("random", dst.S.DType())
	}
}

// randomHalf fills a two-byte float slice from the Philox stream: uniform
// draws of the type's digits (8 for bfloat16, 11 for float16: k·2^-digits,
// exact, never 1), as PyTorch's rule for these types; normal draws
// computed in float64 and rounded once through float32, as PyTorch's CPU
// normal_ for them (and ember's float32 normals, rounded).
func randomHalf[H halfT](d []H, digits uint, seed, offset uint64, normal bool, enc func(float32) H) {
	parallelFor(len(d), 16, func(lo, hi int) {
		buf := make([]float32, min(hi-lo, 4096))
		for i := lo; i < hi; i += len(buf) {
			b := buf[:min(len(buf), hi-i)]
			if normal {
				philox.FillNormal32(b, seed, offset, i)
			} else {
				philox.FillUniformDigits(b, digits, seed, offset, i)
			}
			for j, v := range b {
				d[i+j] = enc(v)
			}
		}
	})
}

// Softmax over the last dim of contiguous rows.
func (Backend) Softmax(dst, src backend.View, log bool) {
	switch src.S.DType() {
	case backend.Float32:
		softmax(slice[float32](dst.S)[dst.Offset:], slice[float32](src.S)[src.Offset:], dst.Shape, log)
	case backend.Float64:
		softmax(slice[float64](dst.S)[dst.Offset:], slice[float64](src.S)[src.Offset:], dst.Shape, log)
	default:
		notImpl("softmax", src.S.DType())
	}
}

func softmax[T floatT](d, s []T, shape []int, log bool) {
	n := 1
	if len(shape) > 0 {
		n = shape[len(shape)-1]
	}
	total := 1
	for _, x := range shape {
		total *= x
	}
	if n == 0 || total == 0 {
		return
	}
	rows := total / n
	parallelFor(rows, n*8, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			in, out := s[r*n:(r+1)*n], d[r*n:(r+1)*n]
			m := math.Inf(-1)
			for _, x := range in {
				if float64(x) > m || x != x {
					m = float64(x)
				}
			}
			var sum float64
			for i, x := range in {
				e := math.Exp(float64(x) - m)
				sum += e
				if !log {
					out[i] = T(e)
				}
			}
			if log {
				ls := m + math.Log(sum)
				for i, x := range in {
					out[i] = T(float64(x) - ls)
				}
			} else {
				inv := 1 / sum
				for i := range out {
					out[i] = T(float64(out[i]) * inv)
				}
			}
		}
	})
}

func hostBytes(data any) int64 {
	switch d := data.(type) {
	case []float32:
		return 4 * int64(len(d))
	case []float64:
		return 8 * int64(len(d))
	case []int64:
		return 8 * int64(len(d))
	case []int32:
		return 4 * int64(len(d))
	case []backend.BF16:
		return 2 * int64(len(d))
	case []backend.F16:
		return 2 * int64(len(d))
	}
	return 0
}
