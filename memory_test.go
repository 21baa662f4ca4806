package ember

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// settleGC collects earlier tests' garbage, waits for its cleanups (which
// give CPU buffers back) and turns the collector off for the rest of the
// test, so that no cleanup changes the totals in the middle of it.
func settleGC(t *testing.T) {
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	for i := 0; i < 20; i++ {
		before := MemoryAllocated(CPU)
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
		if MemoryAllocated(CPU) == before {
			return
		}
	}
}

func TestMemoryAccountingCPU(t *testing.T) {
	settleGC(t)
	a0, s0 := MemoryAllocated(CPU), MemorySnapshot(CPU).Bytes
	x := Zeros(Shape{1000})                          // 4000 bytes
	y := Ones(Shape{10, 10}, Dtype(Float64))         // 800 bytes
	z := FromSlice([]int32{1, 2, 3}, nil).Reshape(3) // 12 bytes, a view shares storage
	if got := MemoryAllocated(CPU) - a0; got != 4812 {
		t.Fatalf("MemoryAllocated grew by %d, want 4812", got)
	}
	if got := MemorySnapshot(CPU).Bytes - s0; got != 4812 {
		t.Fatalf("snapshot grew by %d, want 4812", got)
	}
	if MaxMemoryAllocated(CPU) < MemoryAllocated(CPU) {
		t.Fatal("peak below current")
	}
	var found bool
	for _, ti := range MemorySnapshot(CPU).Tensors {
		if ti.ID == y.st.id {
			found = ti.Bytes == 800 && ti.DType == Float64 && ti.Shape.Equal(Shape{10, 10})
		}
	}
	if !found {
		t.Fatal("y missing from the snapshot")
	}
	x.Release()
	y.Release()
	z.Release()
	if got := MemoryAllocated(CPU) - a0; got != 0 {
		t.Fatalf("after Release MemoryAllocated differs by %d", got)
	}
	if got := MemorySnapshot(CPU).Bytes - s0; got != 0 {
		t.Fatalf("after Release the snapshot differs by %d", got)
	}
	if err := Try(func() { x.AddScalar(1) }); err == nil || !strings.Contains(err.Error(), "used after Release") {
		t.Fatalf("use after release: %v", err)
	}
	if err := ResetPeakMemoryStats(CPU); err != nil || MaxMemoryAllocated(CPU) != MemoryAllocated(CPU) {
		t.Fatalf("reset peak: %v", err)
	}
}

func TestMemoryReportSites(t *testing.T) {
	trace = true
	defer func() { trace = false }()
	x := Zeros(Shape{256})
	defer x.Release()
	var b bytes.Buffer
	if err := WriteMemoryReport(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "memory_test.go:") || !strings.Contains(b.String(), "== cpu:") {
		t.Fatalf("report lacks the site or device:\n%s", b.String())
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 512: "512 B", 1536: "1.50 KiB", 2 << 30: "2.00 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMemoryOfAbsentDevice(t *testing.T) {
	if CUDAAvailable() {
		t.Skip("a GPU is present")
	}
	if MemoryAllocated(CUDA(0)) != 0 {
		t.Fatal("absent device reports memory")
	}
	if _, err := MemoryStats(CUDA(0)); err == nil {
		t.Fatal("want an error for an absent device")
	}
}

// TestCPUCacheReuse: a released CPU tensor's buffer is counted as reserved
// while cached, Empty still returns zeros from it, and EmptyCache gives the
// cached bytes back.
func TestCPUCacheReuse(t *testing.T) {
	settleGC(t)
	if err := EmptyCache(CPU); err != nil {
		t.Fatal(err)
	}
	const n = 1 << 18 // 1 MiB of float32
	x := Full(Shape{n}, 5)
	a0 := MemoryAllocated(CPU)
	x.Release()
	a1, r1 := MemoryAllocated(CPU), MemoryReserved(CPU)
	if a1 != a0-4*n || r1-a1 < 4*n {
		t.Fatalf("after Release: allocated %d → %d, reserved %d; want allocated -%d and the buffer reserved", a0, a1, r1, 4*n)
	}
	if !strings.Contains(MemorySummary(CPU), "buffer cache") {
		t.Errorf("summary does not show the cache:\n%s", MemorySummary(CPU))
	}
	e := Empty(Shape{n})
	for i, v := range e.Float32s() {
		if v != 0 {
			t.Fatalf("Empty after reuse: element %d = %v", i, v)
		}
	}
	e.Release()
	if err := EmptyCache(CPU); err != nil {
		t.Fatal(err)
	}
	if a2, r2 := MemoryAllocated(CPU), MemoryReserved(CPU); (r1-a1)-(r2-a2) < 4*n {
		t.Fatalf("EmptyCache kept the buffer: reserved-allocated %d before, %d after", r1-a1, r2-a2)
	}
}
