package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// ScatterReduce reduces the values sent to the same position, as
// torch.scatter_reduce: here the largest score per group, with and without
// the initial value taking part.
func ExampleTensor_ScatterReduce() {
	groups := ember.FromSlice([]int64{0, 1, 0, 2, 1}, ember.Shape{5})
	scores := ember.FromSlice([]float32{0.5, 2, 1.5, -1, 0.25}, ember.Shape{5})
	init := ember.Zeros(ember.Shape{4})
	fmt.Println(init.ScatterReduce(0, groups, scores, "amax", true))
	fmt.Println(init.ScatterReduce(0, groups, scores, "amax", false))
	fmt.Println(init.ScatterReduce(0, groups, scores, "mean", false))
	// Output:
	// tensor([1.5000, 2.0000, 0.0000, 0.0000])
	// tensor([ 1.5000,  2.0000, -1.0000,  0.0000])
	// tensor([ 1.0000,  1.1250, -1.0000,  0.0000])
}

// IndexPut writes (or, with accumulate, adds) values at the positions that
// a tuple of index tensors names, as x.index_put_((rows, cols), v,
// accumulate=True); repeated positions accumulate.
func ExampleTensor_IndexPutInPlace() {
	x := ember.Zeros(ember.Shape{2, 3})
	rows := ember.FromSlice([]int64{0, 1, 0}, ember.Shape{3})
	cols := ember.FromSlice([]int64{2, 0, 2}, ember.Shape{3})
	x.IndexPutInPlace([]*ember.Tensor{rows, cols}, ember.FromSlice([]float32{1, 2, 3}, ember.Shape{3}), true)
	fmt.Println(x)
	// Output:
	// tensor([[0., 0., 4.],
	//         [2., 0., 0.]])
}

// Amax reduces several dims at once; its gradient is shared among ties
// (torch.amax), unlike MaxDim's, which goes to one index.
func ExampleTensor_Amax() {
	x := ember.FromSlice([]float64{1, 3, 3, 2}, ember.Shape{2, 2}).SetRequiresGrad(true)
	m := x.Amax(ember.Dims(0, 1))
	m.Backward()
	fmt.Println(m.Item(), x.Grad())
	// Output:
	// 3 tensor([[0.0000, 0.5000],
	//         [0.5000, 0.0000]], dtype=torch.float64)
}

// IsClose compares elementwise with torch.isclose's tolerances; Logaddexp
// adds probabilities in log space without overflow.
func ExampleIsClose() {
	a := ember.FromSlice([]float64{1, 1000, 0}, ember.Shape{3})
	b := ember.FromSlice([]float64{1 + 1e-9, 1000.1, 1e-9}, ember.Shape{3})
	fmt.Println(ember.IsClose(a, b, 1e-5, 1e-8, false))
	fmt.Println(a.Logaddexp(a))
	// Output:
	// tensor([ True, False,  True])
	// tensor([1.6931e+00, 1.0007e+03, 6.9315e-01], dtype=torch.float64)
}
