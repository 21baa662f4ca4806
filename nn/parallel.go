package nn

import (
	"fmt"
	"sync"

	"github.com/emberml/ember"
)

// DataParallel runs a module on several devices of one process, as
// torch.nn.DataParallel: each Forward splits the batch along dim 0 (as
// torch.chunk: pieces of ⌈N/len(devices)⌉ rows, the last one smaller, and
// fewer pieces, hence fewer replicas, when the batch is small), runs one
// replica per piece concurrently (a goroutine per device) and concatenates
// the outputs on the first device. Gradients flow back through the copies
// and are summed onto the wrapped module's parameters, so an optimizer is
// built on the wrapped module's parameters as usual.
//
// The wrapped module must live on the first device; it is the first
// replica, using its own parameters and buffers. The other replicas are
// made afresh at every Forward (see Replicator): structural copies with
// differentiable copies of the parameters and plain copies of the buffers.
// So, as in PyTorch, BatchNorm running statistics are updated from the
// first device's piece of the batch only: the other replicas' updates are
// lost. Several devices may be the same device (cpu, cpu, cpu): replicas
// never share mutable state.
//
// Replicas run concurrently, each on a goroutine of its own that runs with
// the caller's grad mode (so DataParallel.Forward inside ember.NoGrad
// records nothing). ember.Scope and ember.WithStream belong to the calling
// goroutine: the replicas' tensors are not the caller's Scope's.
//
// StateDict and the other listings use the wrapped module's names (no
// "module." prefix); LoadStateDict also accepts the prefixed keys of a
// checkpoint saved from torch's DataParallel.
type DataParallel struct {
	wrapper
	devices []ember.Device
}

// NewDataParallel wraps m to run on devices (none: ember.TryAllGPUs(),
// which falls back to the CPU). It panics with a *ReplicateError when m
// cannot be replicated.
func NewDataParallel(m Module, devices ...ember.Device) *DataParallel {
	if isNil(m) {
		argErr("NewDataParallel", "nil module%s", typed(m))
	}
	if len(devices) == 0 {
		devices = ember.TryAllGPUs()
	}
	replicateStructure(m) // fail now rather than at the first Forward
	return &DataParallel{wrapper: wrapper{m}, devices: append([]ember.Device(nil), devices...)}
}

// Devices returns the devices replicas run on; outputs are gathered on the
// first.
func (d *DataParallel) Devices() []ember.Device {
	CheckNil(d, "Devices")
	return append([]ember.Device(nil), d.devices...)
}

// Forward scatters x along dim 0, runs the replicas concurrently and
// gathers their outputs on the first device. A panic in a replica is
// re-raised here (an error value wrapped with the replica and device).
func (d *DataParallel) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(d, "Forward")
	dev0 := d.devices[0]
	d.checkDevice()
	if len(d.devices) == 1 {
		return d.m.Forward(x.To(dev0))
	}
	chunks := x.Chunk(len(d.devices), 0)
	n := len(chunks)
	replicas := make([]Module, n)
	replicas[0] = d.m
	for i := 1; i < n; i++ {
		replicas[i] = replicaOn(d.m, d.devices[i])
	}
	outs := make([]*ember.Tensor, n)
	panics := make([]any, n)
	var wg sync.WaitGroup
	// Grad mode and autocast are per goroutine: pass them on, as
	// torch's parallel_apply does.
	grad := ember.IsGradEnabled()
	for i := range n {
		dev := d.devices[i]
		low, cast := ember.AutocastDType(dev)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { panics[i] = recover() }()
			run := func() { outs[i] = replicas[i].Forward(chunks[i].To(dev)) }
			ember.SetGradEnabled(grad, func() {
				if cast {
					ember.Autocast(dev, low, run)
				} else {
					run()
				}
			})
		}()
	}
	wg.Wait()
	for i, p := range panics {
		if err, ok := p.(error); ok {
			panic(fmt.Errorf("nn.DataParallel: replica %d on %v: %w", i, d.devices[i], err))
		} else if p != nil {
			panic(p)
		}
	}
	for i, o := range outs {
		if o.RequiresGrad() != outs[0].RequiresGrad() {
			with, without := 0, i
			if !outs[0].RequiresGrad() {
				with, without = i, 0
			}
			panic(&ember.AutogradError{Op: "nn.DataParallel", Msg: fmt.Sprintf("replica %d's output has a graph, replica %d's has none: did a Forward call ember.NoGrad?", with, without)})
		}
		outs[i] = o.To(dev0)
	}
	if outs[0].Dim() == 0 { // as torch's gather: scalars become a vector
		return ember.Stack(outs, 0)
	}
	return ember.Cat(outs, 0)
}

// checkDevice panics unless the wrapped module's tensors are on the first
// device (torch: "module must have its parameters and buffers on device
// cuda:0 (device_ids[0])").
func (d *DataParallel) checkDevice() {
	dev0 := d.devices[0]
	check := func(ts []Named) {
		for _, t := range ts {
			if t.Tensor.Device() != dev0 {
				panic(&ember.DeviceMismatchError{Devices: []ember.Device{dev0, t.Tensor.Device()},
					Op: fmt.Sprintf("nn.DataParallel: the module must have its parameters and buffers on devices[0] (%v), %s is on %v", dev0, t.Name, t.Tensor.Device())})
			}
		}
	}
	check(d.m.NamedParameters())
	check(d.m.NamedBuffers())
}

// To moves the wrapped module and returns d (replicas follow from the
// first device, which should then be dev).
func (d *DataParallel) To(dev ember.Device) Module {
	CheckNil(d, "To")
	d.m.To(dev)
	return d
}
