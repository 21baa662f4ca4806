package nn_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/dist"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// Every process of a job (started by `ember launch`, torchrun or SLURM)
// runs the same program, dist.InitProcessGroup reading its rank from the
// environment; here, a group of one process. Under NoSync a backward only
// accumulates; the next one all-reduces (averages) the sum.
func ExampleNewDistributedDataParallel() {
	g, err := dist.InitProcessGroup("cpu", dist.Options{WorldSize: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	m := nn.NewLinear(3, 1, false)
	d, err := nn.NewDistributedDataParallel(m, nn.WithProcessGroup(g))
	if err != nil {
		fmt.Println(err)
		return
	}
	opt := optim.NewSGD(optim.ModuleParams(m), nil, 0.1, 0, 0, 0, false)
	x := ember.Ones(ember.Shape{4, 3})
	d.NoSync(func() { d.Forward(x).Sum().Backward() }) // local: 4 per weight
	d.Forward(x).Sum().Backward()                      // 4 more, then the average over the ranks
	fmt.Println(m.Weight.Grad())
	opt.Step()
	// Output:
	// tensor([[8., 8., 8.]])
}
