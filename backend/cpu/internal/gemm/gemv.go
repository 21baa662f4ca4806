package gemm

// gemvMin is the n·k from which a one-row product (m == 1: a decoding
// step's x·Wᵀ) skips packing: packing B costs as much as the product
// itself when A has a single row, and the tiled kernels' threads spend
// more time waking than working. The product is then a streaming pass over
// B, split by columns across the threads.
const gemvMin = 1 << 15

// gemv computes the single row C[0, :n] = alpha·a·op(B) + beta·C.
func gemv[T float](p params[T], n, t int) {
	k := p.k
	x := make([]T, k)
	if p.transA { // A stored k×1
		for i := range k {
			x[i] = p.a[i*p.lda]
		}
	} else {
		copy(x, p.a[:k])
	}
	run := func(j0, j1 int) {
		c := p.c[j0:j1]
		if p.transB { // B stored n×k: one dot product per column
			for j := j0; j < j1; j++ {
				c[j-j0] = combine(p.alpha*dot(x, p.b[j*p.ldb:j*p.ldb+k]), p.beta, c[j-j0])
			}
			return
		}
		// B stored k×n: accumulate the rows of B's column block
		acc := make([]T, j1-j0)
		for i, xi := range x {
			if xi == 0 {
				continue
			}
			axpy(acc, xi, p.b[i*p.ldb+j0:i*p.ldb+j1])
		}
		for j := range acc {
			c[j] = combine(p.alpha*acc[j], p.beta, c[j])
		}
	}
	if t <= 1 || n < 2*64 {
		run(0, n)
		return
	}
	// column blocks of a multiple of 64, one per thread
	per := (n + t - 1) / t
	per = (per + 63) / 64 * 64
	blocks := (n + per - 1) / per
	runItems(blocks, blocks, func(_, b int) { run(b*per, min(n, b*per+per)) })
}

// combine is v + beta·c, with beta 0 ignoring c (NaNs included), as BLAS.
func combine[T float](v, beta, c T) T {
	if beta == 0 {
		return v
	}
	return v + beta*c
}

// dot is Σ x[i]·y[i] over eight accumulators.
func dot[T float](x, y []T) T {
	y = y[:len(x)]
	var s0, s1, s2, s3, s4, s5, s6, s7 T
	i := 0
	for ; i+8 <= len(x); i += 8 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
		s4 += x[i+4] * y[i+4]
		s5 += x[i+5] * y[i+5]
		s6 += x[i+6] * y[i+6]
		s7 += x[i+7] * y[i+7]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// axpy is d += a·x.
func axpy[T float](d []T, a T, x []T) {
	x = x[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d[i] += a * x[i]
		d[i+1] += a * x[i+1]
		d[i+2] += a * x[i+2]
		d[i+3] += a * x[i+3]
	}
	for ; i < len(d); i++ {
		d[i] += a * x[i]
	}
}
