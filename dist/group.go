package dist

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/emberml/ember"
)

// This file is the process-group API that nn.DistributedDataParallel,
// `ember launch` and `ember train --ddp` are written against. The
// collectives' implementations (the cpu ring backend over TCP, NCCL) live in
// their own files.

// ReduceOp is how AllReduce and ReduceScatter combine the ranks' values.
type ReduceOp int

const (
	Sum ReduceOp = iota // element-wise sum
	Avg                 // element-wise mean over the ranks
	Max                 // element-wise maximum
	Min                 // element-wise minimum
)

func (o ReduceOp) String() string {
	switch o {
	case Sum:
		return "sum"
	case Avg:
		return "avg"
	case Max:
		return "max"
	case Min:
		return "min"
	}
	return fmt.Sprintf("ReduceOp(%d)", int(o))
}

// DefaultTimeout bounds rendezvous and every collective when Options.Timeout
// is zero (torch's default for gloo is 30 minutes; ember's is shorter so a
// hung job fails while someone is still watching). EMBER_DIST_TIMEOUT (a Go
// duration) overrides it.
const DefaultTimeout = 5 * time.Minute

// Options configures InitProcessGroup. With WorldSize 0, the rank, world
// size and local rank come from the environment (see EnvOptions) and Rank
// and LocalRank are ignored; with WorldSize set, Rank is taken as given.
// Other zero fields are filled from the environment too: MasterAddr from
// MASTER_ADDR (or SLURM's node list; 127.0.0.1 for a world of size 1),
// MasterPort from MASTER_PORT (else 29500), Timeout from EMBER_DIST_TIMEOUT
// (else DefaultTimeout).
type Options struct {
	Rank       int // this process's rank, 0 ≤ Rank < WorldSize (used when WorldSize > 0)
	WorldSize  int // number of processes (0: rank, world size and local rank from the environment)
	LocalRank  int // rank within this machine (-1: LOCAL_RANK, else Rank; used when WorldSize > 0)
	MasterAddr string
	MasterPort int
	// Store, when set, is used for rendezvous instead of a TCPStore at
	// MasterAddr:MasterPort (which rank 0 serves). The group does not
	// close it.
	Store Store
	// Timeout bounds rendezvous and each collective (0: DefaultTimeout).
	Timeout time.Duration
	// Device is where this rank's tensors live; for nccl the default is
	// cuda:LocalRank, for cpu it is cpu (the only device it accepts).
	Device ember.Device
}

// RankError reports a collective (or the rendezvous) that failed because
// a peer did not take part in time or went away. Every rank of the group
// sees one naming the same rank (the lowest one missing) where the store
// is still reachable; when the store itself is gone, the rank named is 0,
// which serves it.
type RankError struct {
	Op    string        // "all_reduce", "broadcast", "barrier", "rendezvous", ...
	Rank  int           // the rank that did not arrive or failed
	After time.Duration // how long this rank waited
	Err   error         // the underlying cause (timeout, connection reset, ...)
}

