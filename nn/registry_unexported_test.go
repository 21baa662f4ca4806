package nn_test

import (
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// privMLP keeps its children in unexported fields, common Go style.
type privMLP struct {
	nn.Base
	fc1, fc2 *nn.Linear
	stray    *nn.Linear
}

func newPrivMLP() *privMLP {
	m := &privMLP{fc1: nn.NewLinear(4, 8, true), fc2: nn.NewLinear(8, 2, true)}
	m.Init(m)
	m.RegisterModule("fc1", m.fc1)
	m.RegisterModule("fc2", m.fc2)
	return m
}

func (m *privMLP) Forward(x *ember.Tensor) *ember.Tensor { return m.fc2.Forward(m.fc1.Forward(x)) }

// TestUnexportedChildFields: children in unexported fields bind to their
// fields as exported ones do (m.fc2 = ... replaces the head: 4·8+8 +
// 8·5+5 = 85 parameters), Check finds an unregistered one, and cutting a
// bound slice short removes its children (one Linear(2, 3) is 9).
func TestUnexportedChildFields(t *testing.T) {
	m := newPrivMLP()
	if n := nn.NumParameters(m); n != 58 {
		t.Fatalf("%d parameters, want 58", n)
	}
	m.fc2 = nn.NewLinear(8, 5, true)
	if n := nn.NumParameters(m); n != 85 {
		t.Errorf("after m.fc2 = Linear(8, 5): %d parameters, want 85", n)
	}
	if _, ok := m.StateDict()["fc2.weight"]; !ok || m.StateDict()["fc2.weight"].Shape()[0] != 5 {
		t.Errorf("fc2.weight in the state dict: %v", m.StateDict()["fc2.weight"])
	}
	m.stray = nn.NewLinear(2, 2, true)
	if err := nn.Check(m); err == nil || !strings.Contains(err.Error(), "field stray holds a *nn.Linear that is not registered") {
		t.Errorf("Check with an unregistered unexported child: %v", err)
	}
	s := nn.NewSequential(nn.NewLinear(2, 3, true), nn.NewLinear(3, 3, true), nn.NewLinear(3, 1, true))
	s.Layers = s.Layers[:1]
	if n := nn.NumParameters(s); n != 9 || strings.Count(s.String(), "Linear") != 1 {
		t.Errorf("after cutting Layers to one: %d parameters, want 9; %v", n, s)
	}
	s.SetModule("2", nn.NewLinear(3, 2, true)) // setattr(seq, "2", ...) after del seq[1:]
	if n := nn.NumParameters(s); n != 9+8 {
		t.Errorf("after SetModule on a cut slot: %d parameters, want 17", n)
	}
}
