// Package data feeds datasets to training loops: the Dataset interface,
// a DataLoader that batches, shuffles (seeded) and prefetches with worker
// goroutines, samplers (DistributedSampler: each rank of a data-parallel job
// its share, in torch's order), and seeded image transforms.
package data

import (
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"

	"github.com/emberml/ember"
)

// Dataset is an indexed collection of (input, target) samples.
type Dataset interface {
	Len() int
	Get(i int) (input, target *ember.Tensor)
}

// EpochSetter is implemented by datasets whose samples depend on the epoch
// (random augmentation); the DataLoader calls SetEpoch before each epoch.
type EpochSetter interface{ SetEpoch(epoch int) }

// Subset is the dataset of ds's samples at Indices.
type Subset struct {
	DS      Dataset
	Indices []int
}

// Len is the number of indices.
func (s *Subset) Len() int { return len(s.Indices) }

// Get returns ds's sample Indices[i]; a negative i counts from the end, as
// Python's indexing, and an i outside the indices panics with an
// *ember.IndexError.
func (s *Subset) Get(i int) (*ember.Tensor, *ember.Tensor) {
	i = sampleIndex("data.Subset.Get", i, len(s.Indices))
	if isNil(s.DS) {
		panic(&ember.ValueError{Op: "data.Subset.Get", Msg: "nil dataset"})
	}
	return s.DS.Get(s.Indices[i])
}

// sampleIndex is Python's sequence indexing of a dataset of n samples: i
// in [-n, n), a negative i counting from the end; any other i panics with
// an *ember.IndexError naming op.
func sampleIndex(op string, i, n int) int {
	if i < -n || i >= n {
		panic(&ember.IndexError{Op: op, Index: int64(i), Size: n})
	}
	if i < 0 {
		i += n
	}
	return i
}

// SetEpoch forwards to the underlying dataset.
func (s *Subset) SetEpoch(e int) {
	if es, ok := s.DS.(EpochSetter); ok {
		es.SetEpoch(e)
	}
}

// Take returns the first n samples of ds (all of them when n <= 0 or n >= Len).
func Take(ds Dataset, n int) Dataset {
	if isNil(ds) {
		panic(&ember.ValueError{Op: "data.Take", Msg: fmt.Sprintf("nil dataset (%T)", ds)})
	}
	if n <= 0 || n >= ds.Len() {
		return ds
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return &Subset{ds, idx}
}

// isNil reports a nil Dataset, or one holding a nil pointer (a
// NewImageFolder whose error went unchecked), whose Len was a nil
// dereference.
func isNil(ds Dataset) bool {
	if ds == nil {
		return true
	}
	v := reflect.ValueOf(ds)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Batch is one collated batch: inputs stacked along a new first dimension,
// targets likewise, and the dataset indices they came from.
type Batch struct {
	Input, Target *ember.Tensor
	Indices       []int
}

// Size is the number of samples in b.
func (b Batch) Size() int { return len(b.Indices) }

// LoaderOption configures a DataLoader.
type LoaderOption func(*DataLoader)

// BatchSize sets the samples per batch (default 1).
func BatchSize(n int) LoaderOption { return func(l *DataLoader) { l.batch = n } }

// Shuffle visits the samples in a random order each epoch, drawn from seed
// and the epoch number, so runs repeat exactly.
func Shuffle(seed uint64) LoaderOption {
	return func(l *DataLoader) { l.shuffle, l.seed = true, seed }
}

// DropLast drops the last batch when it is smaller than the batch size.
func DropLast() LoaderOption { return func(l *DataLoader) { l.dropLast = true } }

// Workers collates batches on n goroutines (default 0: on the caller's
// goroutine). Batches still arrive in order. A negative n makes NewLoader
// panic, as torch's "num_workers option should be non-negative".
func Workers(n int) LoaderOption { return func(l *DataLoader) { l.workers = n } }

// Prefetch sets how many batches the workers may run ahead (default, or 0:
// 2 per worker); a negative n makes NewLoader panic.
func Prefetch(n int) LoaderOption { return func(l *DataLoader) { l.prefetch = n } }

// PinMemory runs hook on each collated batch in the worker, before it is
// handed out: the place to copy batches into page-locked host memory or
// start their transfer to a device.
func PinMemory(hook func(Batch) Batch) LoaderOption { return func(l *DataLoader) { l.pin = hook } }

// Collate replaces the default collation (ember.Stack of inputs and of
// targets); nil keeps it.
func Collate(f func(inputs, targets []*ember.Tensor) (*ember.Tensor, *ember.Tensor)) LoaderOption {
	return func(l *DataLoader) {
		if f != nil {
			l.collate = f
		}
	}
}

// DataLoader iterates over a dataset in batches.
type DataLoader struct {
	ds       Dataset
	batch    int
	shuffle  bool
	seed     uint64
	dropLast bool
	workers  int
	prefetch int
	pin      func(Batch) Batch
	collate  func(inputs, targets []*ember.Tensor) (*ember.Tensor, *ember.Tensor)
	sampler  Sampler
}

// NewLoader returns a DataLoader over ds. Bad options, and a dataset whose
// Len is negative, panic with an *ember.ValueError.
func NewLoader(ds Dataset, opts ...LoaderOption) *DataLoader {
	if isNil(ds) {
		panic(&ember.ValueError{Op: "data.NewLoader", Msg: fmt.Sprintf("nil dataset (%T)", ds)})
	}
	l := &DataLoader{ds: ds, batch: 1, collate: StackCollate}
	for _, o := range opts {
		o(l)
	}
	if l.batch < 1 {
		panic(&ember.ValueError{Op: "data.NewLoader", Msg: fmt.Sprintf("batch size %d < 1", l.batch)})
	}
	if l.workers < 0 {
		panic(&ember.ValueError{Op: "data.NewLoader", Msg: fmt.Sprintf("num_workers option should be non-negative (got Workers(%d)); use Workers(0) to collate on the caller's goroutine", l.workers)})
	}
	if l.prefetch < 0 {
		panic(&ember.ValueError{Op: "data.NewLoader", Msg: fmt.Sprintf("Prefetch(%d): want a non-negative number of batches (0: the default)", l.prefetch)})
	}
	l.dsLen("data.NewLoader")
	if l.sampler != nil && l.shuffle {
		panic(&ember.ValueError{Op: "data.NewLoader", Msg: "WithSampler and Shuffle exclude each other (the sampler decides the order)"})
	}
	if l.prefetch <= 0 {
		l.prefetch = 2 * max(min(l.workers, math.MaxInt/2), 1)
	}
	return l
}

// Dataset returns the loader's dataset.
func (l *DataLoader) Dataset() Dataset {
	l.check("data.DataLoader.Dataset")
	return l.ds
}

// BatchSize returns the batch size.
func (l *DataLoader) BatchSize() int {
	l.check("data.DataLoader.BatchSize")
	return l.batch
}

// dsLen is the dataset's Len, which may not be negative (Python's len()
// raises "__len__() should return >= 0").
func (l *DataLoader) dsLen(op string) int {
	l.check(op)
	n := l.ds.Len()
	if n < 0 {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("the dataset's Len() returned %d; it should return >= 0", n)})
	}
	return n
}

