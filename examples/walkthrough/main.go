// Command walkthrough runs the "PyTorch + CUDA" tutorials end to end with
// ember, in the tutorials' order: the environment check, device
// descriptors, TryGPU/TryAllGPUs, tensors on a device, moving them, the
// cross-device error, a CPU-vs-GPU timing of x*x, memory statistics, and a
// small network (and a ResNet-18) moved to the device and run there.
//
// Every step prints a heading. On a machine without a usable GPU it runs
// what it can on the CPU (and the meta device) and says, once per step,
// what it skipped and why.
//
//	go run ./examples/walkthrough             # 10000×10000 timing
//	go run ./examples/walkthrough --size 512  # quicker
//
// With --bench it only times MatMul (--matmul) and x*x (--size) on
// --device and prints one "BENCH ember ..." line for each (see bench).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/vision/models"
)

// config holds the command-line settings.
type config struct {
	size  int // side of the square tensor timed in step 7
	reps  int // timed repetitions (after one warm-up)
	image int // side of the ResNet-18 input image in step 9 (0 skips it)
}

func main() {
	var cfg config
	flag.IntVar(&cfg.size, "size", 10000, "side of the square float32 tensor for the CPU-vs-GPU x*x timing")
	flag.IntVar(&cfg.reps, "reps", 3, "timed repetitions after one warm-up")
	flag.IntVar(&cfg.image, "image", 224, "side of the ResNet-18 input image (0 skips the ResNet)")
	benchOnly := flag.Bool("bench", false, "only benchmark MatMul (--matmul) and x*x (--size) on --device")
	matmul := flag.Int("matmul", 4096, "side of the square matrices multiplied by --bench (0 skips)")
	device := flag.String("device", "cuda:0", "the device --bench runs on")
	flag.Parse()
	if flag.NArg() > 0 { // "walkthrough 512" meant --size 512: don't run the full size
		fmt.Fprintf(os.Stderr, "walkthrough: unexpected argument %q: the settings are flags (--size N, --image N, --reps N, --bench; -h lists them)\n", flag.Arg(0))
		os.Exit(2)
	}
	if *benchOnly {
		dev, err := ember.ParseDevice(*device)
		if err == nil {
			if perr := ember.Try(func() { err = bench(os.Stdout, dev, *matmul, cfg.size, cfg.reps) }); perr != nil {
				err = perr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "walkthrough --bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "walkthrough:", err)
		os.Exit(1)
	}
}

// walk prints the steps to w.
type walk struct {
	w    io.Writer
	step int
	gpu  bool         // cuda:0 is usable
	dev  ember.Device // TryGPU(0)
	why  error        // why cuda:0 is not usable
}

func (k *walk) heading(title string) {
	k.step++
	fmt.Fprintf(k.w, "\n== %d. %s ==\n", k.step, title)
}

func (k *walk) printf(format string, args ...any) { fmt.Fprintf(k.w, format+"\n", args...) }

// skip says, once per step, what was skipped and why.
func (k *walk) skip(what string) {
	fmt.Fprintf(k.w, "SKIP %s: %v\n", what, k.why)
}

// try runs f and returns the typed error it panicked with.
func try(f func()) error { return ember.Try(f) }

func run(w io.Writer, cfg config) error {
	if cfg.size <= 0 || cfg.reps <= 0 {
		return fmt.Errorf("--size and --reps must be positive (got %d, %d)", cfg.size, cfg.reps)
	}
	k := &walk{w: w}
	k.why = ember.CheckDevice(ember.CUDA(0))
	k.gpu = k.why == nil
	k.dev = ember.CPU
	if k.gpu {
		k.dev = ember.CUDA(0)
	}
	ember.ManualSeed(0)
	steps := []func(config) error{
		k.environment, k.descriptors, k.tryGPU, k.tensors, k.moving,
		k.crossDevice, k.timing, k.memory, k.network,
	}
	for _, s := range steps {
		// ember's typed panics (out of memory at a large --size or --image,
		// say) end the run as an error, not a stack trace
		var err error
		if perr := ember.Try(func() { err = s(cfg) }); perr != nil {
			err = perr
		}
		if err != nil {
			return fmt.Errorf("step %d: %w", k.step, err)
		}
	}
	fmt.Fprintf(w, "\nwalkthrough done: %d steps on %v\n", k.step, k.dev)
	return nil
}

// 1. torch.cuda.is_available(), torch.version.cuda, device_count(),
// current_device(), get_device_name(), total_memory.
func (k *walk) environment(config) error {
	k.heading("environment check (torch.cuda.is_available)")
	k.printf("CUDA available: %v", ember.CUDAAvailable())
	// torch.version.cuda: ember is built without CUDA, so the version that
	// matters is the driver's (it needs libcuda, not a GPU)
	if v, err := cuda.DriverVersion(); err == nil {
		k.printf("CUDA version (the driver's): %s", v)
	} else {
		k.printf("CUDA version: unknown: %v", err)
	}
	n := ember.DeviceCount()
	k.printf("device count: %d", n)
	// torch.cuda.current_device(): ember has no implicit current device;
	// code names its device, usually TryGPU(0)
	k.printf("current device: none implicit; TryGPU(0) = %v", ember.TryGPU(0))
	if !k.gpu {
		k.printf("cuda:0 unusable because: %v", k.why)
		k.skip("device names and total memory")
		return nil
	}
	for i := range n {
		name, total, err := gpuInfo(i)
		if err != nil {
			k.printf("cuda:%d: %v", i, err)
			continue
		}
		k.printf("cuda:%d: %s, total memory %.2f GB", i, name, float64(total)/(1<<30))
	}
	k.printf("(`ember smi` prints the nvidia-smi view; `ember info` the libraries found)")
	return nil
}

// gpuInfo returns the name and total memory of cuda:i, read through the
// CUDA backend's device interface.
func gpuInfo(i int) (string, uint64, error) {
	g, err := cuda.RealOpener().Open(i)
	if err != nil {
		return "", 0, err
	}
	_, total, err := g.MemInfo()
	return g.Name(), total, err
}

// 2. torch.device('cpu'), torch.device('cuda'), torch.device('cuda:1').
func (k *walk) descriptors(config) error {
	k.heading("device descriptors (torch.device)")
	cudaDefault, err := ember.ParseDevice("cuda")
	if err != nil {
		return err
	}
	k.printf("devices: %v %v %v %v", ember.CPU, cudaDefault, ember.CUDA(1), ember.MustDevice("meta"))
	k.printf("describing cuda:1 touches no driver; using it is checked: CheckDevice(cuda:1) = %v", errString(ember.CheckDevice(ember.CUDA(1))))
	if _, err := ember.ParseDevice("gpu:0"); err != nil {
		k.printf("ParseDevice(\"gpu:0\"): %v", err)
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return "<nil> (usable)"
	}
	return err.Error()
}

// 3. try_gpu(), try_gpu(10), try_all_gpus().
func (k *walk) tryGPU(config) error {
	k.heading("TryGPU / TryAllGPUs (try_gpu, try_all_gpus)")
	k.printf("TryGPU(0) = %v", ember.TryGPU(0))
	k.printf("TryGPU(10) = %v", ember.TryGPU(10))
	k.printf("TryAllGPUs() = %v", ember.TryAllGPUs())
	if n := ember.DeviceCount(); n > 1 {
		k.printf("%d GPUs: a data-parallel loop would put one replica on each of %v", n, ember.TryAllGPUs())
	}
	return nil
}

// 4. X.device; torch.ones(2, 3, device=try_gpu()); torch.rand(2, 3, device=try_gpu(1)).
func (k *walk) tensors(config) error {
	k.heading("tensors on a device (X.device, device=)")
	x := ember.FromSlice([]int64{1, 2, 3}, ember.Shape{3})
	k.printf("X = %v, X.Device() = %v", x, x.Device())
	x = ember.Ones(ember.Shape{2, 3}, ember.On(ember.TryGPU(0)))
	k.printf("Ones(2,3, On(TryGPU(0))) =\n%v", x)
	y := ember.Rand(ember.Shape{2, 3}, ember.On(ember.TryGPU(1)))
	k.printf("Rand(2,3, On(TryGPU(1))).Device() = %v", y.Device())
	m := ember.Ones(ember.Shape{2, 3}, ember.On(ember.Meta))
	k.printf("on meta (shape and dtype, no data): %v", m)
	return nil
}

// 5. x.to('cuda'), x.cuda(), .cpu(), and Z.cuda(0) is Z.
func (k *walk) moving(config) error {
	k.heading("moving tensors (To, CPU, CUDA)")
	x := ember.Ones(ember.Shape{2, 3})
	k.printf("X.Device() = %v; X.To(cpu) == X: %v; X.CPU() == X: %v", x.Device(), x.To(ember.CPU) == x, x.CPU() == x)
	m := x.To(ember.Meta)
	k.printf("X.To(meta) is a new tensor: %v, on %v", m != x, m.Device())
	if !k.gpu {
		k.skip("X.CUDA(0), Z.CUDA(0) == Z and Y+Z on cuda:0")
		return nil
	}
	z := x.CUDA(0)
	k.printf("Z := X.CUDA(0): Z.Device() = %v, X still on %v", z.Device(), x.Device())
	k.printf("Z =\n%v", z)
	k.printf("Z.CUDA(0) == Z (no copy when already there): %v", z.CUDA(0) == z)
	k.printf("Z.To(cuda:0) == Z: %v", z.To(ember.CUDA(0)) == z)
	y := ember.Rand(ember.Shape{2, 3}, ember.On(ember.TryGPU(0)))
	s := y.Add(z)
	k.printf("Y + Z on %v =\n%v", s.Device(), s)
	back := s.CPU()
	k.printf("(Y + Z).CPU() on %v, AllClose with Y.CPU()+1: %v", back.Device(), ember.AllClose(back, y.CPU().AddScalar(1), 1e-6, 1e-6))
	return nil
}

// 6. Adding tensors on two devices is an error.
func (k *walk) crossDevice(config) error {
	k.heading("the cross-device error")
	x := ember.Ones(ember.Shape{2, 3})
	m := ember.Ones(ember.Shape{2, 3}, ember.On(ember.Meta))
	err := try(func() { _ = m.Mul(x) })
	var dm *ember.DeviceMismatchError
	if !errors.As(err, &dm) {
		return fmt.Errorf("meta*cpu: want a *DeviceMismatchError, got %v", err)
	}
	k.printf("meta * cpu: %v", err)
	if !k.gpu {
		k.skip("cuda:0 + cpu")
		return nil
	}
	g := x.CUDA(0)
	err = try(func() { _ = g.Add(x) })
	if !errors.As(err, &dm) {
		return fmt.Errorf("cuda+cpu: want a *DeviceMismatchError, got %v", err)
	}
	k.printf("cuda:0 + cpu: %v", err)
	k.printf("fix: X.CUDA(0).Add(Z) works: %v", g.Add(x.CUDA(0)).Device())
	return nil
}

// timeOp runs f once to warm up, then reps times, synchronizing dev before
// each clock read; it returns the best and the mean seconds and the last
// result (the others are released).
func timeOp(dev ember.Device, reps int, f func() *ember.Tensor) (best, mean float64, out *ember.Tensor, err error) {
	f().Release() // warm-up: kernel compilation, allocator, page faults
	if err := ember.Synchronize(dev); err != nil {
		return 0, 0, nil, err
	}
	best = -1
	var sum float64
	for i := range reps {
		start := time.Now()
		r := f()
		if err := ember.Synchronize(dev); err != nil {
			return 0, 0, nil, err
		}
		s := time.Since(start).Seconds()
		sum += s
		if best < 0 || s < best {
			best = s
		}
		if i < reps-1 {
			r.Release()
		} else {
			out = r
		}
	}
	return best, sum / float64(reps), out, nil
}

// 7. x ** 2 on the CPU and the GPU, timed right, and allclose.
func (k *walk) timing(cfg config) error {
	n := cfg.size
	k.heading(fmt.Sprintf("CPU vs GPU: x*x on a %d×%d float32 tensor", n, n))
	x := ember.Randn(ember.Shape{n, n})
	defer x.Release()
	k.printf("x on %v, %s", x.Device(), ember.FormatBytes(int64(n*n*4)))
	sq := func(t *ember.Tensor) func() *ember.Tensor { return func() *ember.Tensor { return t.Mul(t) } }
	cpuBest, cpuMean, resCPU, err := timeOp(ember.CPU, cfg.reps, sq(x))
	if err != nil {
		return err
	}
	defer resCPU.Release()
	k.printf("CPU x*x: best %.6f s, mean %.6f s over %d runs (after 1 warm-up)", cpuBest, cpuMean, cfg.reps)
	if !k.gpu {
		k.skip("the GPU timing and AllClose(CPU, GPU)")
		return nil
	}
	xg := x.To(k.dev)
	defer xg.Release()
	k.printf("x.To(%v): %v", k.dev, xg.Device())
	gpuBest, gpuMean, resGPU, err := timeOp(k.dev, cfg.reps, sq(xg))
	if err != nil {
		return err
	}
	defer resGPU.Release()
	k.printf("GPU x*x: best %.6f s, mean %.6f s over %d runs (after 1 warm-up, Synchronize before each clock read)", gpuBest, gpuMean, cfg.reps)
	if gpuBest > 0 {
		k.printf("speed-up (best): %.1f×", cpuBest/gpuBest)
	}
	back := resGPU.CPU()
	defer back.Release()
	same := ember.AllClose(resCPU, back, 1e-5, 1e-8)
	k.printf("AllClose(CPU result, GPU result.CPU()): %v", same)
	if !same {
		return errors.New("the CPU and GPU results of x*x differ")
	}
	return nil
}

// 8. torch.cuda.memory_allocated / memory_reserved / max_memory_allocated /
// empty_cache / memory_summary, around a tensor's Release.
func (k *walk) memory(cfg config) error {
	k.heading(fmt.Sprintf("memory statistics on %v", k.dev))
	if !k.gpu {
		k.skip("the cuda:0 allocator's statistics (shown for cpu instead)")
	}
	dev := k.dev
	line := func(when string) {
		k.printf("%-22s allocated %10s  reserved %10s  max allocated %10s", when+":",
			ember.FormatBytes(ember.MemoryAllocated(dev)), ember.FormatBytes(ember.MemoryReserved(dev)), ember.FormatBytes(ember.MaxMemoryAllocated(dev)))
	}
	line("before")
	before := ember.MemoryAllocated(dev)
	t := ember.Zeros(ember.Shape{cfg.size, cfg.size}, ember.On(dev))
	k.printf("t := Zeros(%d, %d) on %v: %s", cfg.size, cfg.size, dev, ember.FormatBytes(int64(cfg.size*cfg.size*4)))
	line("after Zeros")
	grew := ember.MemoryAllocated(dev) - before
	t.Release()
	line("after t.Release()")
	k.printf("allocated grew by %s with t and fell by %s at t.Release()", ember.FormatBytes(grew), ember.FormatBytes(before+grew-ember.MemoryAllocated(dev)))
	if err := ember.EmptyCache(dev); err != nil {
		return err
	}
	line("after EmptyCache")
	k.printf("MemorySummary(%v):\n%s", dev, strings.TrimRight(ember.MemorySummary(dev), "\n"))
	err := try(func() { _ = t.AddScalar(1) })
	k.printf("using t after Release: %v", err)
	return nil
}

// 9. nn.Sequential(nn.Linear(3, 1)).to(try_gpu()) applied to ones(2, 3),
// an input on the wrong device, nn.DataParallel, and a ResNet-18 on a
// random image.
func (k *walk) network(cfg config) error {
	k.heading(fmt.Sprintf("a network on %v (nn.Sequential(nn.Linear(3, 1)).to(device))", k.dev))
	if !k.gpu {
		k.skip("running the network on cuda:0 (it runs on cpu)")
	}
	net := nn.NewSequential(nn.NewLinear(3, 1, true))
	net.To(ember.TryGPU(0))
	x := ember.Ones(ember.Shape{2, 3}, ember.On(ember.TryGPU(0)))
	y := net.Forward(x) // with grad, as in the tutorial: grad_fn=<AddmmBackward0>
	k.printf("net(X) =\n%v", y)
	w := net.At(0).(*nn.Linear).Weight
	k.printf("net[0].weight.Device() = %v", w.Device())
	// the model on the device, the input left behind: the tutorial's
	// commonest mistake (meta stands in for the other device without a GPU)
	other := ember.Meta
	if k.gpu {
		other = ember.CPU
	}
	err := try(func() { _ = net.Forward(ember.Ones(ember.Shape{2, 3}, ember.On(other))) })
	k.printf("net(X on %v): %v", other, err)
	// nn.DataParallel(model) over every GPU (the CPU without one): the batch
	// is split along dim 0, one replica per device, outputs gathered
	dp := nn.NewDataParallel(net)
	var yp *ember.Tensor
	ember.NoGrad(func() { yp = dp.Forward(x) })
	k.printf("DataParallel over %v: dp(X) on %v, equal to net(X): %v", ember.TryAllGPUs(), yp.Device(), ember.AllClose(yp.CPU(), y.Detach().CPU(), 1e-6, 1e-6))
	if cfg.image <= 0 {
		k.printf("ResNet-18: not run (--image 0)")
		return nil
	}
	model := models.ResNet18()
	model.Eval()
	model.To(k.dev)
	k.printf("ResNet-18: first parameter on %v", model.Parameters()[0].Device())
	in := ember.Randn(ember.Shape{1, 3, cfg.image, cfg.image}, ember.On(k.dev))
	var out *ember.Tensor
	start := time.Now()
	ember.NoGrad(func() { out = model.Forward(in) })
	if err := ember.Synchronize(k.dev); err != nil {
		return err
	}
	k.printf("ResNet-18 forward of %v: output on %v, shape %v (%.3f s, first run)", in.Shape(), out.Device(), out.Shape(), time.Since(start).Seconds())
	return nil
}
