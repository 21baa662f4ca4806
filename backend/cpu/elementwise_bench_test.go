package cpu_test

import (
	"testing"

	"github.com/emberml/ember"
)

// The elementwise and reduction benchmarks of the CPU-speed cases, through
// the ember API: b.SetBytes counts the bytes each op reads and writes, so
// `go test -bench` prints MB/s comparable with `ember bench` (sum_16M,
// axpb_16M). Keep runs short on shared machines: -benchtime=5x.

const benchN = 16 << 20

// BenchmarkSum16M reduces 16M float32 to a scalar (reads 64 MiB).
func BenchmarkSum16M(b *testing.B) {
	x := ember.Rand(ember.Shape{benchN})
	b.SetBytes(4 * benchN)
	for b.Loop() {
		x.Sum().Release()
	}
}

// BenchmarkAxpb16M computes x*2+1 with MulScalar then AddScalar on 16M
// float32 (two ops, each reading and writing 64 MiB).
func BenchmarkAxpb16M(b *testing.B) {
	x := ember.Rand(ember.Shape{benchN})
	b.SetBytes(2 * 2 * 4 * benchN)
	for b.Loop() {
		t := x.MulScalar(2)
		t.AddScalar(1).Release()
		t.Release()
	}
}

// BenchmarkBroadcastAdd16M adds a [4096] row to a [4096, 4096] float32
// matrix (reads 64 MiB and the row, writes 64 MiB).
func BenchmarkBroadcastAdd16M(b *testing.B) {
	x := ember.Rand(ember.Shape{4096, 4096})
	row := ember.Rand(ember.Shape{4096})
	b.SetBytes(2*4*benchN + 4*4096)
	for b.Loop() {
		x.Add(row).Release()
	}
}

// BenchmarkBroadcastAddColumn16M adds a [4096, 1] column to a
// [4096, 4096] matrix: the broadcast runs along the inner dimension.
func BenchmarkBroadcastAddColumn16M(b *testing.B) {
	x := ember.Rand(ember.Shape{4096, 4096})
	col := ember.Rand(ember.Shape{4096, 1})
	b.SetBytes(2*4*benchN + 4*4096)
	for b.Loop() {
		x.Add(col).Release()
	}
}

// The strided patterns of a small CNN's training step (batch 64, 32
// channels, 28×28), each on 1.6M float32: BatchNorm's per-channel
// broadcast, a 2×2 max-pool window's max and argmax over the last dim, the
// window view copied contiguous, the gradient scattered back through a
// one-hot mask, and an NCHW permutation copied contiguous.

func BenchmarkChannelBroadcastMul(b *testing.B) {
	x := ember.Rand(ember.Shape{64, 32, 28, 28})
	s := ember.Rand(ember.Shape{1, 32, 1, 1})
	b.SetBytes(2 * 4 * 64 * 32 * 784)
	for b.Loop() {
		x.Mul(s).Release()
	}
}

func BenchmarkWindowMaxDim(b *testing.B) {
	x := ember.Rand(ember.Shape{64, 32, 14, 14, 4})
	b.SetBytes(4 * 64 * 32 * 784)
	for b.Loop() {
		v, i := x.MaxDim(4, false)
		v.Release()
		i.Release()
	}
}

func BenchmarkWindowCopy(b *testing.B) {
	x := ember.Rand(ember.Shape{64, 32, 28, 28})
	// [N, C, 14, 14, 2, 2] windows of a 2×2, stride-2 pool
	w := x.View(64, 32, 14, 2, 14, 2).Permute(0, 1, 2, 4, 3, 5)
	b.SetBytes(2 * 4 * 64 * 32 * 784)
	for b.Loop() {
		w.Contiguous().Release()
	}
}

func BenchmarkWindowWhereBroadcast(b *testing.B) {
	mask := ember.Rand(ember.Shape{64, 32, 14, 14, 4}).GtScalar(0.75)
	g := ember.Rand(ember.Shape{64, 32, 14, 14, 1})
	zero := ember.Scalar(0)
	b.SetBytes(2 * 4 * 64 * 32 * 784)
	for b.Loop() {
		ember.Where(mask, g, zero).Release()
	}
}

func BenchmarkPermuteCopy(b *testing.B) {
	x := ember.Rand(ember.Shape{32, 64, 14, 14}) // [C, N, H, W] as a GEMM leaves it
	p := x.Permute(1, 0, 2, 3)
	b.SetBytes(2 * 4 * 64 * 32 * 196)
	for b.Loop() {
		p.Contiguous().Release()
	}
}

func BenchmarkTransposeCopy(b *testing.B) {
	x := ember.Rand(ember.Shape{2048, 2048})
	b.SetBytes(2 * 4 * 2048 * 2048)
	for b.Loop() {
		x.T().Contiguous().Release()
	}
}

func BenchmarkBatchNormStats(b *testing.B) {
	x := ember.Rand(ember.Shape{64, 32, 28, 28})
	b.SetBytes(4 * 64 * 32 * 784)
	for b.Loop() {
		x.Sum(ember.Dims(0, 2, 3)).Release()
	}
}
