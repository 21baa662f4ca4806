package nn

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/emberml/ember"
	"github.com/emberml/ember/dist"
)

// DistributedDataParallel trains one replica of a module per process, as
// torch.nn.parallel.DistributedDataParallel: every rank runs its own
// forward and backward on its own part of the data, and Backward leaves in
// each parameter's Grad the average of the ranks' gradients, so identical
// optimizer steps keep the replicas identical.
//
// At construction the parameters and buffers are broadcast from rank 0
// (and their shapes checked to agree across ranks). The parameters are
// then split into buckets of about BucketCapMB MiB (the first 1 MiB, as
// PyTorch, so communication starts early), in reverse registration order,
// which is roughly the order backward produces their gradients. A hook on
// each parameter (ember's RegisterPostAccumulateGradHook) copies its
// gradient into its bucket; a complete bucket is all-reduced (average) at
// once, asynchronously, while backward goes on with earlier layers. A
// callback queued for the end of the backward pass (ember.QueueCallback)
// completes the buckets that parameters unused in this pass left open
// (their gradients count as zeros), waits for every all-reduce and writes
// the averages back into the parameters' Grad before Backward returns. A
// parameter no rank used keeps its Grad (nil after ZeroGrad), so optimizers
// skip it. Buckets are always launched in the same order on every rank.
//
// Buffers (BatchNorm running statistics) are broadcast from rank 0 before
// a forward that follows a synchronising one (PyTorch's
// broadcast_buffers=True), so every rank normalises with rank 0's
// statistics in evaluation and the checkpoint of any rank is rank 0's.
//
// NoSync runs forward and backward passes that only accumulate gradients
// locally; the next synchronised backward all-reduces the accumulated sums.
//
// A failed collective (a rank that died or timed out) panics inside
// Backward or Forward with an error wrapping the group's *dist.RankError.
//
// Build the optimizer on the wrapped module's parameters, after moving the
// module to the group's device and before wrapping: the hooks are on those
// tensors. The wrapper is not safe for concurrent use; forward and backward
// run in the caller's goroutine.
type DistributedDataParallel struct {
	wrapper
	c        comm
	dev      ember.Device
	params   []*ember.Tensor
	buckets  []*bucket
	where    map[*ember.Tensor][2]int // parameter → bucket, position
	removes  []func()
	noSync   bool
	syncBufs bool                   // broadcast buffers at the next forward
	expect   bool                   // the coming backward all-reduces (set by a synchronising forward)
	inPass   bool                   // a synchronising backward has started: finish is queued
	next     int                    // the next bucket to launch
	touched  map[*ember.Tensor]bool // got a gradient since the last all-reduce
}

// bucket is a group of parameters whose gradients are all-reduced together
// in one flat tensor: their gradients, then one "used" flag per parameter
// (1 where this rank has a gradient), so that the average tells which
// parameters some rank used.
type bucket struct {
	params  []*ember.Tensor
	offs    []int
	numel   int
	flat    *ember.Tensor
	ready   []bool
	pending int
	work    waiter
}

// comm is what DDP needs of a process group (*dist.ProcessGroup through
// pgComm; tests use an in-process fake).
type comm interface {
	Rank() int
	WorldSize() int
	Broadcast(t *ember.Tensor, root int) error
	AllReduce(t *ember.Tensor, op dist.ReduceOp) error
	AllReduceAsync(t *ember.Tensor, op dist.ReduceOp) waiter
}

type waiter interface{ Wait() error }

type pgComm struct{ *dist.ProcessGroup }

func (c pgComm) AllReduceAsync(t *ember.Tensor, op dist.ReduceOp) waiter {
	return c.ProcessGroup.AllReduceAsync(t, op)
}

// DDPOption configures NewDistributedDataParallel.
type DDPOption func(*ddpConfig)

type ddpConfig struct {
	c        comm
	capBytes int
}

// WithProcessGroup makes DDP communicate over g (default:
// dist.DefaultGroup()).
func WithProcessGroup(g *dist.ProcessGroup) DDPOption {
	return func(c *ddpConfig) {
		if g != nil {
			c.c = pgComm{g}
		}
	}
}

