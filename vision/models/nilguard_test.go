package models_test

import (
	"testing"

	"github.com/emberml/ember/internal/nilguard/nilguardtest"
	"github.com/emberml/ember/vision/models"
)

// Every method of every module type on a nil receiver (a model field that
// was never constructed) panics with an *nn.ModuleError, and
// zz_nilguard.go is current (go generate).
func TestNilModules(t *testing.T) {
	nilguardtest.Check(t, (*models.BasicBlock)(nil), (*models.ResNet)(nil))
}
