package gemm

import (
	"math"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/vec"
)

// The bfloat16 GEMM. Its operands are bfloat16 bits (the top half of a
// float32); its result is float32, each element a float32 sum of exact
// products, rounded once by the caller if it wants bfloat16.
//
// Where the CPU has AVX512_BF16 it runs a micro-kernel built on VDPBF16PS,
// which multiplies pairs of bfloat16 values and adds both products into a
// float32 lane. The packing is the float32 GEMM's with one change: each
// packed element is a 32-bit word holding two consecutive k values of op(A)
// or op(B), the lower k in the low half (a zero past an odd k). So the
// micro-kernel's layout and loops are the float32 kernel's (14×32 tiles),
// with kc counting pairs, and the driver (blocking, threads, edge tiles)
// is the float32 one run on words (see bfPack).
//
// VDPBF16PS rounds differently from a float32 FMA loop: per pair, lane
// acc += a₁·b₁, then acc += a₀·b₀ (the higher k first), each an exact
// product added with one round-to-nearest-even, with denormal inputs read
// as zero and denormal results flushed to zero (DAZ and FTZ, whatever
// MXCSR says). bfDot is that step in Go; the pure-Go kernel (bfTile) uses
// it, so it computes bit for bit what the assembly does, and the tests
// check that on a CPU with the instruction.
//
// Elsewhere: a CPU with the float32 assembly kernels (AVX2, AVX-512
// without BF16) widens the operands to float32 and runs Sgemm (faster than
// Go code); the pure-Go set runs bfTile.

// halfOps are a two-byte GEMM's operands (bits) and, with BgemmBF16 or
// HgemmF16, where C goes rounded.
type halfOps struct {
	a              []uint16
	lda            int
	b              []uint16
	ldb            int
	transA, transB bool
	out            []uint16 // C rounded by round, ldo apart; nil: C stays float32
	ldo            int
	round          func(dst []uint16, src []float32)
}

// finish rounds the finished rows i0..i0+rows, columns j0..j0+cols of C
// (float32, ldc apart) into out, while they are in cache.
func (q *halfOps) finish(c []float32, ldc, i0, rows, j0, cols int) {
	if q.out == nil {
		return
	}
	for i := i0; i < i0+rows; i++ {
		q.round(q.out[i*q.ldo+j0:][:cols], c[i*ldc+j0:][:cols])
	}
}

// bfPack packs bfloat16 operands into pair words for a kernel[float32]
// whose k is the number of pairs.
type bfPack struct {
	halfOps
	k int // k in bfloat16 values (the params' k is pairs)
}

// packA packs rows i0..i0+mc and pairs p0..p0+kc of op(A) into mr-row
// micro-panels (see packA).
func (q *bfPack) packA(dst []float32, i0, mc, p0, kc, mr int, simd bool) {
	q.panels(dst, q.a, q.lda, !q.transA, i0, mc, p0, kc, mr, simd)
}

// packB packs pairs p0..p0+kc and columns j0..j0+nc of op(B) into
// nr-column micro-panels (see packB).
func (q *bfPack) packB(dst []float32, p0, kc, j0, nc, nr int, simd bool) {
	q.panels(dst, q.b, q.ldb, q.transB, j0, nc, p0, kc, nr, simd)
}

// panels packs lines r0..r0+n (rows of A, columns of B) and pairs
// p0..p0+kc of src into w-line micro-panels of k-pair words: panel-major,
// then pair, then line, zero-padded past n and past an odd k. alongLine
// says that a line's k values are consecutive in src (A stored m×k, B
// stored n×k); otherwise two k values of a pair are ld apart.
func (q *bfPack) panels(dst []float32, src []uint16, ld int, alongLine bool, r0, n, p0, kc, w int, simd bool) {
	d := unsafe.Slice((*uint32)(unsafe.Pointer(&dst[0])), len(dst))
	k0, k1 := 2*p0, min(2*(p0+kc), q.k)
	full := (k1 - k0) / 2          // pairs with both values
	at := func(line, kk int) int { // src index of (line, k)
		if alongLine {
			return line*ld + kk
		}
		return kk*ld + line
	}
	for ir := 0; ir < n; ir += w {
		lines := min(w, n-ir)
		dp := d[ir*kc : ir*kc+w*kc]
		if simd && full > 0 && bfPanelSIMD(dp, src, at(r0+ir, k0), ld, lines, w, full, alongLine) {
			// the full pairs with AVX-512, an odd k's last one here
			if full < kc {
				tail := dp[full*w : full*w+w]
				clear(tail)
				for i := range lines {
					tail[i] = uint32(src[at(r0+ir+i, k0+2*full)])
				}
			}
			continue
		}
		if lines < w {
			clear(dp)
		}
		if alongLine {
			for i := 0; i < lines; i++ {
				line := src[at(r0+ir+i, k0):at(r0+ir+i, k1)]
				for p := 0; p < full; p++ {
					dp[p*w+i] = uint32(line[2*p]) | uint32(line[2*p+1])<<16
				}
				if full < kc {
					dp[full*w+i] = uint32(line[2*full])
				}
			}
			continue
		}
		// two rows of src make a pair row of the panel
		for p := 0; p < full; p++ {
			s0 := src[at(r0+ir, k0+2*p):][:lines]
			s1 := src[at(r0+ir, k0+2*p+1):][:lines]
			out := dp[p*w:][:lines]
			for i := range out {
				out[i] = uint32(s0[i]) | uint32(s1[i])<<16
			}
		}
		if full < kc {
			s0 := src[at(r0+ir, k0+2*full):][:lines]
			out := dp[full*w:][:lines]
			for i := range out {
				out[i] = uint32(s0[i])
			}
		}
	}
}

