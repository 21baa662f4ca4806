package meta_test

import (
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/backendtest"
)

func TestConformanceShapes(t *testing.T) { backendtest.RunShapes(t, ember.Meta) }
