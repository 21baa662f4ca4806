package nn_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// head is a module of one's own whose Linear may not have been made yet.
type head struct {
	nn.Base
	FC *nn.Linear
}

func (h *head) Forward(x *ember.Tensor) *ember.Tensor {
	nn.CheckNil(h, "Forward")
	return h.FC.Forward(x)
}

// A module field that was never constructed is a *nn.ModuleError naming
// the type and method, not a nil dereference.
func ExampleCheckNil() {
	h := &head{}
	h.Init(h)
	err := ember.Try(func() { h.Forward(ember.Ones(ember.Shape{1, 2})) })
	fmt.Println(err)
	var none *head
	fmt.Println(ember.Try(func() { none.Forward(nil) }))
	// Output:
	// nn: Forward on *nn.Linear: called on a nil *nn.Linear (a module field that was never set?)
	// nn: Forward on *nn_test.head: called on a nil *nn_test.head (a module field that was never set?)
}