func (e *RankError) Error() string {
	timeout := isTimeout(e.Err)
	if ae, ok := e.Err.(*absentError); ok {
		timeout = ae.timeout // how the rank reading from the absent one saw it
	}
	if timeout {
		return fmt.Sprintf("dist: %s: rank %d did not arrive within %v: %v", e.Op, e.Rank, e.After.Round(time.Millisecond), e.Err)
	}
	return fmt.Sprintf("dist: %s: rank %d failed or left (after %v): %v", e.Op, e.Rank, e.After.Round(time.Millisecond), e.Err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// ErrNotInitialized is returned by calls that need a default process group
// before InitProcessGroup made one.
var ErrNotInitialized = errors.New("dist: the default process group is not initialized (call dist.InitProcessGroup)")

// Work is a collective in flight (AllReduceAsync): Wait blocks until it is
// done and returns its error.
type Work struct {
	done chan struct{}
	err  error
}

// Wait blocks until the collective completes and returns its error.
func (w *Work) Wait() error {
	<-w.done
	return w.err
}

// groupImpl is what a backend ("cpu", "nccl") provides. Its methods are
// called one at a time, from the group's worker goroutine, in the order the
// collectives were called. Tensors given to it are on the group's device,
// contiguous and of a dtype the op supports; it writes results in place.
type groupImpl interface {
	allReduce(t *ember.Tensor, op ReduceOp) error
	broadcast(t *ember.Tensor, root int) error
	allGather(out []*ember.Tensor, in *ember.Tensor) error
	reduceScatter(out *ember.Tensor, in []*ember.Tensor, op ReduceOp) error
	barrier() error
	close() error
}

// ProcessGroup is a set of processes that run collectives together, as a
// torch.distributed process group. Collectives are called by every rank in
// the same order; each fails after the group's timeout with a *RankError
// naming a rank that did not arrive.
type ProcessGroup struct {
	backend   string
	rank      int
	world     int
	localRank int
	dev       ember.Device
	timeout   time.Duration
	store     Store
	impl      groupImpl

	ownStore *TCPStore // the store this group made (nil when Options.Store was given)
	prefix   string    // of this group's keys in the store

	mu     sync.Mutex
	cond   *sync.Cond // signals queue, closing
	queue  []*job
	broken error // the failure that broke the group; later calls return it
	closed bool
	done   chan struct{} // closed when the worker exits
}

type job struct {
	run func() error
	w   *Work
}

// Rank is this process's rank.
func (g *ProcessGroup) Rank() int { return g.rank }

// WorldSize is the number of processes in the group.
func (g *ProcessGroup) WorldSize() int { return g.world }

// LocalRank is this process's rank on its machine.
func (g *ProcessGroup) LocalRank() int { return g.localRank }

// Backend is "cpu" or "nccl".
func (g *ProcessGroup) Backend() string { return g.backend }

// Device is the device this rank's tensors live on.
func (g *ProcessGroup) Device() ember.Device { return g.dev }

// Store is the group's rendezvous store.
func (g *ProcessGroup) Store() Store { return g.store }

// Timeout is the bound on each collective.
func (g *ProcessGroup) Timeout() time.Duration { return g.timeout }

// ErrClosed is returned by collectives on a closed group.
var ErrClosed = errors.New("dist: the process group is closed")

// InitProcessGroup joins the process group described by opts (zero fields
// from the environment, see Options) using backend "cpu" (alias "gloo":
// a ring over TCP) or "nccl" (NVIDIA's library, loaded at run time). The
// first group made becomes the default group (DefaultGroup).
//
// Rank 0 serves a TCPStore at MasterAddr:MasterPort and the other ranks
// connect to it, retrying until the timeout; every rank then publishes its
// address and waits for the others. A rank that does not join within the
// timeout makes the others fail with a *RankError naming it (and listing
// every rank missing).
func InitProcessGroup(backend string, opts Options) (*ProcessGroup, error) {
	name := backend
	if name == "gloo" {
		name = "cpu"
	}
	if name != "cpu" && name != "nccl" {
		return nil, fmt.Errorf("dist: unknown backend %q (known: cpu, its alias gloo, and nccl)", backend)
	}
	o, listenAddr, err := resolveOptions(opts)
	if err != nil {
		return nil, err
	}
	dev := opts.Device
	switch name {
	case "cpu":
		if dev != ember.CPU {
			return nil, fmt.Errorf("dist: the cpu backend works on CPU tensors, not %v (use nccl for CUDA tensors)", dev)
		}
	case "nccl":
		if dev == ember.CPU {
			dev = ember.CUDA(o.LocalRank)
		}
		if dev.Type != ember.CUDAType {
			return nil, fmt.Errorf("dist: the nccl backend works on CUDA tensors, not %v", dev)
		}
	}
	start := time.Now()
	deadline := start.Add(o.Timeout)
	g := &ProcessGroup{backend: name, rank: o.Rank, world: o.WorldSize, localRank: o.LocalRank, dev: dev, timeout: o.Timeout, store: opts.Store, done: make(chan struct{})}
	g.cond = sync.NewCond(&g.mu)
	if g.store == nil {
		var s *TCPStore
		if o.Rank == 0 {
			s, err = NewTCPStore(listenAddr, true, o.Timeout)
		} else {
			s, err = NewTCPStore(net.JoinHostPort(o.MasterAddr, fmt.Sprint(o.MasterPort)), false, o.Timeout)
			if err != nil {
				err = &RankError{Op: "rendezvous", Rank: 0, After: time.Since(start), Err: fmt.Errorf("rank 0's store is unreachable: %w", err)}
			}
		}
		if err != nil {
			return nil, err
		}
		g.store, g.ownStore = s, s
	}
	// Groups sharing a store use distinct keys: each rank numbers the
	// groups it makes on this store, in the same order as the others.
	n, err := g.store.Add(fmt.Sprintf("dist/groups/%d", g.rank), 1)
	if err != nil {
		err = storeFailed("rendezvous", err)
	}
	g.prefix = fmt.Sprintf("dist/pg%d/", n)
	switch {
	case err != nil:
	case name == "cpu":
		g.impl, err = newRing(g, o.MasterAddr, o.MasterPort, deadline)
	case name == "nccl":
		g.impl, err = newNCCL(g, deadline)
	}
	if err != nil {
		if g.ownStore != nil {
			// Serve the other ranks a little longer: they may be reading
			// which ranks joined.
			g.ownStore.waitClients(time.Now().Add(g.grace()))
			g.ownStore.Close()
		}
		var re *RankError
		if errors.As(err, &re) {
			re.After = time.Since(start)
		}
		return nil, err
	}
	go g.worker()
	defaultMu.Lock()
	if defaultGroup == nil {
		defaultGroup = g
	}
	defaultMu.Unlock()
	return g, nil
}

// resolveOptions fills opts' zero fields from the environment and returns
// the address rank 0's store listens on.
func resolveOptions(opts Options) (o Options, listen string, err error) {
	o = opts
	get := func(k string) (string, bool) {
		v, ok := os.LookupEnv(k)
		return v, ok && v != ""
	}
	_, addrSet := get("MASTER_ADDR")
	_, portSet := get("MASTER_PORT")
	if o.WorldSize == 0 {
		env, err := EnvOptions()
		if err != nil {
			return o, "", err
		}
		o.Rank, o.WorldSize, o.LocalRank = env.Rank, env.WorldSize, env.LocalRank
		if o.MasterAddr == "" {
			o.MasterAddr = env.MasterAddr
		}
	} else {
		if o.WorldSize < 0 || o.Rank < 0 || o.Rank >= o.WorldSize {
			return o, "", fmt.Errorf("dist: Options: rank %d is not in [0, %d)", o.Rank, o.WorldSize)
		}
		if o.LocalRank < 0 {
			o.LocalRank = o.Rank
			if v, ok := get("LOCAL_RANK"); ok {
				if o.LocalRank, err = strconv.Atoi(v); err != nil || o.LocalRank < 0 {
					return o, "", &EnvError{Var: "LOCAL_RANK", Value: v, Msg: "is not a non-negative integer"}
				}
			}
		}
		if o.MasterAddr == "" {
			o.MasterAddr, _ = get("MASTER_ADDR")
		}
	}
	if o.MasterAddr == "" {
		if o.WorldSize > 1 && opts.Store == nil {
			return o, "", &EnvError{Var: "MASTER_ADDR", Msg: "is not set and Options.MasterAddr is empty (the address of the machine running rank 0)"}
		}
		o.MasterAddr = "127.0.0.1"
	}
	if o.MasterPort == 0 {
		if o.MasterPort, err = envPort(get); err != nil {
			return o, "", err
		}
	}
	if o.Timeout == 0 {
		if o.Timeout, err = envTimeout(get); err != nil {
			return o, "", err
		}
		if o.Timeout == 0 {
			o.Timeout = DefaultTimeout
		}
	}
	// Listen on the interface of the address the job uses; on every one
	// only when asked.
	bind := o.MasterAddr
	if listenAll() {
		bind = ""
	}
	listen = net.JoinHostPort(bind, fmt.Sprint(o.MasterPort))
	if o.WorldSize == 1 && opts.MasterAddr == "" && !addrSet && opts.MasterPort == 0 && !portSet {
		// A world of one needs no well-known port: take any free one.
		listen = "127.0.0.1:0"
	}
	return o, listen, nil
}

var (
	defaultMu    sync.Mutex
	defaultGroup *ProcessGroup
)

// DefaultGroup returns the group made by the first InitProcessGroup, or nil.
func DefaultGroup() *ProcessGroup {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	return defaultGroup
}

// IsInitialized reports whether a default group exists.
func IsInitialized() bool { return DefaultGroup() != nil }

// worker runs the queued collectives one at a time, in call order.
func (g *ProcessGroup) worker() {
	defer close(g.done)
	for {
		g.mu.Lock()
		for len(g.queue) == 0 && !g.closed {
			g.cond.Wait()
		}
		if len(g.queue) == 0 {
			g.mu.Unlock()
			return
		}
		j := g.queue[0]
		g.queue[0] = nil
		g.queue = g.queue[1:]
		err := g.broken
		g.mu.Unlock()
		if err == nil {
			if err = j.run(); err != nil {
				g.mu.Lock()
				if g.broken == nil {
					g.broken = err
				}
				g.mu.Unlock()
			}
		}
		j.w.err = err
		close(j.w.done)
	}
}

// submit queues run on the worker; a broken or closed group fails at once.
func (g *ProcessGroup) submit(run func() error) *Work {
	w := &Work{done: make(chan struct{})}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.broken != nil:
		w.err = g.broken
	case g.closed:
		w.err = ErrClosed
	default:
		g.queue = append(g.queue, &job{run: run, w: w})
		g.cond.Signal()
		return w
	}
	close(w.done)
	return w
}

func failed(err error) *Work {
	w := &Work{done: make(chan struct{}), err: err}
	close(w.done)
	return w
}

// grace is how long a rank that saw a collective fail waits for the
// others to record theirs.
func (g *ProcessGroup) grace() time.Duration {
	return min(max(g.timeout/2, 200*time.Millisecond), 5*time.Second)
}

// Err returns the failure that broke the group, or nil.
func (g *ProcessGroup) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.broken
}

