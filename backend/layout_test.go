package backend_test

import (
	"reflect"
	"testing"

	"github.com/emberml/ember/backend"
)

func TestCoalesceViews(t *testing.T) {
	// dst: contiguous [2, 3, 4]; src: a [2, 3, 4] window at offset 5 of a
	// [2, 3, 8] buffer, so its last two dims do not merge.
	dst := backend.View{Shape: []int{2, 3, 4}, Strides: []int{12, 4, 1}}
	src := backend.View{Shape: []int{2, 3, 4}, Strides: []int{24, 8, 1}, Offset: 5}
	l := backend.CoalesceViews(dst.Shape, dst, src)
	want := backend.Layout{Shape: []int{6, 4}, Strides: [][]int{{4, 1}, {8, 1}}, Base: []int{0, 5}}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("CoalesceViews = %+v, want %+v", l, want)
	}
	if l.Total() != 24 || l.Inner(1) != 1 || l.Outer(1) != 8 || l.Outer(0) != 4 {
		t.Errorf("Total %d Inner(1) %d Outer(1) %d Outer(0) %d, want 24 1 8 4", l.Total(), l.Inner(1), l.Outer(1), l.Outer(0))
	}

	// A broadcast scalar and a contiguous vector merge to one dim.
	v := backend.View{Shape: []int{3, 5}, Strides: []int{5, 1}, Offset: 2}
	s := backend.View{Shape: []int{3, 5}, Strides: []int{0, 0}}
	l = backend.CoalesceViews(v.Shape, v, s)
	want = backend.Layout{Shape: []int{15}, Strides: [][]int{{1}, {0}}, Base: []int{2, 0}}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("CoalesceViews = %+v, want %+v", l, want)
	}
	if l.Outer(0) != 0 || l.Total() != 15 {
		t.Errorf("1-D Outer %d Total %d, want 0 15", l.Outer(0), l.Total())
	}

	// A single element is shape [1], stride 0.
	one := backend.View{Shape: []int{1, 1}, Strides: []int{1, 1}, Offset: 7}
	l = backend.CoalesceViews(one.Shape, one)
	want = backend.Layout{Shape: []int{1}, Strides: [][]int{{0}}, Base: []int{7}}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("CoalesceViews = %+v, want %+v", l, want)
	}
}
