package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// Unique gives the sorted distinct values, where each element went and how
// often each value occurs, as torch.unique(x, return_inverse=True,
// return_counts=True).
func ExampleTensor_Unique() {
	x := ember.FromSlice([]int64{3, 1, 3, 2, 1, 3}, ember.Shape{6})
	values, inverse, counts := x.Unique()
	fmt.Println(values)
	fmt.Println(inverse)
	fmt.Println(counts)
	// Output:
	// tensor([1, 2, 3])
	// tensor([2, 0, 2, 1, 0, 2])
	// tensor([2, 1, 3])
}

// Quantile with a 1-D q puts the quantiles first; Dims picks the one dim
// reduced, as torch.quantile(x, q, dim=1). MedianDim is the lower median
// with its position.
func ExampleTensor_Quantile() {
	x := ember.FromSlice([]float32{1, 2, 3, 4, 10, 0, 5, 7}, ember.Shape{2, 4})
	q := ember.FromSlice([]float32{0.25, 0.5}, ember.Shape{2})
	fmt.Println(x.Quantile(q, "linear", ember.Dims(1)))
	fmt.Println(x.QuantileScalar(0.5, "lower", ember.Dims(1)))
	v, i := x.MedianDim(1, false)
	fmt.Println(v, i)
	// Output:
	// tensor([[1.7500, 3.7500],
	//         [2.5000, 6.0000]])
	// tensor([2., 5.])
	// tensor([2., 5.]) tensor([1, 2])
}

// Cdist gives the distances between the rows of two matrices, as
// torch.cdist(a, b, p).
func ExampleCdist() {
	a := ember.FromSlice([]float32{0, 0, 1, 1}, ember.Shape{2, 2})
	b := ember.FromSlice([]float32{3, 4, 1, 0, 0, 1}, ember.Shape{3, 2})
	fmt.Println(ember.Cdist(a, b, 2, ""))
	fmt.Println(ember.Cdist(a, b, 1, ""))
	fmt.Println(ember.CosineSimilarity(a.Narrow(0, 1, 1), b, 1, 1e-8))
	// Output:
	// tensor([[5.0000, 1.0000, 1.0000],
	//         [3.6056, 1.0000, 1.0000]])
	// tensor([[7., 1., 1.],
	//         [5., 1., 1.]])
	// tensor([0.9899, 0.7071, 0.7071])
}