// Bgemm computes C = op(A)·op(B), row-major, from bfloat16 operands (their
// bits) into float32, overwriting C. op(A) is m×k, op(B) is k×n; transA:
// A is stored k×m (lda ≥ m) and used transposed; likewise transB. Each
// element of C is a float32 accumulation of exact products (see the notes
// above on VDPBF16PS's rounding where the CPU has it).
func Bgemm(transA, transB bool, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []float32, ldc int) {
	bgemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, nil, 0)
}

// BgemmBF16 is Bgemm with a bfloat16 result: C (ldc apart) is the float32
// product rounded once (see RoundBF16). scratch holds the float32 product,
// m×n (n apart); nil: allocated. Each part of C is rounded as soon as it is
// finished, while it is in cache.
func BgemmBF16(transA, transB bool, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []uint16, ldc int, scratch []float32) {
	checkMatrix("c", m, n, ldc, len(c))
	if scratch == nil {
		scratch = make([]float32, m*n)
	}
	bgemm(transA, transB, m, n, k, a, lda, b, ldb, scratch, n, c, ldc)
}

func bgemm(transA, transB bool, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []float32, ldc int, out []uint16, ldo int) {
	if checkArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc) {
		return
	}
	pk := &bfPack{halfOps{a, lda, b, ldb, transA, transB, out, ldo, RoundBF16}, k}
	ks := current.Load()
	if k == 0 || ks.b == nil {
		if k == 0 {
			scale(0, c, ldc, 0, m, 0, n)
		} else {
			ar, ac := rowsCols(transA, m, k)
			br, bc := rowsCols(transB, k, n)
			wa, wb := widenMatrix(a, ar, ac, lda, bf16Run), widenMatrix(b, br, bc, ldb, bf16Run)
			gemm(ks.s, transA, transB, m, n, k, 1, wa, lda, wb, ldb, 0, c, ldc)
		}
		pk.finish(c, ldc, 0, m, 0, n)
		return
	}
	p := params[float32]{kr: ks.b, k: (k + 1) / 2, alpha: 1, c: c, ldc: ldc, ext: pk}
	if ks.amx != nil && m >= ks.amx.mr {
		p.kr, p.k, p.ext = ks.amx, amxPairs(k), &amxPack{*pk}
	}
	t := numThreads()
	if t <= 1 || float64(m)*float64(n)*float64(k) < 2*parallelFlops {
		p.run(0, m, 0, n)
		return
	}
	parallel(&p, m, n, t)
}

// RoundBF16 sets dst[i] to the bfloat16 nearest src[i], ties to even, for
// i < len(src): infinities stay, values past the largest finite bfloat16
// round to infinity, every NaN becomes 0xFFFF (package backend's ToBF16,
// with AVX-512 where the CPU has it).
func RoundBF16(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	done := roundBF16SIMD(dst, src)
	for i, v := range src[done:] {
		dst[done+i] = roundBF16(v)
	}
}

func roundBF16(f float32) uint16 {
	if f != f {
		return 0xFFFF
	}
	u := math.Float32bits(f)
	return uint16((u + 0x7FFF + (u>>16)&1) >> 16)
}

// BgemmPath says how Bgemm computes with the kernel set in use.
func BgemmPath() string {
	ks := current.Load()
	switch {
	case ks.b == nil:
		return "float32 GEMM on widened operands"
	case ks.amx != nil && ks.amx.name == "amx":
		return "bf16 GEMM with AMX-BF16 tiles (TDPBF16PS)"
	case ks.amx != nil:
		return "bf16 GEMM in Go on emulated AMX tiles"
	case ks.b.name == "avx512":
		return "bf16 GEMM with VDPBF16PS (AVX512_BF16)"
	default:
		return "bf16 GEMM in Go (VDPBF16PS's arithmetic)"
	}
}

