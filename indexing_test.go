package ember

import (
	"reflect"
	"testing"
)

// TestGradFixturesIndex checks index_select, advanced indexing, masked
// select and flip, and their gradients, against PyTorch
// (testdata/gen_index_fixtures.py).
func TestGradFixturesIndex(t *testing.T) {
	runGradFixtures(t, "index", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var op string
		c.param(t, "op", &op)
		x := in["x"]
		switch op {
		case "index_select":
			var d int
			c.param(t, "dim", &d)
			return x.IndexSelect(d, in["i"])
		case "index":
			var idx []*Tensor
			for _, k := range []string{"i", "j", "k"} {
				if ix, ok := in[k]; ok {
					idx = append(idx, ix)
				}
			}
			return x.IndexWith(idx...)
		case "masked_select":
			return x.MaskedSelect(in["m"].Cast(Bool))
		case "flip":
			var dims []int
			c.param(t, "dims", &dims)
			return x.Flip(dims...)
		}
		t.Fatalf("unknown op %q", op)
		return nil
	}, nil)
}

func TestIndexingIdioms(t *testing.T) {
	for _, dev := range testDevices() {
		x := FromSlice([]int{3, -1, 0, 5, -2, 7}, Shape{2, 3}, On(dev))
		if x.DType() != Int64 {
			t.Fatalf("FromSlice([]int) dtype %v, want int64", x.DType())
		}
		// x[x > 0] (torch: tensor([3, 5, 7]))
		if got := x.IndexWith(x.GtScalar(0)).Int64s(); !reflect.DeepEqual(got, []int64{3, 5, 7}) {
			t.Fatalf("x[x > 0] = %v, want [3 5 7]", got)
		}
		// x[mask over rows]: rows 1
		if got := x.IndexWith(FromSlice([]bool{false, true}, nil, On(dev))).ToList(); !reflect.DeepEqual(got, [][]int64{{5, -2, 7}}) {
			t.Fatalf("x[[False, True]] = %v", got)
		}
		if got := x.ToList(); !reflect.DeepEqual(got, [][]int64{{3, -1, 0}, {5, -2, 7}}) {
			t.Fatalf("tolist = %#v", got)
		}
		if got := x.Flip(1).Sum(Dims(0)).ToList(); !reflect.DeepEqual(got, []int64{7, -3, 8}) {
			t.Fatalf("flip(1).sum(0) = %v, want [7 -3 8]", got)
		}
		if got := Scalar(2.5, On(dev)).ToList(); got != float32(2.5) {
			t.Fatalf("0-dim tolist = %#v", got)
		}
		if got := Zeros(Shape{2, 0, 3}, On(dev)).ToList(); !reflect.DeepEqual(got, [][][]float32{{}, {}}) {
			t.Fatalf("empty tolist = %#v", got)
		}
		for name, f := range map[string]func(){
			"out of range":  func() { x.IndexWith(FromSlice([]int{2}, nil, On(dev))) },
			"float indices": func() { x.IndexSelect(0, Ones(Shape{1}, On(dev))) },
			// on CUDA the range check is a deferred check, raised by the read
			"negative index_select": func() { x.IndexSelect(0, FromSlice([]int{-1}, nil, On(dev))).CPU() },
			"repeated flip dim":     func() { x.Flip(0, -2) },
		} {
			if err := Try(f); err == nil {
				t.Errorf("%s: no error", name)
			}
		}
	}
}

// BenchmarkMaskIndex times x[x > 0] on a million elements, forward and
// backward (one Gather and one index-add, not a Select per element).
func BenchmarkMaskIndex(b *testing.B) {
	x := Randn(Shape{1000, 1000}).SetRequiresGrad(true)
	m := x.Detach().GtScalar(0)
	for i := 0; i < b.N; i++ {
		x.IndexWith(m).Sum().Backward()
	}
}
