package ember_test

import (
	"errors"
	"reflect"
	"testing"
	"unsafe"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend"
)

func TestUnsafeViewWritesInPlace(t *testing.T) {
	x := ember.FromSlice([]float32{0, 1, 2, 3, 4, 5}, ember.Shape{2, 3})
	col := x.Narrow(1, 1, 2).T() // [[1, 4], [2, 5]]: offset 1, strides (1, 3)
	v, written := ember.UnsafeView(col)
	if !reflect.DeepEqual(v.Shape, []int{2, 2}) || !reflect.DeepEqual(v.Strides, []int{1, 3}) || v.Offset != 1 {
		t.Fatalf("view shape %v strides %v offset %d, want [2 2] [1 3] 1", v.Shape, v.Strides, v.Offset)
	}
	hs, ok := v.S.(backend.HostStorage)
	if !ok {
		t.Fatalf("a CPU tensor's storage is %T, not a backend.HostStorage", v.S)
	}
	if hs.Len() != 6 || hs.Pinned() {
		t.Errorf("storage Len %d Pinned %v, want 6 false", hs.Len(), hs.Pinned())
	}
	// Element [1, 0] of col is x[0, 2]: storage index 1 + 1*1 + 0*3 = 2.
	hs.Data().([]float32)[v.Offset+v.Strides[0]] = 20
	// Bytes of elements 4 and 5 (x[1, 1], x[1, 2]).
	b := backend.HostBytes(hs, 4, 2)
	if len(b) != 8 {
		t.Fatalf("HostBytes of 2 float32: %d bytes, want 8", len(b))
	}
	copy(unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), 2), []float32{40, 50})
	written()
	if got, want := x.Float32s(), []float32{0, 1, 20, 3, 40, 50}; !reflect.DeepEqual(got, want) {
		t.Errorf("after writing through the view x = %v, want %v", got, want)
	}
	if backend.HostBytes(hs, 6, 0) != nil {
		t.Errorf("HostBytes of no elements is not nil")
	}
}

func TestUnsafeViewWrittenBumpsVersion(t *testing.T) {
	// Mul saves its inputs; a write marked with written must make backward
	// refuse them, as after an in-place op.
	for _, mark := range []bool{false, true} {
		w := ember.FromSlice([]float32{1, 2, 3}, ember.Shape{3}).SetRequiresGrad(true)
		loss := w.Mul(w).Sum()
		v, written := ember.UnsafeView(w)
		v.S.(backend.HostStorage).Data().([]float32)[0] = 7
		if mark {
			written()
		}
		err := ember.Try(loss.Backward)
		var ae *ember.AutogradError
		if mark && !errors.As(err, &ae) {
			t.Errorf("backward after a marked write: %v, want an AutogradError", err)
		}
		if !mark {
			if err != nil {
				t.Fatalf("backward after an unmarked write: %v", err)
			}
			// d(sum w²)/dw = 2w, read from the saved (overwritten) w.
			if got, want := w.Grad().Float32s(), []float32{14, 4, 6}; !reflect.DeepEqual(got, want) {
				t.Errorf("grad %v, want %v", got, want)
			}
		}
	}
}

func TestUnsafeViewReleased(t *testing.T) {
	x := ember.FromSlice([]float32{1, 2}, ember.Shape{2})
	x.Release()
	err := ember.Try(func() { ember.UnsafeView(x) })
	var re *ember.ReleasedError
	if !errors.As(err, &re) {
		t.Errorf("UnsafeView of a released tensor: %v, want a ReleasedError", err)
	}
}

func TestErrNoDataIsOneValue(t *testing.T) {
	if ember.ErrNoData != backend.ErrNoData {
		t.Fatal("ember.ErrNoData and backend.ErrNoData are different values")
	}
	m := ember.Zeros(ember.Shape{2}, ember.On(ember.Meta))
	// The root's own check (Data) and the meta backend's ToHost.
	if err := ember.Try(func() { m.Data() }); !errors.Is(err, backend.ErrNoData) {
		t.Errorf("Data of a meta tensor: %v, want backend.ErrNoData", err)
	}
	mb, ok := backend.Get(backend.MetaType)
	if !ok {
		t.Fatal("no meta backend registered")
	}
	v, _ := ember.UnsafeView(m)
	if err := mb.ToHost(v.S, make([]float32, 2)); !errors.Is(err, ember.ErrNoData) {
		t.Errorf("the meta backend's ToHost: %v, want ember.ErrNoData", err)
	}
}
