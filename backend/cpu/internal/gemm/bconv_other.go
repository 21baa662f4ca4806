//go:build !amd64 || purego

package gemm

// interleave sets d[j] = x[a+j] | x[a+ld+j]<<16.
func interleave(d []uint32, x []uint16, a, ld int) { interleaveGo(d, x, a, ld) }
