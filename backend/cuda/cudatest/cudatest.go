// Package cudatest runs ember's CUDA backend on an emulated device: the
// kernels are the real .cu sources built with g++ (package kernels/emu),
// memory is host memory with a capacity limit, GEMM is a reference product.
// Tests use it to run everything above the driver without a GPU.
package cudatest

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda"
	"github.com/emberml/ember/backend/cuda/kernels"
	"github.com/emberml/ember/backend/cuda/kernels/emu"
	"github.com/emberml/ember/internal/testenv"
)

// emuGPU is a cuda.GPU whose kernels run in the emulator (the same .cu
// sources built with g++) on host memory, with a memory limit so the
// allocator's paths are real. GEMM, which cuBLAS does on a real device, is
// a plain reference product here.
type emuGPU struct {
	lib      *emu.Lib
	capacity uint64
	mu       sync.Mutex
	used     uint64
	sizes    map[uint64]uint64
	mallocs  int
	clock    []time.Time
	streams  int
	host     map[unsafe.Pointer][]byte
}

var errEmuOOM = errors.New("emulated device out of memory")

type oomErr struct{}

func (oomErr) Error() string     { return errEmuOOM.Error() }
func (oomErr) OutOfMemory() bool { return true }

func (g *emuGPU) Name() string { return "ember emulated GPU" }
func (g *emuGPU) Props() kernels.DeviceProps {
	return kernels.DeviceProps{SMCount: 4, MaxThreadsPerBlock: 128, WarpSize: 32, SharedMemPerBlock: 48 << 10}
}

func (g *emuGPU) Malloc(size uint64) (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.used+size > g.capacity {
		return 0, oomErr{}
	}
	p := g.lib.Malloc(int(size))
	g.used += size
	g.sizes[p] = size
	g.mallocs++
	return p, nil
}

func (g *emuGPU) Free(p uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.used -= g.sizes[p]
	delete(g.sizes, p)
	g.lib.Free(p)
	return nil
}

func (g *emuGPU) MemInfo() (uint64, uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.capacity - g.used, g.capacity, nil
}

func (g *emuGPU) HtoD(dst uint64, src unsafe.Pointer, n uint64) error {
	g.lib.CopyIn(dst, unsafe.Slice((*byte)(src), n))
	return nil
}

func (g *emuGPU) DtoH(dst unsafe.Pointer, src uint64, n uint64) error {
	g.lib.CopyOut(unsafe.Slice((*byte)(dst), n), src)
	return nil
}

func (g *emuGPU) Run(l kernels.Launch, _ uintptr) error { return g.lib.Run(l) }

// Streams are trivial: the emulator runs every launch to completion.
func (g *emuGPU) StreamCreate() (uintptr, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.streams++
	return uintptr(g.streams), nil
}
func (g *emuGPU) StreamDestroy(uintptr) error     { return nil }
func (g *emuGPU) StreamSynchronize(uintptr) error { return nil }
func (g *emuGPU) StreamWaitEvent(uintptr, uintptr) error {
	return nil
}
func (g *emuGPU) StreamQuery(uintptr) (bool, error) { return true, nil }

// AllocHost hands out Go memory kept reachable until FreeHost: the emulator
// has no DMA to pin for.
func (g *emuGPU) AllocHost(n uint64) (unsafe.Pointer, error) {
	b := make([]byte, n)
	p := unsafe.Pointer(unsafe.SliceData(b))
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.host == nil {
		g.host = map[unsafe.Pointer][]byte{}
	}
	g.host[p] = b
	return p, nil
}

func (g *emuGPU) FreeHost(p unsafe.Pointer) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.host, p)
	return nil
}

func (g *emuGPU) Synchronize() error                   { return nil }
func (g *emuGPU) RecordEvent(uintptr) (uintptr, error) { return 1, nil }
func (g *emuGPU) EventDone(uintptr) (bool, error)      { return true, nil }
func (g *emuGPU) DestroyEvent(uintptr) error           { return nil }

