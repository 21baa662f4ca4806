package ember

import (
	"errors"
	"testing"
)

func TestScopeReleasesTemporaries(t *testing.T) {
	w := Ones(Shape{4, 4})
	var out *Tensor
	settleGC(t)
	a0 := MemoryAllocated(CPU)
	Scope(func() {
		x := w.MulScalar(2)        // temporary: 64 B
		y := x.Add(w)              // temporary
		out = Keep(y.Sum(Dims(0))) // kept: 16 B
		inner := Zeros(Shape{100}) // released by the inner scope
		Scope(func() { Keep(inner.AddScalar(1)).Release() })
	})
	if got := MemoryAllocated(CPU) - a0; got != 16 {
		t.Fatalf("after the scope %d bytes remain, want the kept 16", got)
	}
	if got := out.Float32s(); got[0] != 12 { // 4 rows of 2+1
		t.Fatalf("kept tensor = %v, want 12s", got)
	}
	if w.Sum().Item() != 16 {
		t.Fatal("a tensor from before the scope was touched")
	}
	var re *ReleasedError
	var tmp *Tensor
	Scope(func() { tmp = w.AddScalar(1) })
	if err := Try(func() { tmp.Sum() }); !errors.As(err, &re) {
		t.Fatalf("using a scope temporary afterwards: %v", err)
	}
}
