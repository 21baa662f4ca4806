package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

func ExampleTensor_Gather() {
	x := ember.FromSlice([]float32{1, 2, 3, 4, 5, 6}, ember.Shape{2, 3})
	idx := ember.FromSlice([]int64{2, 0, 1, 1}, ember.Shape{2, 2})
	fmt.Println(x.Gather(1, idx).Float32s())
	// Output: [3 1 5 5]
}

func ExampleTensor_IndexSelect() {
	x := ember.FromSlice([]float32{1, 2, 3, 4, 5, 6}, ember.Shape{3, 2})
	fmt.Println(x.IndexSelect(0, ember.FromSlice([]int64{2, 0}, ember.Shape{2})).Float32s())
	// Output: [5 6 1 2]
}

func ExampleTensor_ScatterAdd() {
	z := ember.Zeros(ember.Shape{3})
	idx := ember.FromSlice([]int64{0, 2, 0}, ember.Shape{3})
	fmt.Println(z.ScatterAdd(0, idx, ember.FromSlice([]float32{1, 2, 3}, ember.Shape{3})).Float32s())
	// Output: [4 0 2]
}

func ExampleTensor_Sort() {
	x := ember.FromSlice([]float32{3, 1, 2, 1}, ember.Shape{4})
	v, i := x.Sort(0, false)
	fmt.Println(v.Float32s(), i.Int64s()) // stable: the two 1s keep their order
	// Output: [1 1 2 3] [1 3 2 0]
}

func ExampleTensor_TopK() {
	x := ember.FromSlice([]float32{0.1, 0.7, 0.2, 0.9}, ember.Shape{4})
	v, i := x.TopK(2, 0, true, true)
	fmt.Println(v.Float32s(), i.Int64s())
	// Output: [0.9 0.7] [3 1]
}

func ExampleTensor_Cumsum() {
	fmt.Println(ember.FromSlice([]int64{1, 2, 3, 4}, ember.Shape{4}).Cumsum(0).Int64s())
	// Output: [1 3 6 10]
}

func ExampleTensor_Tril() {
	causal := ember.Ones(ember.Shape{3, 3}).Tril(0)
	fmt.Println(causal.Float32s())
	// Output: [1 0 0 1 1 0 1 1 1]
}

func ExampleTensor_MaskedFill() {
	scores := ember.Zeros(ember.Shape{2, 2})
	mask := ember.Ones(ember.Shape{2, 2}).Triu(1).GtScalar(0)
	fmt.Println(scores.MaskedFill(mask, -1e9).Float32s())
	// Output: [0 -1e+09 0 0]
}

func ExampleEinsum() {
	a := ember.FromSlice([]float32{1, 2, 3, 4}, ember.Shape{2, 2})
	b := ember.FromSlice([]float32{5, 6, 7, 8}, ember.Shape{2, 2})
	fmt.Println(ember.Einsum("ij,jk->ik", a, b).Float32s())
	fmt.Println(ember.Einsum("ii->", a).Item())
	// Output:
	// [19 22 43 50]
	// 5
}

func ExampleMultinomial() {
	ember.ManualSeed(0)
	probs := ember.FromSlice([]float32{0, 1, 0, 1}, ember.Shape{4})
	draws := ember.Multinomial(probs, 2, false).Int64s() // distinct, never a zero weight
	fmt.Println(len(draws), draws[0] != draws[1], draws[0]%2 == 1 && draws[1]%2 == 1)
	// Output: 2 true true
}

func ExampleOneHot() {
	fmt.Println(ember.OneHot(ember.FromSlice([]int64{2, 0}, ember.Shape{2}), 3).Int64s())
	// Output: [0 0 1 1 0 0]
}
