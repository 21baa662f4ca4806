// Package rawtensor lets ember's own packages (dist) reach a tensor's
// storage without copying it: a CPU tensor's backing slice, a CUDA tensor's
// device address. Package ember fills the hooks in its init; nothing else
// sets them. The parameters are *ember.Tensor values (typed any because
// package ember imports this one).
package rawtensor

import "github.com/emberml/ember/backend"

var (
	// View returns t's storage with its shape, strides and offset, in
	// elements. It panics, as any op does, on a released tensor.
	View func(t any) backend.View
	// Written records that t's elements were overwritten in place outside
	// ember's ops (it bumps t's version, so autograd refuses a saved
	// tensor that changed).
	Written func(t any)
)