// check refuses a nil DataLoader or one not made by NewLoader.
func (l *DataLoader) check(op string) {
	if l == nil || l.ds == nil {
		panic(&ember.ValueError{Op: op, Msg: "a nil or zero DataLoader (make it with NewLoader)"})
	}
}

// Len is the number of batches per epoch.
func (l *DataLoader) Len() int {
	n := l.dsLen("data.DataLoader.Len")
	if l.sampler != nil {
		if n = l.sampler.Len(); n < 0 {
			panic(&ember.ValueError{Op: "data.DataLoader.Len", Msg: fmt.Sprintf("the sampler's Len() returned %d; it should return >= 0", n)})
		}
	}
	return l.batches(n)
}

// batches is the number of batches n samples make.
func (l *DataLoader) batches(n int) int {
	if l.dropLast {
		return n / l.batch
	}
	return (n + l.batch - 1) / l.batch
}

// StackCollate stacks inputs and targets along a new first dimension.
func StackCollate(inputs, targets []*ember.Tensor) (*ember.Tensor, *ember.Tensor) {
	return ember.Stack(inputs, 0), ember.Stack(targets, 0)
}

// Order returns the sample order of an epoch: the sampler's indices, the
// seeded permutation of Shuffle, or 0..n-1.
func (l *DataLoader) Order(epoch int) []int {
	l.check("data.DataLoader.Order")
	if l.sampler != nil {
		return l.sampler.Indices(epoch)
	}
	n := l.dsLen("data.DataLoader.Order")
	if !l.shuffle {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	r := rand.New(rand.NewPCG(l.seed, uint64(epoch)*0x9e3779b97f4a7c15+1))
	return r.Perm(n)
}

func (l *DataLoader) make(idx []int) Batch {
	ins := make([]*ember.Tensor, len(idx))
	tgs := make([]*ember.Tensor, len(idx))
	for i, j := range idx {
		ins[i], tgs[i] = l.ds.Get(j)
	}
	x, y := l.collate(ins, tgs)
	b := Batch{Input: x, Target: y, Indices: idx}
	if l.pin != nil {
		b = l.pin(b)
	}
	return b
}

// Epoch yields the batches of one epoch in order. Breaking out of the loop
// stops the workers.
func (l *DataLoader) Epoch(epoch int) iter.Seq[Batch] {
	l.check("data.DataLoader.Epoch")
	return func(yield func(Batch) bool) {
		if es, ok := l.ds.(EpochSetter); ok {
			es.SetEpoch(epoch)
		}
		order := l.Order(epoch)
		nb := l.batches(len(order))
		slice := func(b int) []int {
			return order[b*l.batch : min((b+1)*l.batch, len(order))]
		}
		if l.workers <= 0 {
			for b := 0; b < nb; b++ {
				if !yield(l.make(slice(b))) {
					return
				}
			}
			return
		}
		type result struct {
			b     Batch
			panic any
		}
		type job struct {
			b   int
			out chan result
		}
		// no more workers or prefetched batches than the epoch has batches
		// (Workers(1<<40) was a fatal out-of-memory)
		jobs := make(chan job)
		ready := make(chan chan result, min(l.prefetch, nb))
		done := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < min(l.workers, nb); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range jobs {
					func() {
						defer func() {
							if r := recover(); r != nil {
								j.out <- result{panic: r}
							}
						}()
						j.out <- result{b: l.make(slice(j.b))}
					}()
				}
			}()
		}
		go func() { // hand out batch numbers in order, at most prefetch ahead
			defer close(ready)
			defer close(jobs)
			for b := 0; b < nb; b++ {
				out := make(chan result, 1)
				select {
				case ready <- out:
				case <-done:
					return
				}
				select {
				case jobs <- job{b, out}:
				case <-done:
					return
				}
			}
		}()
		defer func() {
			close(done)
			for range ready { // let the dispatcher finish
			}
			wg.Wait()
		}()
		for out := range ready {
			r := <-out
			if r.panic != nil {
				panic(r.panic) // a worker's panic surfaces in the caller
			}
			if !yield(r.b) {
				return
			}
		}
	}
}
