package data_test

import (
	"fmt"

	"github.com/emberml/ember/data"
)

// Oversample rare classes: index i is drawn in proportion to weights[i],
// the same indices as torch.utils.data.WeightedRandomSampler([0.1, 0.5,
// 2.0, 1.0], 10, generator=torch.Generator().manual_seed(3)). Pass the
// sampler to NewLoader with WithSampler.
func ExampleNewWeightedRandomSampler() {
	s := data.NewWeightedRandomSampler([]float64{0.1, 0.5, 2.0, 1.0}, 10, true, 3)
	fmt.Println(s.Indices(0))
	// Output:
	// [1 2 3 2 3 2 2 2 2 3]
}
