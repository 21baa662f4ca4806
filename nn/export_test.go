package nn

import "github.com/emberml/ember"

// ReplicaOn exposes replicaOn to the external tests.
func ReplicaOn(m Module, dev ember.Device) Module { return replicaOn(m, dev) }
