package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// The special functions follow torch.special's: log|Γ(x)| is 0 at 1 and 2
// and log √π at 1/2; ψ(1) is −γ (Euler's constant); xlogy(0, 0) is 0.
func ExampleTensor_Lgamma() {
	x := ember.FromSlice([]float64{1, 2, 0.5}, nil)
	fmt.Printf("%.6f\n", x.Lgamma().Float64s())
	fmt.Printf("%.6f\n", ember.Scalar(1, ember.Dtype(ember.Float64)).Digamma().Item())
	fmt.Printf("%.6f\n", ember.FromSlice([]float64{0, 2}, nil).Xlogy(ember.FromSlice([]float64{0, 3}, nil)).Float64s())
	// Output:
	// [0.000000 0.000000 0.572365]
	// -0.577216
	// [0.000000 2.197225]
}
