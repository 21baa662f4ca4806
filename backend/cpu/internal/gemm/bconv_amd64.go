//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

var hasAVX512BW = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

// interleave sets d[j] = x[a+j] | x[a+ld+j]<<16 (ld > 0), 32 words at a
// time with AVX-512.
func interleave(d []uint32, x []uint16, a, ld int) {
	n := len(d)
	if !hasAVX512BW || n == 0 {
		interleaveGo(d, x, a, ld)
		return
	}
	_ = x[a+ld+n-1]
	for j := 0; j < n; j += 32 {
		m := 1<<min(32, n-j) - 1
		packBInter(&d[j], &x[a+j], ld, 1, 32, m, m)
	}
}