// operand is a tensor handed to a backend: contiguous, on the group's
// device. When the caller's tensor is not contiguous, t is a contiguous copy
// and orig the caller's tensor, written back after the collective.
type operand struct {
	t, orig *ember.Tensor
	bump    func() // bumps t's version (see ember.UnsafeView)
}

// prepare checks a tensor given to op and returns the operand for the backend.
func (g *ProcessGroup) prepare(op string, what string, t *ember.Tensor, reduce bool) (operand, error) {
	if t == nil {
		return operand{}, fmt.Errorf("dist: %s: %s is nil", op, what)
	}
	if t.Device() != g.dev {
		return operand{}, fmt.Errorf("dist: %s: %s is on %v but the group's device is %v", op, what, t.Device(), g.dev)
	}
	switch dt := t.DType(); {
	case dt == ember.Float32, dt == ember.Float64, dt == ember.Int64, dt == ember.Int32:
	case dt == ember.Bool && !reduce:
	default:
		return operand{}, fmt.Errorf("dist: %s: %s tensors are not supported (float32, float64, int64, int32%s)", op, dt, map[bool]string{false: ", bool"}[reduce])
	}
	v, bump := ember.UnsafeView(t)
	if v.IsContiguous() {
		return operand{t: t, bump: bump}, nil
	}
	return operand{t: t.Detach().Contiguous(), orig: t}, nil
}

