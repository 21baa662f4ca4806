package data_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
)

// Split a dataset 80/20 into training and validation sets, with the same
// indices as torch.utils.data.random_split(ds, [0.8, 0.2],
// generator=torch.Generator().manual_seed(42)).
func ExampleRandomSplit() {
	x := ember.Arange(0, 20, 1).Reshape(10, 2)
	y := ember.Arange(0, 10, 1)
	ds, err := data.NewTensorDataset(x, y)
	if err != nil {
		panic(err)
	}
	parts := data.RandomSplit(ds, 42, 0.8, 0.2)
	train, val := parts[0], parts[1]
	fmt.Println(train.Len(), val.Len())
	fmt.Println(val.Indices)
	// Output:
	// 8 2
	// [3 7]
}
