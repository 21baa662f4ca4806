package cpu_test

import (
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/embertest"
)

func TestConformance(t *testing.T) { embertest.Run(t, ember.CPU) }
