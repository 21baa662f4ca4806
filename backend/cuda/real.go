package cuda

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/kcache"
	"github.com/emberml/ember/backend/cuda/kernels"
	"github.com/emberml/ember/internal/cuda/cublas"
	"github.com/emberml/ember/internal/cuda/driver"
	"github.com/emberml/ember/internal/cuda/nvrtc"
)

// realOpener opens devices through libcuda.
type realOpener struct{}

var (
	loadOnce sync.Once
	drv      *driver.Driver
	drvErr   error
)

func loadDriver() (*driver.Driver, error) {
	loadOnce.Do(func() {
		drv, drvErr = driver.Load()
		if drvErr == nil {
			drvErr = drv.Init()
		}
	})
	return drv, drvErr
}

func (realOpener) Count() (int, error) {
	d, err := loadDriver()
	if err != nil {
		return 0, err
	}
	n, err := d.DeviceGetCount()
	if err == nil && n == 0 {
		err = errors.New("the driver reports no CUDA device")
	}
	return n, err
}

func (realOpener) Open(i int) (GPU, error) {
	d, err := loadDriver()
	if err != nil {
		return nil, err
	}
	ctx, err := d.PrimaryContext(i)
	if err != nil {
		return nil, err
	}
	g := &realGPU{drv: d, ctx: ctx, modules: map[string]*module{}}
	err = ctx.Do(func() error {
		dev := ctx.Device
		name, err := d.DeviceGetName(dev)
		if err != nil {
			return err
		}
		g.name = name
		g.major, g.minor, err = d.DeviceComputeCapability(dev)
		if err != nil {
			return err
		}
		attrs := []struct {
			a driver.DeviceAttribute
			p *int
		}{
			{driver.AttrMultiprocessorCount, &g.props.SMCount},
			{driver.AttrMaxThreadsPerBlock, &g.props.MaxThreadsPerBlock},
			{driver.AttrWarpSize, &g.props.WarpSize},
			{driver.AttrMaxSharedMemoryPerBlock, &g.props.SharedMemPerBlock},
		}
		for _, at := range attrs {
			v, err := d.DeviceGetAttribute(at.a, dev)
			if err != nil {
				return err
			}
			*at.p = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

type module struct {
	mod   driver.Module
	funcs map[string]driver.Function // name expression → function
	err   error
}

// realGPU issues every call on the device context's locked OS thread.
type realGPU struct {
	drv          *driver.Driver
	ctx          *driver.Context
	name         string
	major, minor int
	props        kernels.DeviceProps

	mu      sync.Mutex
	modules map[string]*module
	blas    *cublas.Handle
	blasErr error
}

func (g *realGPU) Name() string               { return g.name }
func (g *realGPU) Props() kernels.DeviceProps { return g.props }

func (g *realGPU) Malloc(size uint64) (p uint64, err error) {
	err = g.ctx.Do(func() error {
		dp, err := g.drv.MemAlloc(size)
		p = uint64(dp)
		return err
	})
	return p, err
}

func (g *realGPU) Free(p uint64) error {
	return g.ctx.Do(func() error { return g.drv.MemFree(driver.DevicePtr(p)) })
}

func (g *realGPU) MemInfo() (free, total uint64, err error) {
	err = g.ctx.Do(func() error {
		free, total, err = g.drv.MemGetInfo()
		return err
	})
	return free, total, err
}

func (g *realGPU) HtoD(dst uint64, src unsafe.Pointer, n uint64) error {
	return g.ctx.Do(func() error { return g.drv.MemcpyHtoD(driver.DevicePtr(dst), src, n) })
}

func (g *realGPU) DtoH(dst unsafe.Pointer, src uint64, n uint64) error {
	return g.ctx.Do(func() error { return g.drv.MemcpyDtoH(dst, driver.DevicePtr(src), n) })
}

func (g *realGPU) Synchronize() error {
	return g.ctx.Do(func() error { return g.drv.CtxSynchronize() })
}

func (g *realGPU) RecordEvent(stream uintptr) (ev uintptr, err error) {
	err = g.ctx.Do(func() error {
		ev, err = recordNewEvent(g.drv, driver.EventDisableTiming, stream)
		return err
	})
	return ev, err
}

// eventAPI is the part of the driver recordNewEvent calls.
type eventAPI interface {
	EventCreate(flags uint32) (driver.Event, error)
	EventRecord(ev driver.Event, s driver.Stream) error
	EventDestroy(ev driver.Event) error
}

// recordNewEvent creates an event and records it on stream. An event that
// cannot be recorded is destroyed: the caller gets only the error, so it
// would leak.
func recordNewEvent(d eventAPI, flags uint32, stream uintptr) (uintptr, error) {
	e, err := d.EventCreate(flags)
	if err != nil {
		return 0, err
	}
	if err := d.EventRecord(e, driver.Stream(stream)); err != nil {
		return 0, errors.Join(err, d.EventDestroy(e))
	}
	return uintptr(e), nil
}

func (g *realGPU) EventDone(ev uintptr) (done bool, err error) {
	err = g.ctx.Do(func() error {
		done, err = g.drv.EventQuery(driver.Event(ev))
		return err
	})
	return done, err
}

func (g *realGPU) DestroyEvent(ev uintptr) error {
	return g.ctx.Do(func() error { return g.drv.EventDestroy(driver.Event(ev)) })
}

// target picks the NVRTC target: a cubin for the device's own architecture
// when NVRTC knows it, else PTX for the newest architecture it knows that
// the device can run, which the driver JIT-compiles.
func (g *realGPU) target() (string, error) {
	archs, err := nvrtc.SupportedArchs()
	if err != nil {
		return "", err
	}
	want := g.major*10 + g.minor
	best := 0
	for _, a := range archs {
		if a == want {
			return fmt.Sprintf("sm_%d", a), nil
		}
		if a < want && a > best {
			best = a
		}
	}
	if best == 0 {
		return "", fmt.Errorf("NVRTC supports no architecture at or below sm_%d", want)
	}
	return fmt.Sprintf("compute_%d", best), nil
}

var compileFlags = []string{"-std=c++17", "-default-device"}

// loadModule compiles (or takes from the disk cache) and loads a module with
// all of its kernel instantiations.
func (g *realGPU) loadModule(name string) *module {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m, ok := g.modules[name]; ok {
		return m
	}
	m := &module{funcs: map[string]driver.Function{}}
	g.modules[name] = m
	m.err = g.buildModule(name, m)
	return m
}

func (g *realGPU) buildModule(name string, m *module) error {
	src, ok := kernels.Modules()[name]
	if !ok {
		return fmt.Errorf("no kernel module %q", name)
	}
	exprs := kernels.NameExpressions(name)
	arch, err := g.target()
	if err != nil {
		return err
	}
	maj, min, err := nvrtc.Version()
	if err != nil {
		return err
	}
	opts := nvrtc.Options{Arch: arch, Flags: compileFlags, NameExpressions: exprs}
	key := kcache.NewKey(kcache.KeyInput{Source: src + "\x00" + fmt.Sprint(exprs), Options: opts.Args(), Arch: arch, NVRTCVersion: fmt.Sprintf("%d.%d", maj, min)})
	build := func() ([]byte, error) {
		res, err := nvrtc.Compile(src, name+".cu", opts)
		if err != nil {
			return nil, err
		}
		img := res.CUBIN
		if img == nil {
			img = append(res.PTX, 0)
		}
		return packImage(img, res.LoweredNames)
	}
	use := func(payload []byte) error {
		img, lowered, err := unpackImage(payload)
		if err != nil {
			return err
		}
		return g.ctx.Do(func() error {
			mod, log, err := g.drv.LoadModule(img)
			if err != nil {
				return fmt.Errorf("loading module %s: %w (%s)", name, err, log)
			}
			funcs := map[string]driver.Function{}
			for expr, low := range lowered {
				fn, err := g.drv.ModuleGetFunction(mod, low)
				if err != nil {
					g.drv.ModuleUnload(mod)
					return fmt.Errorf("module %s: %s: %w", name, expr, err)
				}
				funcs[expr] = fn
			}
			m.mod = mod
			for expr, fn := range funcs {
				m.funcs[expr] = fn
			}
			return nil
		})
	}
	// A cached entry that does not unpack or load is dropped and rebuilt.
	if cache, cerr := kcache.Default(); cerr == nil {
		return cache.GetOrCompileUse(key, build, use)
	}
	payload, err := build()
	if err != nil {
		return err
	}
	return use(payload)
}

// packImage stores a module image with its lowered names:
// uint32 length of the JSON names, the JSON, the image.
func packImage(img []byte, lowered map[string]string) ([]byte, error) {
	names, err := json.Marshal(lowered)
	if err != nil {
		return nil, err
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(names)))
	out = append(out, names...)
	return append(out, img...), nil
}

func unpackImage(p []byte) ([]byte, map[string]string, error) {
	if len(p) < 4 {
		return nil, nil, errors.New("cuda: kernel cache payload too short")
	}
	n := int(binary.LittleEndian.Uint32(p))
	if 4+n > len(p) {
		return nil, nil, errors.New("cuda: kernel cache payload truncated")
	}
	var lowered map[string]string
	if err := json.Unmarshal(p[4:4+n], &lowered); err != nil {
		return nil, nil, fmt.Errorf("cuda: kernel cache names: %w", err)
	}
	return p[4+n:], lowered, nil
}

func (g *realGPU) Run(l kernels.Launch, stream uintptr) error {
	m := g.loadModule(l.Module)
	if m.err != nil {
		return m.err
	}
	fn, ok := m.funcs[l.Kernel]
	if !ok {
		return fmt.Errorf("kernel %s not instantiated in module %s (%d instantiations)", l.Kernel, l.Module, len(m.funcs))
	}
	params := make([]unsafe.Pointer, len(l.Args))
	for i, a := range l.Args {
		params[i] = unsafe.Pointer(unsafe.SliceData(a))
	}
	return g.ctx.Do(func() error {
		return g.drv.LaunchKernel(fn, l.Grid, l.Block, l.Shared, driver.Stream(stream), params)
	})
}

func (g *realGPU) handle() (*cublas.Handle, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.blas == nil && g.blasErr == nil {
		g.blasErr = g.ctx.Do(func() error {
			h, err := cublas.Create()
			g.blas = h
			return err
		})
	}
	return g.blas, g.blasErr
}

func (g *realGPU) Gemm(stream uintptr, dt backend.DType, transA, transB bool, m, n, k int, a uint64, lda int, strideA int64, b uint64, ldb int, strideB int64, c uint64, ldc int, strideC int64, batch int) error {
	h, err := g.handle()
	if err != nil {
		return err
	}
	return g.ctx.Do(func() error {
		if err := h.SetStream(stream); err != nil {
			return err
		}
		switch dt {
		case backend.BFloat16, backend.Float16: // tensor cores, float32 accumulation, one rounding
			ct := cublas.R16BF
			if dt == backend.Float16 {
				ct = cublas.R16F
			}
			return cublas.GemmStridedBatchedExRowMajor(h, ct, cublas.Compute32F, transA, transB, m, n, k, a, lda, strideA, b, ldb, strideB, c, ldc, strideC, batch)
		case backend.Float32:
			switch backend.CurrentMatmulPrecision() {
			case backend.PrecisionHigh: // TF32 tensor cores (torch.set_float32_matmul_precision("high"))
				return cublas.GemmStridedBatchedExRowMajor(h, cublas.R32F, cublas.Compute32FFastTF32, transA, transB, m, n, k, a, lda, strideA, b, ldb, strideB, c, ldc, strideC, batch)
			case backend.PrecisionMedium:
				return cublas.GemmStridedBatchedExRowMajor(h, cublas.R32F, cublas.Compute32FFast16BF, transA, transB, m, n, k, a, lda, strideA, b, ldb, strideB, c, ldc, strideC, batch)
			}
			return cublas.SgemmStridedBatchedRowMajor(h, transA, transB, m, n, k, 1, a, lda, strideA, b, ldb, strideB, 0, c, ldc, strideC, batch)
		case backend.Float64:
			return cublas.DgemmStridedBatchedRowMajor(h, transA, transB, m, n, k, 1, a, lda, strideA, b, ldb, strideB, 0, c, ldc, strideC, batch)
		}
		return &backend.NotImplementedError{Op: "matmul", Device: backend.CUDAType, DType: dt}
	})
}

func (g *realGPU) RecordTimingEvent(stream uintptr) (ev uintptr, err error) {
	err = g.ctx.Do(func() error {
		ev, err = recordNewEvent(g.drv, driver.EventDefault, stream)
		return err
	})
	return ev, err
}

func (g *realGPU) EventSynchronize(ev uintptr) error {
	return g.ctx.Do(func() error { return g.drv.EventSynchronize(driver.Event(ev)) })
}

func (g *realGPU) EventElapsedMs(start, end uintptr) (ms float64, err error) {
	err = g.ctx.Do(func() error {
		v, err := g.drv.EventElapsedTime(driver.Event(start), driver.Event(end))
		ms = float64(v)
		return err
	})
	return ms, err
}

func (g *realGPU) StreamCreate() (s uintptr, err error) {
	err = g.ctx.Do(func() error {
		st, err := g.drv.StreamCreate(driver.StreamDefault)
		s = uintptr(st)
		return err
	})
	return s, err
}

func (g *realGPU) StreamDestroy(s uintptr) error {
	return g.ctx.Do(func() error { return g.drv.StreamDestroy(driver.Stream(s)) })
}

func (g *realGPU) StreamSynchronize(s uintptr) error {
	return g.ctx.Do(func() error { return g.drv.StreamSynchronize(driver.Stream(s)) })
}

func (g *realGPU) StreamWaitEvent(s, ev uintptr) error {
	return g.ctx.Do(func() error { return g.drv.StreamWaitEvent(driver.Stream(s), driver.Event(ev)) })
}

func (g *realGPU) StreamQuery(s uintptr) (done bool, err error) {
	err = g.ctx.Do(func() error {
		done, err = g.drv.StreamQuery(driver.Stream(s))
		return err
	})
	return done, err
}

func (g *realGPU) AllocHost(n uint64) (p unsafe.Pointer, err error) {
	err = g.ctx.Do(func() error {
		p, err = g.drv.MemAllocHost(n)
		return err
	})
	return p, err
}

func (g *realGPU) FreeHost(p unsafe.Pointer) error {
	return g.ctx.Do(func() error { return g.drv.MemFreeHost(p) })
}