// Timing events read the wall clock: the emulator runs launches synchronously.
func (g *emuGPU) RecordTimingEvent(uintptr) (uintptr, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.clock = append(g.clock, time.Now())
	return uintptr(len(g.clock)), nil
}
func (g *emuGPU) EventSynchronize(uintptr) error { return nil }
func (g *emuGPU) EventElapsedMs(a, b uintptr) (float64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return float64(g.clock[b-1].Sub(g.clock[a-1]).Nanoseconds()) / 1e6, nil
}

// Gemm reads the operands out, multiplies in float64 and writes C back.
func (g *emuGPU) Gemm(_ uintptr, dt backend.DType, transA, transB bool, m, n, k int, a uint64, lda int, strideA int64, b uint64, ldb int, strideB int64, c uint64, ldc int, strideC int64, batch int) error {
	es := uint64(dt.Size())
	read := func(base uint64, idx int64) float64 {
		buf := make([]byte, es)
		g.lib.CopyOut(buf, base+uint64(idx)*es)
		switch dt {
		case backend.BFloat16:
			return float64(backend.BF16(binary.LittleEndian.Uint16(buf)).Float32())
		case backend.Float16:
			return float64(backend.F16(binary.LittleEndian.Uint16(buf)).Float32())
		}
		if dt == backend.Float32 {
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(buf)))
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(buf))
	}
	for bi := 0; bi < batch; bi++ {
		for i := 0; i < m; i++ {
			row := make([]byte, int(es)*n)
			for j := 0; j < n; j++ {
				var s float64
				for p := 0; p < k; p++ {
					ai := int64(i*lda + p)
					if transA {
						ai = int64(p*lda + i)
					}
					bj := int64(p*ldb + j)
					if transB {
						bj = int64(j*ldb + p)
					}
					s += read(a, int64(bi)*strideA+ai) * read(b, int64(bi)*strideB+bj)
				}
				switch dt {
				case backend.BFloat16: // cublasGemmEx with CUBLAS_COMPUTE_32F: one rounding of the sum
					binary.LittleEndian.PutUint16(row[j*2:], uint16(backend.ToBF16(float32(s))))
				case backend.Float16:
					binary.LittleEndian.PutUint16(row[j*2:], uint16(backend.ToF16(float32(s))))
				case backend.Float32:
					binary.LittleEndian.PutUint32(row[j*4:], math.Float32bits(float32(s)))
				default:
					binary.LittleEndian.PutUint64(row[j*8:], math.Float64bits(s))
				}
			}
			g.lib.CopyIn(c+uint64(int64(bi)*strideC+int64(i*ldc))*es, row)
		}
	}
	return nil
}

type emuOpener struct{ g *emuGPU }

func (o emuOpener) Count() (int, error)        { return 1, nil }
func (o emuOpener) Open(int) (cuda.GPU, error) { return o.g, nil }

var (
	emuOnce sync.Once
	emuLib  *emu.Lib
	emuErr  error
)

// Capacity is the emulated device's memory.
const Capacity = 1 << 30

// Use registers a CUDA backend over the emulator as cuda:0 (one device of
// Capacity bytes) and returns a function that restores the previous CUDA
// backend. It skips t (fails under EMBER_REQUIRE_LIBS=1) without g++.
func Use(t testing.TB) (restore func()) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/g++"); err != nil {
		testenv.NeedLib(t, "g++", err)
	}
	emuOnce.Do(func() { emuLib, emuErr = emu.Load() })
	testenv.NeedLib(t, "g++", emuErr)
	g := &emuGPU{lib: emuLib, capacity: Capacity, sizes: map[uint64]uint64{}}
	prev, _ := backend.Get(backend.CUDAType)
	backend.Register(cuda.New(emuOpener{g}))
	return func() {
		if prev != nil {
			backend.Register(prev)
		}
	}
}
