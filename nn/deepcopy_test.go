package nn

import (
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// DeepCopy is copy.deepcopy: the copy's parameters and buffers are its
// own (a change to the original does not reach it), keep requires-grad,
// and a nil module is refused.
func TestDeepCopy(t *testing.T) {
	m := NewSequential(NewLinear(2, 3, true), NewBatchNorm1d(3))
	c := DeepCopy(m).(*Sequential)
	m.Parameters()[0].Detach().FillInPlace(7)
	m.Buffers()[0].Detach().FillInPlace(5)
	if v := c.Parameters()[0].Detach().Float64s()[0]; v == 7 {
		t.Error("the copy shares the weight")
	}
	if v := c.Buffers()[0].Detach().Float64s()[0]; v != 0 {
		t.Errorf("the copy's running mean is %v, want 0", v)
	}
	if !c.Parameters()[0].RequiresGrad() || len(c.Parameters()) != 4 || len(c.Buffers()) != 3 {
		t.Errorf("copy: %d parameters, %d buffers", len(c.Parameters()), len(c.Buffers()))
	}
	testenv.Raises[*ember.ValueError](t, "nil", func() { DeepCopy(nil) })
}
