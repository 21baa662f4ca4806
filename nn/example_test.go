package nn_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// DataParallel splits a batch of 5 over three devices (here all the CPU)
// as torch.chunk does, 2 + 2 + 1 rows, runs the replicas concurrently and
// concatenates their outputs; gradients land on the wrapped module.
func ExampleNewDataParallel() {
	ember.ManualSeed(0)
	m := nn.NewLinear(4, 2, true)
	dp := nn.NewDataParallel(m, ember.CPU, ember.CPU, ember.CPU)
	y := dp.Forward(ember.Ones(ember.Shape{5, 4}))
	fmt.Println(y.Shape(), ember.AllClose(y, m.Forward(ember.Ones(ember.Shape{5, 4})), 1e-6, 1e-6))
	y.Sum().Backward()
	fmt.Println(m.Weight.Grad()) // each weight's gradient: the sum of its input over 5 rows
	// Output:
	// [5, 2] true
	// tensor([[5., 5., 5., 5.],
	//         [5., 5., 5., 5.]])
}
