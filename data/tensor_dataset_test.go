package data

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

func TestTensorDataset(t *testing.T) {
	x := ember.Arange(0, 12, 1).Reshape(6, 2)
	y := ember.FromSlice([]int{0, 1, 0, 1, 1, 0}, nil)
	ds, err := NewTensorDataset(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 6 {
		t.Fatalf("Len %d", ds.Len())
	}
	var got [][]float32
	var labels []int64
	for b := range NewLoader(ds, BatchSize(4)).Epoch(0) {
		got = append(got, b.Input.Float32s())
		labels = append(labels, b.Target.Int64s()...)
	}
	want := [][]float32{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11}}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(labels, []int64{0, 1, 0, 1, 1, 0}) {
		t.Fatalf("batches %v, labels %v", got, labels)
	}
	if _, err := NewTensorDataset(x, y.Narrow(0, 0, 5)); err == nil {
		t.Fatal("size mismatch accepted")
	}
	for _, in := range [][2]*ember.Tensor{{nil, y}, {x, nil}, {nil, nil}} {
		if _, err := NewTensorDataset(in[0], in[1]); err == nil {
			t.Fatalf("NewTensorDataset(%v, %v) accepted", in[0], in[1])
		}
	}
	// torch's TensorDataset[i]: -1 is the last sample, past either end an
	// IndexError (was a ShapeError from select)
	if a, b := ds.Get(-1); fmt.Sprint(a.Float32s(), b.Int64s()) != "[10 11] [0]" {
		t.Errorf("Get(-1) = %v %v", a, b)
	}
	for _, i := range []int{6, -7} {
		e := testenv.Raises[*ember.IndexError](t, "Get out of range", func() { ds.Get(i) })
		if e.Op != "data.TensorDataset.Get" || e.Index != int64(i) || e.Size != 6 {
			t.Error(e)
		}
	}
}
