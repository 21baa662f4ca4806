//go:build !amd64 || purego

package gemm

// archKernels lists the assembly kernels this CPU can run: none here.
func archKernels() []*kernelSet { return nil }
