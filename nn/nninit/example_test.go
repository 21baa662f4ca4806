package nninit_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/nn/nninit"
)

// Re-initialise a layer's weight as torch.nn.init.kaiming_normal_(w,
// mode="fan_out", nonlinearity="relu") and its bias as zeros_.
func Example() {
	ember.ManualSeed(0)
	conv := nn.NewConv2d(3, 8, 3)
	nninit.KaimingNormal(conv.Weight, 0, "fan_out", "relu")
	nninit.Zeros(conv.Bias)
	in, out := nninit.Fans(conv.Weight)
	fmt.Println(in, out, conv.Bias.Sum().Item(), conv.Weight.RequiresGrad())
	fmt.Printf("%.4f\n", nninit.CalculateGain("leaky_relu", 0.2))
	fmt.Println(nninit.Eye(ember.Empty(ember.Shape{2, 3})))
	// Output:
	// 27 72 0 true
	// 1.3868
	// tensor([[1., 0., 0.],
	//         [0., 1., 0.]])
}
