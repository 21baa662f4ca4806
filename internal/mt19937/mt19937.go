// Package mt19937 is the 32-bit Mersenne Twister (Matsumoto and Nishimura,
// 1998) as PyTorch's CPU generator uses it, and torch.randperm on top of it,
// so that ember draws the same permutation as torch for the same seed
// (data.DistributedSampler visits the samples in torch's order).
package mt19937

const (
	n         = 624
	m         = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// Source is an MT19937 generator. Its zero value is not usable: call New.
type Source struct {
	state [n]uint32
	i     int
}

// New returns a generator seeded as torch.Generator().manual_seed(seed)
// seeds its CPU generator: the standard MT19937 initialisation from the low
// 32 bits of seed.
func New(seed uint64) *Source {
	s := &Source{i: n}
	s.state[0] = uint32(seed)
	for j := 1; j < n; j++ {
		p := s.state[j-1]
		s.state[j] = 1812433253*(p^(p>>30)) + uint32(j)
	}
	return s
}

// Uint32 returns the next 32 random bits.
func (s *Source) Uint32() uint32 {
	if s.i >= n {
		for k := 0; k < n; k++ {
			y := s.state[k]&upperMask | s.state[(k+1)%n]&lowerMask
			v := s.state[(k+m)%n] ^ y>>1
			if y&1 != 0 {
				v ^= matrixA
			}
			s.state[k] = v
		}
		s.i = 0
	}
	y := s.state[s.i]
	s.i++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// Randperm returns torch.randperm(k, generator=g) for a g seeded with
// g.manual_seed(seed): a Fisher–Yates shuffle of 0..k-1 that swaps element i
// with element i + Uint32() % (k-i). It needs k < 2³² (torch switches to
// 64-bit draws beyond that).
func Randperm(k int, seed uint64) []int {
	p := make([]int, k)
	for i := range p {
		p[i] = i
	}
	if k > 0 && uint64(k) >= 1<<32 {
		panic("mt19937: Randperm needs fewer than 2^32 elements")
	}
	s := New(seed)
	for i := 0; i < k-1; i++ {
		z := i + int(s.Uint32()%uint32(k-i))
		p[i], p[z] = p[z], p[i]
	}
	return p
}
