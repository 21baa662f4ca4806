package optim_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/optim"
)

// Fine-tuning with parameter groups, as torch.optim.SGD([{'params':
// backbone, 'lr': 1e-3, 'weight_decay': 0}, {'params': head}], lr=0.1,
// momentum=0.9, weight_decay=1e-4): the backbone learns slowly and
// without weight decay, the head at the default rate; a schedule decays
// each group from its own rate.
func ExampleSGDGroups() {
	backbone := ember.Ones(ember.Shape{2}, ember.WithGrad())
	head := ember.Ones(ember.Shape{1}, ember.WithGrad())
	opt := optim.SGDGroups([]optim.Group{
		{Params: []optim.Param{{Name: "backbone", Tensor: backbone}}, Options: []optim.Option{optim.LR(1e-3), optim.WeightDecay(0)}},
		{Params: []optim.Param{{Name: "fc", Tensor: head}}},
	}, 0.1, optim.Momentum(0.9), optim.WeightDecay(1e-4))
	sched := optim.StepLR(opt, 1, 0.5)

	backbone.Sum().Add(head.Sum().MulScalar(2)).Backward() // gradients 1 and 2
	opt.Step()
	sched.Step()
	for _, g := range opt.ParamGroups() {
		o := g.Options()
		fmt.Printf("%s: lr %g, momentum %g, weight decay %g\n", g.Params()[0].Name, g.LR(), o.Momentum, o.WeightDecay)
	}
	fmt.Printf("%.5f %.5f\n", backbone.Float64s(), head.Float64s())
	// Output:
	// backbone: lr 0.0005, momentum 0.9, weight decay 0
	// fc: lr 0.05, momentum 0.9, weight decay 0.0001
	// [0.99900 0.99900] [0.79999]
}
