package nn

import "github.com/emberml/ember"

// DeepCopy is copy.deepcopy of a module: the same structure (the same Go
// types, children and registration order) with copies of every parameter
// (keeping requires-grad) and buffer, on their devices; changing one
// changes nothing in the other. A module the reflection copy cannot make
// (see Replicator) panics with a *ReplicateError.
func DeepCopy(m Module) Module {
	if m == nil {
		panic(&ember.ValueError{Op: "nn.DeepCopy", Msg: "nil module"})
	}
	return cloneModule(m)
}
