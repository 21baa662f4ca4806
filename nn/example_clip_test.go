package nn_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

func ExampleClipGradNorm() {
	p := ember.Zeros(ember.Shape{2}, ember.WithGrad())
	p.SetGrad(ember.FromSlice([]float32{3, 4}, ember.Shape{2}))
	total := nn.ClipGradNorm([]*ember.Tensor{p}, 1, 2) // the norm was 5: scaled by 1/5
	fmt.Printf("%.1f %.2f\n", total.Item(), p.Grad().Float32s())
	// Output: 5.0 [0.60 0.80]
}
