package main

import (
	"fmt"
	"io"

	"github.com/emberml/ember"
)

// bench times MatMul of two matmul×matmul float32 matrices and x*x on a
// size×size float32 tensor on dev, one warm-up then reps runs with
// ember.Synchronize before each clock read, and prints one line per op in
// the format scripts/gpu-check.sh's bench.py prints for PyTorch:
//
//	BENCH ember matmul 4096 cuda:0 best_ms=… mean_ms=… reps=… tflops=…
//	BENCH ember mul 10000 cuda:0 best_ms=… mean_ms=… reps=… gbps=…
//
// tflops counts 2·n³ flops; gbps counts 12 bytes an element (two float32
// reads, one write), as for any elementwise binary op.
func bench(w io.Writer, dev ember.Device, matmul, size, reps int) error {
	if dev.Type == ember.MetaType {
		return fmt.Errorf("--device %v: meta tensors have no data, so nothing runs to time; want cpu or cuda:N", dev)
	}
	if err := ember.CheckDevice(dev); err != nil {
		return err
	}
	if matmul > 0 {
		a := ember.Randn(ember.Shape{matmul, matmul}, ember.On(dev))
		b := ember.Randn(ember.Shape{matmul, matmul}, ember.On(dev))
		best, mean, out, err := timeOp(dev, reps, func() *ember.Tensor { return a.MatMul(b) })
		if err != nil {
			return err
		}
		out.Release()
		a.Release()
		b.Release()
		n := float64(matmul)
		fmt.Fprintf(w, "BENCH ember matmul %d %v best_ms=%.4f mean_ms=%.4f reps=%d tflops=%.2f\n",
			matmul, dev, best*1e3, mean*1e3, reps, 2*n*n*n/best/1e12)
	}
	if size > 0 {
		x := ember.Randn(ember.Shape{size, size}, ember.On(dev))
		best, mean, out, err := timeOp(dev, reps, func() *ember.Tensor { return x.Mul(x) })
		if err != nil {
			return err
		}
		out.Release()
		x.Release()
		n := float64(size)
		fmt.Fprintf(w, "BENCH ember mul %d %v best_ms=%.4f mean_ms=%.4f reps=%d gbps=%.1f\n",
			size, dev, best*1e3, mean*1e3, reps, 12*n*n/best/1e9)
	}
	return nil
}
