package nn

import (
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// The realistic case: a struct model whose field was never constructed.
type netWithNilFC struct {
	Base
	FC *Linear
}

func (n *netWithNilFC) Forward(x *ember.Tensor) *ember.Tensor { return n.FC.Forward(x) }

func TestNilModuleField(t *testing.T) {
	n := &netWithNilFC{}
	n.Init(n)
	e := testenv.Raises[*ModuleError](t, "n.FC.Forward", func() { n.Forward(ember.Ones(ember.Shape{1, 2})) })
	if e.Error() != "nn: Forward on *nn.Linear: called on a nil *nn.Linear (a module field that was never set?)" {
		t.Error(e)
	}
	testenv.Raises[*ModuleError](t, "n.FC.Parameters", func() { n.FC.Parameters() })

	// registering the nil field is refused: it could not be bound
	e = testenv.Raises[*ModuleError](t, "RegisterModule(nil *Linear)", func() { n.RegisterModule("fc", n.FC) })
	if !strings.Contains(e.Msg, `"fc": nil module (a nil *nn.Linear)`) {
		t.Error(e)
	}
	testenv.Raises[*ModuleError](t, "RegisterModule(nil)", func() { n.RegisterModule("fc", nil) })
	testenv.Raises[*ModuleError](t, "SetModule(nil *Linear)", func() { n.SetModule("fc", (*Linear)(nil)) })

	// a registered field set to nil later is skipped (PyTorch's None)
	n.FC = NewLinear(2, 3, true)
	n.RegisterModule("fc", n.FC)
	if got := len(n.Parameters()); got != 2 {
		t.Fatalf("%d parameters, want 2", got)
	}
	n.FC = nil
	if got := len(n.Parameters()); got != 0 {
		t.Fatalf("%d parameters with FC nil, want 0", got)
	}
	// likewise an interface field holding a nil pointer
	s := NewSequential(NewLinear(2, 2, false), NewReLU())
	s.Layers[0] = (*Linear)(nil)
	if got := len(s.Parameters()); got != 0 || len(s.StateDict()) != 0 {
		t.Fatalf("%d parameters with layer 0 a nil *Linear, want 0", got)
	}
	e = testenv.Raises[*ModuleError](t, "Sequential.Forward with a nil layer", func() { s.Forward(ember.Ones(ember.Shape{1, 2})) })
	if e.Msg != "layer 0 is a nil module (a nil *nn.Linear)" {
		t.Error(e)
	}

	e = testenv.Raises[*ModuleError](t, "NumParameters(nil)", func() { NumParameters(nil) })
	testenv.Raises[*ModuleError](t, "NumParameters(nil *Linear)", func() { NumParameters((*Linear)(nil)) })
	if err := Check((*Linear)(nil)); err != nil {
		t.Errorf("Check(nil *Linear) = %v, want nil as Check(nil)", err)
	}
}

func TestNilModuleConstructors(t *testing.T) {
	var fc *Linear
	e := testenv.Raises[*ModuleError](t, "NewSequential", func() { NewSequential(NewReLU(), fc) })
	if e.Op != "NewSequential" || e.Msg != "layer 1 is a nil module (a nil *nn.Linear)" {
		t.Error(e)
	}
	testenv.Raises[*ModuleError](t, "NewSequential(nil)", func() { NewSequential(nil) })
	testenv.Raises[*ModuleError](t, "NewModuleList", func() { NewModuleList(fc) })
	testenv.Raises[*ember.ValueError](t, "NewDataParallel", func() { NewDataParallel(fc) })
	if _, err := NewDistributedDataParallel(fc); err == nil || !strings.Contains(err.Error(), "nil module") {
		t.Errorf("NewDistributedDataParallel(nil *Linear): %v", err)
	}
	var el *TransformerEncoderLayer
	testenv.Raises[*ember.ValueError](t, "NewTransformerEncoder(nil layer)", func() { NewTransformerEncoder(el, 2, nil) })
	// a nil *LayerNorm norm is no norm, as nil
	var ln *LayerNorm
	enc := NewTransformerEncoder(NewTransformerEncoderLayer(4, 2, FeedForward(8)), 1, ln)
	if enc.Norm != nil {
		t.Errorf("Norm = %v, want nil", enc.Norm)
	}
	for _, n := range enc.NamedParameters() {
		if strings.HasPrefix(n.Name, "norm.") {
			t.Errorf("parameter %s from a nil norm", n.Name)
		}
	}
}

// As PyTorch's nn.Sequential(...)[5]: IndexError, not a Go index panic.
func TestSequentialAtRange(t *testing.T) {
	a, b := NewReLU(), NewTanh()
	s := NewSequential(a, b)
	if s.At(-1) != b || s.At(0) != a || s.At(-2) != a {
		t.Fatal("At")
	}
	for _, i := range []int{2, -3, 100} {
		e := testenv.Raises[*ember.IndexError](t, "At", func() { s.At(i) })
		if e.Index != int64(i) || e.Size != 2 {
			t.Error(e)
		}
	}
	testenv.Raises[*ember.IndexError](t, "ModuleList.At", func() { NewModuleList().At(0) })
}
