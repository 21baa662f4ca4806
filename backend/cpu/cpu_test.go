package cpu_test

import (
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/backendtest"
)

func TestConformance(t *testing.T) { backendtest.Run(t, ember.CPU) }