// BucketCapMB sets the size of the gradient buckets in MiB (default 25, as
// PyTorch's bucket_cap_mb).
func BucketCapMB(mb float64) DDPOption {
	return func(c *ddpConfig) { c.capBytes = int(mb * (1 << 20)) }
}

// firstBucketBytes is the size of the first bucket (PyTorch's
// _DEFAULT_FIRST_BUCKET_BYTES): small, so the first all-reduce starts as
// soon as the last layers' gradients exist.
const firstBucketBytes = 1 << 20

// DDPError is the panic of a collective that failed inside Forward or
// Backward; Err is the process group's error (often a *dist.RankError).
type DDPError struct {
	Op  string // "all_reduce of gradient bucket 2", "broadcast of buffers", ...
	Err error
}

func (e *DDPError) Error() string {
	return "nn.DistributedDataParallel: " + e.Op + ": " + e.Err.Error()
}

func (e *DDPError) Unwrap() error { return e.Err }

// NewDistributedDataParallel wraps m, whose tensors must be on the process
// group's device. Every rank calls it with the same model structure; it
// broadcasts rank 0's parameters and buffers. It returns dist's
// ErrNotInitialized when no group is given and there is no default group,
// and an error when the ranks' models differ or a collective fails.
func NewDistributedDataParallel(m Module, opts ...DDPOption) (*DistributedDataParallel, error) {
	if isNil(m) {
		return nil, errors.New("nn.NewDistributedDataParallel: nil module" + typed(m))
	}
	cfg := ddpConfig{capBytes: 25 << 20}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.c == nil {
		g := dist.DefaultGroup()
		if g == nil {
			return nil, fmt.Errorf("nn.NewDistributedDataParallel: %w", dist.ErrNotInitialized)
		}
		cfg.c = pgComm{g}
	}
	d := &DistributedDataParallel{wrapper: wrapper{m}, c: cfg.c, where: map[*ember.Tensor][2]int{}, touched: map[*ember.Tensor]bool{}, syncBufs: true}
	if pg, ok := cfg.c.(pgComm); ok {
		d.dev = pg.Device()
	} else {
		d.dev = ember.CPU
	}
	seen := map[*ember.Tensor]bool{}
	for _, p := range m.Parameters() {
		if p.RequiresGrad() && !seen[p] {
			seen[p] = true
			d.params = append(d.params, p)
		}
	}
	for _, n := range append(m.NamedParameters(), m.NamedBuffers()...) {
		if n.Tensor.Device() != d.dev {
			return nil, fmt.Errorf("nn.NewDistributedDataParallel: %s is on %v, the process group's device is %v: move the module first", n.Name, n.Tensor.Device(), d.dev)
		}
	}
	if err := d.checkShapes(); err != nil {
		return nil, err
	}
	if err := d.broadcast(append(m.Parameters(), m.Buffers()...)); err != nil {
		return nil, fmt.Errorf("nn.NewDistributedDataParallel: broadcast of the initial state: %w", err)
	}
	d.makeBuckets(cfg.capBytes)
	for _, p := range d.params {
		d.removes = append(d.removes, p.RegisterPostAccumulateGradHook(d.onGrad))
	}
	return d, nil
}

