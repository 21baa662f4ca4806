package gpt2_test

import (
	"testing"

	"github.com/emberml/ember/internal/nilguard/nilguardtest"
	"github.com/emberml/ember/models/gpt2"
)

// Every method of every module type on a nil receiver (a model field that
// was never constructed) panics with an *nn.ModuleError, and
// zz_nilguard.go is current (go generate).
func TestNilModules(t *testing.T) {
	nilguardtest.Check(t, (*gpt2.Model)(nil), (*gpt2.Transformer)(nil), (*gpt2.Block)(nil), (*gpt2.Attention)(nil), (*gpt2.MLP)(nil), (*gpt2.Conv1D)(nil))
}
