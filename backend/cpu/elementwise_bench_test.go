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
