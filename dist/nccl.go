package dist

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/internal/cuda/nccl"
)

// The nccl backend: one NCCL communicator per group, made from a unique id
// that rank 0 creates and hands out through the store. Collectives are
// queued on the current stream of the tensors' device (ember.WithStream
// chooses it), so they are ordered after the kernels that produced their
// inputs and before those that read their results; a collective returns
// once it is queued, as torch's NCCL work does. NCCL calls run on the
// device's context thread, where NCCL finds its CUDA device.

type ncclGroup struct {
	g     *ProcessGroup
	comm  *nccl.Comm
	hooks backend.DeviceQueue
	token *ember.Tensor // for Barrier
}

// ncclType maps ember's dtypes to NCCL's (bool moves as bytes).
var ncclType = map[ember.DType]nccl.DataType{
	ember.Float32: nccl.Float32,
	ember.Float64: nccl.Float64,
	ember.Int64:   nccl.Int64,
	ember.Int32:   nccl.Int32,
	ember.Bool:    nccl.Uint8,
}

// ncclOp maps the reduce ops.
var ncclOp = map[ReduceOp]nccl.RedOp{Sum: nccl.Sum, Avg: nccl.Avg, Max: nccl.Max, Min: nccl.Min}

func newNCCL(g *ProcessGroup, deadline time.Time) (groupImpl, error) {
	if err := nccl.Load(); err != nil {
		return nil, fmt.Errorf("dist: the nccl backend needs NVIDIA's NCCL: %w", err)
	}
	if err := ember.CheckDevice(g.dev); err != nil {
		return nil, fmt.Errorf("dist: the nccl backend needs a CUDA device: %w", err)
	}
	b, _ := backend.Get(backend.CUDAType)
	hooks, ok := b.(backend.DeviceQueue)
	if !ok {
		return nil, fmt.Errorf("dist: the nccl backend needs ember's CUDA backend, not %T", b)
	}
	// Every rank announces itself first, so that a rank that never comes
	// is named instead of NCCL waiting for it forever.
	if err := g.join(deadline); err != nil {
		return nil, err
	}
	var id nccl.UniqueID
	var err error
	idKey := g.prefix + "nccl/unique_id"
	if g.rank == 0 {
		if id, err = nccl.GetUniqueID(); err != nil {
			return nil, fmt.Errorf("dist: nccl: %w", err)
		}
		if err := g.store.Set(idKey, id.Internal[:]); err != nil {
			return nil, storeFailed("rendezvous", err)
		}
	} else {
		v, err := g.store.Get(idKey)
		if err != nil {
			return nil, storeFailed("rendezvous", err)
		}
		if len(v) != nccl.UniqueIDBytes {
			return nil, fmt.Errorf("dist: nccl: rank 0 published a unique id of %d bytes, want %d", len(v), nccl.UniqueIDBytes)
		}
		copy(id.Internal[:], v)
	}
	n := &ncclGroup{g: g, hooks: hooks}
	err = hooks.Do(g.dev, func() error {
		c, err := nccl.CommInitRank(g.world, id, g.rank)
		n.comm = c
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dist: nccl: joining the communicator as rank %d of %d on %v: %w", g.rank, g.world, g.dev, err)
	}
	n.token = ember.Zeros(ember.Shape{1}, ember.On(g.dev))
	return n, nil
}

// keepAlive keeps tensors reachable until the NCCL calls on their device
// addresses are queued: a storage the GC collects gives its block back to
// the allocator.
func keepAlive(ts ...any) { runtime.KeepAlive(ts) }

// ptr is the device address of a contiguous CUDA tensor's first element;
// the caller keeps the tensor alive until the call using it is queued
// (keepAlive).
func ptr(t *ember.Tensor) uint64 {
	v, _ := ember.UnsafeView(t)
	st, ok := v.S.(backend.DeviceStorage)
	if !ok {
		panic(fmt.Sprintf("dist: nccl backend given %T storage", v.S))
	}
	return st.Ptr() + uint64(v.Offset*t.DType().Size())
}

// run issues f on the device's context thread with the current stream,
// then checks the communicator for an asynchronous failure.
func (n *ncclGroup) run(op string, f func(stream uintptr) error) error {
	stream, err := n.hooks.CurrentStream(n.g.dev)
	if err != nil {
		return err
	}
	err = n.hooks.Do(n.g.dev, func() error {
		if err := f(stream); err != nil {
			return err
		}
		r, err := n.comm.AsyncError()
		if err == nil && r != nccl.Success && r != nccl.InProgress {
			s, _ := nccl.ErrorString(r)
			err = fmt.Errorf("the communicator failed: %s (%d): %s", r.Name(), int32(r), s)
		}
		return err
	})
	if err != nil {
		n.abort()
		var ne *nccl.Error
		if errors.As(err, &ne) && ne.Code == nccl.RemoteError {
			return fmt.Errorf("dist: %s: a peer's process exited or the network failed: %w", op, err)
		}
		return fmt.Errorf("dist: %s: %w", op, err)
	}
	return nil
}

func (n *ncclGroup) abort() {
	n.hooks.Do(n.g.dev, func() error { return n.comm.Abort() })
}

func (n *ncclGroup) allReduce(t *ember.Tensor, op ReduceOp) error {
	defer keepAlive(t)
	p := ptr(t)
	return n.run("all_reduce", func(s uintptr) error {
		return n.comm.AllReduce(p, p, t.NumElements(), ncclType[t.DType()], ncclOp[op], s)
	})
}

func (n *ncclGroup) broadcast(t *ember.Tensor, root int) error {
	defer keepAlive(t)
	p := ptr(t)
	return n.run("broadcast", func(s uintptr) error {
		return n.comm.Broadcast(p, p, t.NumElements(), ncclType[t.DType()], root, s)
	})
}

// adjacent reports whether ts are consecutive pieces of one storage, so
// that one NCCL call can treat them as a single buffer.
func adjacent(ts []*ember.Tensor) bool {
	first, _ := ember.UnsafeView(ts[0])
	for i, t := range ts {
		v, _ := ember.UnsafeView(t)
		if v.S != first.S || v.Offset != first.Offset+i*t.NumElements() {
			return false
		}
	}
	return true
}

// grouped runs body between ncclGroupStart and ncclGroupEnd, on one OS
// thread (NCCL's group is per thread).
func grouped(body func() error) error { return nccl.Group(body) }

func (n *ncclGroup) allGather(out []*ember.Tensor, in *ember.Tensor) error {
	defer keepAlive(out, in) // the calls see device addresses only (see ptr)
	count, dt := in.NumElements(), ncclType[in.DType()]
	send := ptr(in)
	if adjacent(out) {
		recv := ptr(out[0])
		return n.run("all_gather", func(s uintptr) error { return n.comm.AllGather(send, recv, count, dt, s) })
	}
	// Separate outputs: one broadcast from each rank, fused by NCCL.
	return n.run("all_gather", func(s uintptr) error {
		return grouped(func() error {
			for r, o := range out {
				if err := n.comm.Broadcast(send, ptr(o), count, dt, r, s); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

func (n *ncclGroup) reduceScatter(out *ember.Tensor, in []*ember.Tensor, op ReduceOp) error {
	defer keepAlive(in, out) // the calls see device addresses only (see ptr)
	count, dt, rop := out.NumElements(), ncclType[out.DType()], ncclOp[op]
	recv := ptr(out)
	if adjacent(in) {
		send := ptr(in[0])
		return n.run("reduce_scatter", func(s uintptr) error { return n.comm.ReduceScatter(send, recv, count, dt, rop, s) })
	}
	// Separate inputs: one reduce to each rank, fused by NCCL.
	return n.run("reduce_scatter", func(s uintptr) error {
		return grouped(func() error {
			for r, i := range in {
				var dst uint64
				if r == n.g.rank {
					dst = recv
				}
				if err := n.comm.Reduce(ptr(i), dst, count, dt, rop, r, s); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// barrier all-reduces one element and waits for it, as torch's NCCL
// barrier does.
func (n *ncclGroup) barrier() error {
	if err := n.allReduce(n.token, Sum); err != nil {
		return err
	}
	return ember.Synchronize(n.g.dev)
}

func (n *ncclGroup) close() error {
	if n.comm == nil {
		return nil
	}
	var err error
	if n.g.Err() != nil {
		return nil // aborted when it failed
	}
	err = n.hooks.Do(n.g.dev, func() error { return n.comm.Destroy() })
	n.token.Release()
	return err
}
