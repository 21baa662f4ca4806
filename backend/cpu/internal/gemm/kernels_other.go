//go:build !amd64 || purego

package gemm

// archKernels lists the assembly kernels this CPU can run: none here.
func archKernels() []*kernelSet { return nil }

// AMXStatus says whether Bgemm runs the AMX-BF16 kernel: never here.
func AMXStatus() string { return "" }