// written finishes an output operand: copies a staged result back and
// marks the caller's tensor as modified.
func (o operand) written() {
	if o.orig != nil {
		o.orig.Detach().CopyFrom(o.t)
		return
	}
	o.bump()
}

func checkOp(op string, r ReduceOp) error {
	if r < Sum || r > Min {
		return fmt.Errorf("dist: %s: unknown reduce op %v", op, r)
	}
	return nil
}

// AllReduce combines t across the ranks with op and leaves the result in t
// on every rank. Every rank ends with the same bits. Avg on integer
// tensors divides with truncation, as NCCL does.
func (g *ProcessGroup) AllReduce(t *ember.Tensor, op ReduceOp) error {
	return g.AllReduceAsync(t, op).Wait()
}

// AllReduceAsync starts AllReduce and returns at once; t must not be read
// or written until the Work's Wait returns. Collectives started this way
// still run in the order they were started (on one goroutine per group),
// also with respect to the synchronous ones.
func (g *ProcessGroup) AllReduceAsync(t *ember.Tensor, op ReduceOp) *Work {
	if err := checkOp("all_reduce", op); err != nil {
		return failed(err)
	}
	o, err := g.prepare("all_reduce", "the tensor", t, true)
	if err != nil {
		return failed(err)
	}
	return g.submit(func() error {
		if err := g.impl.allReduce(o.t, op); err != nil {
			return err
		}
		o.written()
		return nil
	})
}

