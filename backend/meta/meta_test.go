package meta_test

import (
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/embertest"
)

func TestConformanceShapes(t *testing.T) { embertest.RunShapes(t, ember.Meta) }
