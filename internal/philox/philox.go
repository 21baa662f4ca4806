// Package philox is the counter-based random number generator Philox4x32-10
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011),
// the generator behind curand and PyTorch's CUDA random ops. Being counter
// based, element i of a random tensor is a pure function of (seed, counter),
// so the CPU backend and a CUDA kernel draw the same stream.
//
// The stream contract every backend follows: element i of a call that starts
// at counter offset uses Block(seed, offset+i/4) lane i%4. Uniform takes the
// lane's 32 bits; Normal pairs lanes (0,1) and (2,3) through Box–Muller.
package philox

import "math"

const (
	m0 = 0xD2511F53
	m1 = 0xCD9E8D57
	w0 = 0x9E3779B9
	w1 = 0xBB67AE85
)

// Raw runs ten Philox rounds over counter c with key k.
func Raw(c [4]uint32, k [2]uint32) [4]uint32 {
	for r := 0; r < 10; r++ {
		p0 := uint64(m0) * uint64(c[0])
		p1 := uint64(m1) * uint64(c[2])
		c = [4]uint32{uint32(p1>>32) ^ c[1] ^ k[0], uint32(p1), uint32(p0>>32) ^ c[3] ^ k[1], uint32(p0)}
		k[0] += w0
		k[1] += w1
	}
	return c
}

// Block returns the four 32-bit outputs for a 64-bit seed and counter.
func Block(seed, counter uint64) [4]uint32 {
	return Raw([4]uint32{uint32(counter), uint32(counter >> 32), 0, 0}, [2]uint32{uint32(seed), uint32(seed >> 32)})
}

// Uniform32 maps 32 random bits to [0, 1) in float32 (24 bits of mantissa).
func Uniform32(x uint32) float32 { return float32(x>>8) * (1.0 / 16777216.0) }

// UniformDigits maps the top digits (at most 24) of 32 random bits to
// [0, 1): k·2^-digits for k < 2^digits, exact in float32 and in a float
// type with digits bits of precision (8 for bfloat16, 11 for float16), so
// that rounding it to that type keeps it below 1. It is Uniform32 with its
// low bits dropped (rounded down to a multiple of 2^-digits), and PyTorch's
// rule for a float type's uniform draw, (bits & (2^digits - 1))·2^-digits,
// taken from the top bits of the lane rather than the bottom.
func UniformDigits(x uint32, digits uint) float32 {
	return float32(x>>(32-digits)) * float32(1/float64(uint64(1)<<digits))
}

// Uniform64 maps 32 random bits to [0, 1) in float64.
func Uniform64(x uint32) float64 { return float64(x) * (1.0 / 4294967296.0) }

// BoxMuller turns two 32-bit draws into two independent standard normals.
func BoxMuller(a, b uint32) (float64, float64) {
	u1 := (float64(a) + 1) * (1.0 / 4294967296.0) // (0, 1]
	u2 := float64(b) * (1.0 / 4294967296.0)
	r := math.Sqrt(-2 * math.Log(u1))
	s, c := math.Sincos(2 * math.Pi * u2)
	return r * c, r * s
}

// FillUniform32 writes element i of the stream (seed, offset) into dst[i-start]
// for i in [start, start+len(dst)).
func FillUniform32(dst []float32, seed, offset uint64, start int) {
	fill(len(dst), seed, offset, start, func(j int, x [4]uint32, lane int) { dst[j] = Uniform32(x[lane]) })
}

// FillUniformDigits is FillUniform32 with UniformDigits(x, digits).
func FillUniformDigits(dst []float32, digits uint, seed, offset uint64, start int) {
	fill(len(dst), seed, offset, start, func(j int, x [4]uint32, lane int) { dst[j] = UniformDigits(x[lane], digits) })
}

// FillUniform64 is FillUniform32 for float64.
func FillUniform64(dst []float64, seed, offset uint64, start int) {
	fill(len(dst), seed, offset, start, func(j int, x [4]uint32, lane int) { dst[j] = Uniform64(x[lane]) })
}

// Normal returns the standard normal of lane `lane` in block x.
func Normal(x [4]uint32, lane int) float64 {
	p := lane &^ 1
	z0, z1 := BoxMuller(x[p], x[p+1])
	if lane&1 == 0 {
		return z0
	}
	return z1
}

// FillNormal32 writes standard normals for elements [start, start+len(dst)).
func FillNormal32(dst []float32, seed, offset uint64, start int) {
	fill(len(dst), seed, offset, start, func(j int, x [4]uint32, lane int) { dst[j] = float32(Normal(x, lane)) })
}

// FillNormal64 is FillNormal32 for float64.
func FillNormal64(dst []float64, seed, offset uint64, start int) {
	fill(len(dst), seed, offset, start, func(j int, x [4]uint32, lane int) { dst[j] = Normal(x, lane) })
}

// fill walks blocks; set is called once per element (the generator costs far
// more than the call).
func fill(n int, seed, offset uint64, start int, set func(j int, x [4]uint32, lane int)) {
	var x [4]uint32
	cur := uint64(math.MaxUint64)
	for j := 0; j < n; j++ {
		i := start + j
		c := offset + uint64(i/4)
		if c != cur || j == 0 {
			x = Block(seed, c)
			cur = c
		}
		set(j, x, i%4)
	}
}

// Blocks is the number of counters a call drawing n elements consumes.
func Blocks(n int) uint64 { return uint64((n + 3) / 4) }
