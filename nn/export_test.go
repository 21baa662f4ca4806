package nn

import (
	"fmt"
	"sync"

	"github.com/emberml/ember"
	"github.com/emberml/ember/dist"
)

// ReplicaOn exposes replicaOn to the external tests.
func ReplicaOn(m Module, dev ember.Device) Module { return replicaOn(m, dev) }

// FakeComm is one rank of an in-process process group for DDP's tests:
// ranks are goroutines of the test, collectives meet by sequence number
// and are computed on the host in float64.
type FakeComm struct {
	hub  *fakeHub
	rank int
	seq  int
	// OnLaunch, when set, runs as AllReduceAsync is called (in the
	// backward goroutine), with the tensor.
	OnLaunch func(t *ember.Tensor)
	// Fail, when set, makes every collective return it (world size 1 only:
	// the other ranks would wait for this one).
	Fail error
	// Collectives counts the collectives this rank joined, by op.
	Collectives map[string]int
}

type fakeHub struct {
	mu     sync.Mutex
	n      int
	rounds map[int]*fakeRound
}

type fakeRound struct {
	op      string
	ts      []*ember.Tensor
	arrived int
	done    sync.WaitGroup // (the tests' package shadows the builtin close)
	err     error
}

// FakeGroup returns the ranks of an in-process group of n.
func FakeGroup(n int) []*FakeComm {
	h := &fakeHub{n: n, rounds: map[int]*fakeRound{}}
	out := make([]*FakeComm, n)
	for i := range out {
		out[i] = &FakeComm{hub: h, rank: i, Collectives: map[string]int{}}
	}
	return out
}

// WithComm makes DDP use c.
func WithComm(c *FakeComm) DDPOption { return func(cfg *ddpConfig) { cfg.c = c } }

func (c *FakeComm) Rank() int      { return c.rank }
func (c *FakeComm) WorldSize() int { return c.hub.n }

type doneWaiter struct{ r *fakeRound }

func (w doneWaiter) Wait() error {
	w.r.done.Wait()
	return w.r.err
}

func (c *FakeComm) join(op string, t *ember.Tensor, compute func(ts []*ember.Tensor)) *fakeRound {
	c.Collectives[op]++
	if c.Fail != nil {
		return &fakeRound{err: c.Fail}
	}
	h := c.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rounds[c.seq]
	if r == nil {
		r = &fakeRound{op: op, ts: make([]*ember.Tensor, h.n)}
		r.done.Add(1)
		h.rounds[c.seq] = r
	}
	if r.op != op || !r.tsShapeOK(t) {
		r.err = fmt.Errorf("fake group: rank %d called %s %v as collective %d, another rank %s", c.rank, op, t.Shape(), c.seq, r.op)
	}
	r.ts[c.rank] = t
	r.arrived++
	if r.arrived == h.n {
		delete(h.rounds, c.seq)
		if r.err == nil {
			compute(r.ts)
		}
		r.done.Done()
	}
	c.seq++
	return r
}

func (r *fakeRound) tsShapeOK(t *ember.Tensor) bool {
	for _, o := range r.ts {
		if o != nil && !o.Shape().Equal(t.Shape()) {
			return false
		}
	}
	return true
}

func fakeReduce(op dist.ReduceOp) func(ts []*ember.Tensor) {
	return func(ts []*ember.Tensor) {
		var acc []float64
		for i, t := range ts {
			v := t.Float64s()
			if i == 0 {
				acc = v
				continue
			}
			for j := range acc {
				switch op {
				case dist.Sum, dist.Avg:
					acc[j] += v[j]
				case dist.Max:
					acc[j] = max(acc[j], v[j])
				case dist.Min:
					acc[j] = min(acc[j], v[j])
				}
			}
		}
		if op == dist.Avg {
			for j := range acc {
				acc[j] /= float64(len(ts))
			}
		}
		for _, t := range ts {
			t.Detach().CopyFrom(ember.FromSlice(acc, t.Shape()))
		}
	}
}

func (c *FakeComm) AllReduce(t *ember.Tensor, op dist.ReduceOp) error {
	return doneWaiter{c.join("all_reduce", t, fakeReduce(op))}.Wait()
}

func (c *FakeComm) AllReduceAsync(t *ember.Tensor, op dist.ReduceOp) waiter {
	if c.OnLaunch != nil {
		c.OnLaunch(t)
	}
	return doneWaiter{c.join("all_reduce", t, fakeReduce(op))}
}

func (c *FakeComm) Broadcast(t *ember.Tensor, root int) error {
	return doneWaiter{c.join("broadcast", t, func(ts []*ember.Tensor) {
		for i, o := range ts {
			if i != root {
				o.Detach().CopyFrom(ts[root])
			}
		}
	})}.Wait()
}

// BucketNames lists the parameters of each gradient bucket by name.
func (d *DistributedDataParallel) BucketNames() [][]string {
	CheckNil(d, "BucketNames")
	name := map[*ember.Tensor]string{}
	for _, n := range d.NamedParameters() {
		name[n.Tensor] = n.Name
	}
	var out [][]string
	for _, b := range d.buckets {
		var ns []string
		for _, p := range b.params {
			ns = append(ns, name[p])
		}
		out = append(out, ns)
	}
	return out
}

// ReplicateStructure exposes replicateStructure to the external tests.
func ReplicateStructure(m Module) Module { return replicateStructure(m) }
