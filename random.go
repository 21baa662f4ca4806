package ember

import (
	"sync"

	"github.com/emberml/ember/internal/philox"
)

// The generator: Philox4x32-10 keyed by the seed, with a counter offset per
// device type that each random op advances. Same seed → same numbers on the
// same device, whatever the thread count.
var rng = struct {
	sync.Mutex
	seed   uint64
	offset map[DeviceType]uint64
}{seed: 67280421310721, offset: map[DeviceType]uint64{}}

// ManualSeed seeds the random generator of every device and resets its stream.
func ManualSeed(seed uint64) {
	rng.Lock()
	defer rng.Unlock()
	rng.seed = seed
	rng.offset = map[DeviceType]uint64{}
}

func nextOffset(dev Device, n int) (seed, offset uint64) {
	rng.Lock()
	defer rng.Unlock()
	offset = rng.offset[dev.Type]
	rng.offset[dev.Type] = offset + philox.Blocks(n)
	return rng.seed, offset
}

func random(op string, shape Shape, normal bool, opts []Option) *Tensor {
	o := makeOptions(Float32, opts)
	if !o.dtype.IsFloat() {
		panic(&DTypeError{Op: op, DTypes: []DType{o.dtype}, Msg: "random floats need a floating dtype"})
	}
	t := empty(shape, o.dtype, o.dev)
	seed, off := nextOffset(o.dev, t.NumElements())
	t.be().Random(t.view(), seed, off, normal)
	return finish(t, o)
}

// Rand returns uniform samples from [0, 1).
func Rand(shape Shape, opts ...Option) *Tensor { return random("rand", shape, false, opts) }

// Randn returns standard normal samples.
func Randn(shape Shape, opts ...Option) *Tensor { return random("randn", shape, true, opts) }

// rngState is the generator's state: the seed and every device type's
// counter offset (what torch.get_rng_state and the CUDA generators'
// states hold), for Checkpoint's recomputation.
type rngState struct {
	seed   uint64
	offset map[DeviceType]uint64
}

func getRNGState() rngState {
	rng.Lock()
	defer rng.Unlock()
	s := rngState{seed: rng.seed, offset: make(map[DeviceType]uint64, len(rng.offset))}
	for k, v := range rng.offset {
		s.offset[k] = v
	}
	return s
}

func setRNGState(s rngState) {
	rng.Lock()
	defer rng.Unlock()
	rng.seed = s.seed
	rng.offset = make(map[DeviceType]uint64, len(s.offset))
	for k, v := range s.offset {
		rng.offset[k] = v
	}
}