// Broadcast copies root's t into t on every other rank.
func (g *ProcessGroup) Broadcast(t *ember.Tensor, root int) error {
	if root < 0 || root >= g.world {
		return fmt.Errorf("dist: broadcast: root %d is not a rank of a world of %d", root, g.world)
	}
	o, err := g.prepare("broadcast", "the tensor", t, false)
	if err != nil {
		return err
	}
	return g.submit(func() error {
		if err := g.impl.broadcast(o.t, root); err != nil {
			return err
		}
		if g.rank != root {
			o.written()
		}
		return nil
	}).Wait()
}

// prepareList checks a list of one tensor per rank, each of ref's shape
// and dtype.
func (g *ProcessGroup) prepareList(op, what string, ts []*ember.Tensor, ref *ember.Tensor, reduce bool) ([]operand, error) {
	if len(ts) != g.world {
		return nil, fmt.Errorf("dist: %s: %s has %d tensors, want one per rank (%d)", op, what, len(ts), g.world)
	}
	out := make([]operand, len(ts))
	for i, t := range ts {
		o, err := g.prepare(op, fmt.Sprintf("%s[%d]", what, i), t, reduce)
		if err != nil {
			return nil, err
		}
		if t.DType() != ref.DType() || !t.Shape().Equal(ref.Shape()) {
			return nil, fmt.Errorf("dist: %s: %s[%d] is %v %v, want %v %v", op, what, i, t.DType(), t.Shape(), ref.DType(), ref.Shape())
		}
		out[i] = o
	}
	return out, nil
}

// AllGather fills out[r] (one tensor per rank, each of in's shape) with
// rank r's in, on every rank.
func (g *ProcessGroup) AllGather(out []*ember.Tensor, in *ember.Tensor) error {
	i, err := g.prepare("all_gather", "in", in, false)
	if err != nil {
		return err
	}
	outs, err := g.prepareList("all_gather", "out", out, in, false)
	if err != nil {
		return err
	}
	return g.submit(func() error {
		ts := make([]*ember.Tensor, len(outs))
		for k, o := range outs {
			ts[k] = o.t
		}
		if err := g.impl.allGather(ts, i.t); err != nil {
			return err
		}
		for _, o := range outs {
			o.written()
		}
		return nil
	}).Wait()
}

// ReduceScatter combines in[r] across the ranks with op and leaves the
// result for rank r in rank r's out (in has one tensor per rank, each of
// out's shape). in is not modified.
func (g *ProcessGroup) ReduceScatter(out *ember.Tensor, in []*ember.Tensor, op ReduceOp) error {
	if err := checkOp("reduce_scatter", op); err != nil {
		return err
	}
	o, err := g.prepare("reduce_scatter", "out", out, true)
	if err != nil {
		return err
	}
	is, err := g.prepareList("reduce_scatter", "in", in, out, true)
	if err != nil {
		return err
	}
	return g.submit(func() error {
		ts := make([]*ember.Tensor, len(is))
		for k, i := range is {
			ts[k] = i.t
		}
		if err := g.impl.reduceScatter(o.t, ts, op); err != nil {
			return err
		}
		o.written()
		return nil
	}).Wait()
}

// Barrier returns once every rank has called it.
func (g *ProcessGroup) Barrier() error { return g.submit(g.impl.barrier).Wait() }

// Close leaves the group and frees its connections; the default group
// becomes unset if g was it. Collectives queued before Close still run.
// On rank 0, whose process serves the store, Close keeps serving until the
// other ranks have closed their connections to it (or the timeout passes).
func (g *ProcessGroup) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		<-g.done
		return nil
	}
	g.closed = true
	g.cond.Broadcast()
	g.mu.Unlock()
	<-g.done
	err := g.impl.close()
	if g.ownStore != nil {
		if g.rank == 0 {
			// Serve the others until they are done with the store: when the
			// group broke, they are still finding out which rank failed.
			wait := g.timeout
			if g.Err() != nil {
				wait = g.grace() + time.Second
			}
			g.ownStore.waitClients(time.Now().Add(wait))
		}
		g.ownStore.Close()
	}
	defaultMu.Lock()
	if defaultGroup == g {
		defaultGroup = nil
	}
	defaultMu.Unlock()
	return err
}
