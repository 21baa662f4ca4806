package dist

import (
	"errors"
	"fmt"
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

// Options configures InitProcessGroup. Zero values are read from the
// environment contract of torchrun (MASTER_ADDR, MASTER_PORT, RANK,
// WORLD_SIZE, LOCAL_RANK) or, when those are absent, SLURM
// (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODELIST); see
// EnvOptions.
type Options struct {
	Rank       int // this process's rank, 0 ≤ Rank < WorldSize (-1: from the environment)
	WorldSize  int // number of processes (0: from the environment)
	LocalRank  int // rank within this machine (-1: from the environment)
	MasterAddr string
	MasterPort int
	// Store, when set, is used for rendezvous instead of a TCPStore at
	// MasterAddr:MasterPort (which rank 0 serves).
	Store Store
	// Timeout bounds rendezvous and each collective (0: DefaultTimeout).
	Timeout time.Duration
	// Device is where this rank's tensors live; for nccl the default is
	// cuda:LocalRank, for cpu it is cpu.
	Device ember.Device
}

// RankError reports a collective (or the rendezvous) that failed because
// a peer did not take part in time or went away.
type RankError struct {
	Op    string        // "all_reduce", "broadcast", "barrier", "rendezvous", ...
	Rank  int           // the rank that did not arrive or failed
	After time.Duration // how long this rank waited
	Err   error         // the underlying cause (timeout, connection reset, ...)
}

func (e *RankError) Error() string {
	return fmt.Sprintf("dist: %s: rank %d did not arrive within %v: %v", e.Op, e.Rank, e.After, e.Err)
}

func (e *RankError) Unwrap() error { return e.Err }

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

// groupImpl is what a backend ("cpu", "nccl") provides. Tensors given to
// it are on the group's device, contiguous and of the same dtype on every
// rank; it writes results in place.
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

var errNotImplemented = errors.New("dist: not implemented yet")

// InitProcessGroup joins the process group described by opts (zero fields
// from the environment, see Options) using backend "cpu" (alias "gloo":
// a ring over TCP) or "nccl" (NVIDIA's library, loaded at run time). The
// first group made becomes the default group (DefaultGroup).
func InitProcessGroup(backend string, opts Options) (*ProcessGroup, error) {
	return nil, errNotImplemented
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

// AllReduce combines t across the ranks with op and leaves the result in t
// on every rank.
func (g *ProcessGroup) AllReduce(t *ember.Tensor, op ReduceOp) error { return errNotImplemented }

// AllReduceAsync starts AllReduce and returns at once; t must not be read
// or written until the Work's Wait returns. Collectives started this way
// still run in the order they were started.
func (g *ProcessGroup) AllReduceAsync(t *ember.Tensor, op ReduceOp) *Work {
	w := &Work{done: make(chan struct{}), err: errNotImplemented}
	close(w.done)
	return w
}

// Broadcast copies root's t into t on every other rank.
func (g *ProcessGroup) Broadcast(t *ember.Tensor, root int) error { return errNotImplemented }

// AllGather fills out[r] (one tensor per rank, each of in's shape) with
// rank r's in, on every rank.
func (g *ProcessGroup) AllGather(out []*ember.Tensor, in *ember.Tensor) error {
	return errNotImplemented
}

// ReduceScatter combines in[r] across the ranks with op and leaves the
// result for rank r in rank r's out (in has one tensor per rank, each of
// out's shape).
func (g *ProcessGroup) ReduceScatter(out *ember.Tensor, in []*ember.Tensor, op ReduceOp) error {
	return errNotImplemented
}

// Barrier returns once every rank has called it.
func (g *ProcessGroup) Barrier() error { return errNotImplemented }

// Close leaves the group and frees its connections; the default group
// becomes unset if g was it.
func (g *ProcessGroup) Close() error { return errNotImplemented }