// checkShapes compares the number of parameters, their elements and a hash
// of their names and shapes across the ranks (PyTorch's
// _verify_param_shape_across_processes), with one all-reduce of the
// values and their negations under Max.
func (d *DistributedDataParallel) checkShapes() error {
	h := fnv.New32a()
	elems := 0
	for _, n := range d.NamedParameters() {
		fmt.Fprintf(h, "%s%v%v;", n.Name, n.Tensor.Shape(), n.Tensor.DType())
		elems += n.Tensor.NumElements()
	}
	mine := []float64{float64(len(d.params)), float64(elems), float64(h.Sum32())}
	v := append(slices.Clone(mine), -mine[0], -mine[1], -mine[2])
	t := ember.FromSlice(v, nil).To(d.dev)
	if err := d.c.AllReduce(t, dist.Max); err != nil {
		return fmt.Errorf("nn.NewDistributedDataParallel: comparing the ranks' models: %w", err)
	}
	got := t.Float64s()
	for i := range mine {
		if got[i] != -got[i+3] {
			return fmt.Errorf("nn.NewDistributedDataParallel: the ranks' models differ: rank %d has %d parameters of %d elements (names and shapes hash %08x); some rank has more, fewer or other ones",
				d.c.Rank(), len(d.params), elems, uint32(mine[2]))
		}
	}
	return nil
}

// broadcast copies rank 0's ts into every rank's ts, one flat tensor per
// dtype.
func (d *DistributedDataParallel) broadcast(ts []*ember.Tensor) error {
	if d.c.WorldSize() == 1 {
		return nil
	}
	var dtypes []ember.DType
	byType := map[ember.DType][]*ember.Tensor{}
	for _, t := range ts {
		if byType[t.DType()] == nil {
			dtypes = append(dtypes, t.DType())
		}
		byType[t.DType()] = append(byType[t.DType()], t)
	}
	for _, dt := range dtypes {
		group := byType[dt]
		flat := make([]*ember.Tensor, len(group))
		for i, t := range group {
			flat[i] = t.Detach().Reshape(-1)
		}
		buf := ember.Cat(flat, 0)
		if err := d.c.Broadcast(buf, 0); err != nil {
			return err
		}
		if d.c.Rank() == 0 {
			continue
		}
		at := 0
		for _, t := range group {
			n := t.NumElements()
			t.Detach().CopyFrom(buf.Narrow(0, at, n).View(t.Shape()...))
			at += n
		}
	}
	return nil
}

// makeBuckets assigns the parameters, last registered first, to buckets of
// one dtype each, closing a bucket when it reaches its size.
func (d *DistributedDataParallel) makeBuckets(capBytes int) {
	open := map[ember.DType]*bucket{}
	openBytes := map[ember.DType]int{}
	closeBucket := func(dt ember.DType) {
		b := open[dt]
		delete(open, dt)
		b.flat = ember.Zeros(ember.Shape{b.numel + len(b.params)}, ember.On(d.dev), ember.Dtype(dt))
		b.ready = make([]bool, len(b.params))
		b.pending = len(b.params)
	}
	for i := len(d.params) - 1; i >= 0; i-- {
		p := d.params[i]
		dt := p.DType()
		b := open[dt]
		if b == nil {
			b = &bucket{}
			open[dt] = b
			openBytes[dt] = 0
			d.buckets = append(d.buckets, b)
		}
		d.where[p] = [2]int{slices.Index(d.buckets, b), len(b.params)}
		b.params = append(b.params, p)
		b.offs = append(b.offs, b.numel)
		b.numel += p.NumElements()
		openBytes[dt] += p.NumElements() * dt.Size()
		limit := capBytes
		if len(d.buckets) == 1 {
			limit = min(capBytes, firstBucketBytes)
		}
		if openBytes[dt] >= limit {
			closeBucket(dt)
		}
	}
	for dt := range open {
		closeBucket(dt)
	}
}

// onGrad is the post-accumulate-grad hook of every parameter.
func (d *DistributedDataParallel) onGrad(p *ember.Tensor) {
	d.touched[p] = true
	if !d.expect {
		return // NoSync, or a backward not preceded by a synchronising forward
	}
	if !d.inPass {
		d.inPass = true
		ember.QueueCallback(d.finish)
	}
	w := d.where[p]
	b := d.buckets[w[0]]
	if b.ready[w[1]] {
		return
	}
	d.fill(b, w[1], p.Grad())
	d.launch()
}