func rowsCols(trans bool, r, c int) (int, int) {
	if trans {
		return c, r
	}
	return r, c
}

// widenMatrix returns a rows×cols matrix of two-byte bits (ld apart),
// widened by run, as float32, ld apart (the elements between rows are not
// read: zero).
func widenMatrix(s []uint16, rows, cols, ld int, run func([]float32, []uint16)) []float32 {
	w := make([]float32, (rows-1)*ld+cols)
	for i := 0; i < rows; i++ {
		run(w[i*ld:i*ld+cols], s[i*ld:i*ld+cols])
	}
	return w
}

// bf16Run widens the bfloat16 bits src into dst (exact; vec's loops).
func bf16Run(dst []float32, src []uint16) {
	vec.F32FromBF16(dst, unsafe.Slice((*backend.BF16)(unsafe.Pointer(unsafe.SliceData(src))), len(src)))
}

// widenBits returns the bfloat16 bits s as float32 (nil for nil).
func widenBits(s []uint16) []float32 {
	if s == nil {
		return nil
	}
	return widenMatrix(s, 1, len(s), len(s), bf16Run)
}

// bfWiden is the float32 value VDPBF16PS reads for a bfloat16: exact, with
// denormals read as zero (of their sign).
func bfWiden(h uint16) float32 {
	if h&0x7F80 == 0 {
		h &= 0x8000
	}
	return math.Float32frombits(uint32(h) << 16)
}

// bfAdd is acc + x·y (x and y bfloat16 values) rounded once to float32,
// nearest even, a denormal result flushed to zero: the product is exact in
// float64 and float64's 53 bits make the rounding through it innocuous
// (at least 2·24+2 bits).
func bfAdd(acc, x, y float32) float32 {
	r := float32(float64(acc) + float64(x)*float64(y))
	if math.Float32bits(r)&0x7F800000 == 0 {
		r = math.Float32frombits(math.Float32bits(r) & 0x80000000)
	}
	return r
}

// bfDot is one VDPBF16PS lane: acc plus the products of the pair words a
// and b, the high halves' first.
func bfDot(acc float32, a, b uint32) float32 {
	acc = bfAdd(acc, bfWiden(uint16(a>>16)), bfWiden(uint16(b>>16)))
	return bfAdd(acc, bfWiden(uint16(a)), bfWiden(uint16(b)))
}

// bfKernel returns the pure-Go bfloat16 micro-kernel for mr×nr tiles
// (mr·nr ≤ 512) computing the first rows rows (see kernel.edge).
func bfKernel(rows, mr, nr int) kernelFunc[float32] {
	if mr*nr > 512 {
		panic("bfKernel: tile too large")
	}
	return func(kc int, a, b, c *float32, ldc int, accum int) { bfTile(rows, mr, nr, kc, a, b, c, ldc, accum) }
}

// bfTile is bfKernel's kernel: the assembly's arithmetic, lane by lane.
//
//go:norace
func bfTile(rows, mr, nr, kc int, a, b, c *float32, ldc int, accum int) {
	as := unsafe.Slice((*uint32)(unsafe.Pointer(a)), mr*kc)
	bs := unsafe.Slice((*uint32)(unsafe.Pointer(b)), nr*kc)
	var acc [512]float32
	for p := 0; p < kc; p++ {
		bp := bs[p*nr : p*nr+nr]
		for i, av := range as[p*mr : p*mr+rows] {
			row := acc[i*nr : i*nr+nr]
			for j, bv := range bp {
				row[j] = bfDot(row[j], av, bv)
			}
		}
	}
	cs := unsafe.Slice(c, (rows-1)*ldc+nr)
	for i := 0; i < rows; i++ {
		dst := cs[i*ldc : i*ldc+nr]
		src := acc[i*nr : i*nr+nr]
		if accum == 0 {
			copy(dst, src)
			continue
		}
		for j, v := range src {
			dst[j] += v
		}
	}
}

// bfGoKernel is the pure-Go bfloat16 kernel with the AVX-512 set's shape
// and edge kernels.
func bfGoKernel(name string) *kernel[float32] {
	sh := avx512B
	kr := newKernel(name, sh, bfKernel(sh.mr, sh.mr, sh.nr), nil, false)
	kr.edge = make([]kernelFunc[float32], sh.mr)
	for r := 1; r < sh.mr; r++ {
		kr.edge[r] = bfKernel(r, sh.mr, sh.nr)
	}
	return kr
}
