//go:build !linux

package gemm

// osYield gives the CPU to another runnable thread where the OS lets us
// (elsewhere the poll loop's runtime.Gosched alone yields).
func osYield() {}