// fill copies g (nil: zeros, unused) into position i of b.
func (d *DistributedDataParallel) fill(b *bucket, i int, g *ember.Tensor) {
	n := b.params[i].NumElements()
	seg := b.flat.Narrow(0, b.offs[i], n)
	flag := b.flat.Narrow(0, b.numel+i, 1)
	if g != nil {
		seg.CopyFrom(g.Detach().Reshape(n))
		flag.FillInPlace(1)
	} else {
		seg.ZeroInPlace()
		flag.ZeroInPlace()
	}
	b.ready[i] = true
	b.pending--
}

// launch starts the all-reduce of every complete bucket, in bucket order.
func (d *DistributedDataParallel) launch() {
	for d.next < len(d.buckets) && d.buckets[d.next].pending == 0 {
		b := d.buckets[d.next]
		b.work = d.c.AllReduceAsync(b.flat, dist.Avg)
		d.next++
	}
}

// finish runs at the end of a synchronising backward pass.
func (d *DistributedDataParallel) finish() {
	for _, b := range d.buckets[d.next:] {
		for i, p := range b.params {
			if !b.ready[i] {
				var g *ember.Tensor
				if d.touched[p] { // accumulated under NoSync, not reached now
					g = p.Grad()
				}
				d.fill(b, i, g)
			}
		}
	}
	d.launch()
	var failed error
	for i, b := range d.buckets {
		err := b.work.Wait()
		b.work = nil
		b.pending = len(b.params)
		clear(b.ready)
		if err != nil {
			if failed == nil {
				failed = &DDPError{Op: fmt.Sprintf("all_reduce of gradient bucket %d", i), Err: err}
			}
			continue
		}
		if failed != nil {
			continue
		}
		used := b.flat.Narrow(0, b.numel, len(b.params)).Float64s()
		for j, p := range b.params {
			if used[j] == 0 {
				continue // no rank has a gradient: keep Grad as it is
			}
			avg := b.flat.Narrow(0, b.offs[j], p.NumElements()).View(p.Shape()...)
			if g := p.Grad(); g != nil {
				g.CopyFrom(avg)
			} else {
				p.SetGrad(avg.Clone())
			}
		}
	}
	d.inPass, d.expect, d.next = false, false, 0
	clear(d.touched)
	if failed != nil {
		panic(failed)
	}
}

// Forward broadcasts the buffers from rank 0 when the previous forward
// was a synchronising one, then runs the wrapped module. A forward with
// grad enabled and outside NoSync makes the next backward all-reduce.
func (d *DistributedDataParallel) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(d, "Forward")
	if d.syncBufs {
		if bufs := d.m.Buffers(); len(bufs) > 0 {
			if err := d.broadcast(bufs); err != nil {
				panic(&DDPError{Op: "broadcast of buffers", Err: err})
			}
		}
	}
	y := d.m.Forward(x)
	sync := ember.IsGradEnabled() && !d.noSync
	d.syncBufs, d.expect = sync, sync
	return y
}

// NoSync runs f with gradient synchronisation off (torch's no_sync()):
// backward passes of forwards run inside f only accumulate gradients
// locally, and the first synchronised backward after it all-reduces the
// accumulated sums. Every rank must make the same NoSync calls.
func (d *DistributedDataParallel) NoSync(f func()) {
	CheckNil(d, "NoSync")
	if f == nil {
		useErr("*nn.DistributedDataParallel", "NoSync", "nil function")
	}
	prev := d.noSync
	d.noSync = true
	defer func() { d.noSync = prev }()
	f()
}

// To panics unless the module is already on dev: the gradient hooks are on
// the parameters DDP was built with, so move the module before wrapping.
func (d *DistributedDataParallel) To(dev ember.Device) Module {
	CheckNil(d, "To")
	if dev != d.dev {
		panic(errors.New("nn.DistributedDataParallel: To(" + dev.String() + "): move the module before wrapping it (it lives on " + d.dev.String() + ")"))
	}
	return d
}

// Close removes the gradient hooks from the wrapped module's parameters,
// which then train without communication.
func (d *DistributedDataParallel) Close() {
	CheckNil(d, "Close")
	for _, r := range d.removes {
		r()
	}
	d.removes = nil
}
